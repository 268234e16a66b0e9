package io.nvmeof.tools;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.util.Date;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

/** Prints bench results the way fio does: its text summary, or its JSON layout. */
public final class BenchReport {
    /** fio's default completion-latency percentiles. */
    static final double[] PERCENTILES = {1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};

    private BenchReport() {
    }

    static String human(double v) {
        if (v >= 1e6) {
            return String.format(Locale.ROOT, "%.2fM", v / 1e6);
        }
        if (v >= 1e3) {
            return String.format(Locale.ROOT, "%.1fk", v / 1e3);
        }
        return String.format(Locale.ROOT, "%.0f", v);
    }

    public static void text(PrintWriter out, String jobName, Bench.Result r) {
        out.printf(Locale.ROOT, "%s: (rw=%s, bs=%s, iodepth=%d)%n", jobName, r.pattern().fioName, r.bs(), r.iodepth());
        // each direction that did I/O (a run that did none shows its pattern's own direction)
        boolean none = r.ios() == 0;
        for (boolean write : new boolean[] {false, true}) {
            Bench.Direction d = write ? r.write() : r.read();
            if (d.ios() == 0 && !(none && write == r.pattern().write)) {
                continue;
            }
            Histogram h = d.latency();
            double bps = d.bytesPerSecond(r.elapsedNanos());
            out.printf(Locale.ROOT, "  %s: IOPS=%s, BW=%.1fMiB/s (%.1fMB/s)(%.1fMiB/%dmsec)%n", write ? "write" : "read",
                    human(d.iops(r.elapsedNanos())), bps / (1 << 20), bps / 1e6, (double) d.bytes() / (1 << 20),
                    r.elapsedNanos() / 1_000_000);
            if (h.getTotalCount() == 0) {
                continue;
            }
            out.printf(Locale.ROOT, "    lat (usec): min=%.1f, max=%.1f, avg=%.2f, stdev=%.2f%n", h.getMinValue() / 1e3,
                    h.getMaxValue() / 1e3, h.getMean() / 1e3, h.getStdDeviation() / 1e3);
            out.printf(Locale.ROOT, "    lat percentiles (usec): 50.00th=[%.1f], 90.00th=[%.1f], 99.00th=[%.1f], 99.90th=[%.1f], 99.99th=[%.1f]%n",
                    h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(90) / 1e3, h.getValueAtPercentile(99) / 1e3,
                    h.getValueAtPercentile(99.9) / 1e3, h.getValueAtPercentile(99.99) / 1e3);
        }
        out.flush();
    }

    private static ObjectNode latency(ObjectMapper m, Histogram h, boolean withPercentiles) {
        return latency(m, h, withPercentiles, false);
    }

    /** fio's latency object; with {@code bins} (json+) every latency seen, in ns, and how often. */
    private static ObjectNode latency(ObjectMapper m, Histogram h, boolean withPercentiles, boolean bins) {
        ObjectNode n = m.createObjectNode();
        boolean any = h.getTotalCount() > 0;
        n.put("min", any ? h.getMinValue() : 0);
        n.put("max", any ? h.getMaxValue() : 0);
        n.put("mean", any ? h.getMean() : 0.0);
        n.put("stddev", any ? h.getStdDeviation() : 0.0);
        n.put("N", h.getTotalCount());
        if (withPercentiles && any) {
            ObjectNode p = n.putObject("percentile");
            for (double q : PERCENTILES) {
                p.put(String.format(Locale.ROOT, "%.6f", q), h.getValueAtPercentile(q));
            }
        }
        if (bins && any) {
            ObjectNode b = n.putObject("bins");
            for (HistogramIterationValue v : h.recordedValues()) {
                b.put(Long.toString(h.highestEquivalentValue(v.getValueIteratedTo())), v.getCountAddedInThisIterationStep());
            }
        }
        return n;
    }

    private static ObjectNode direction(ObjectMapper m, Bench.Result r, Bench.Direction d, boolean bins) {
        ObjectNode n = m.createObjectNode();
        boolean active = d.ios() > 0;
        Histogram h = d.latency();
        long ios = d.ios();
        long bytes = d.bytes();
        long runtimeMs = active ? r.elapsedNanos() / 1_000_000 : 0;
        double bps = active ? d.bytesPerSecond(r.elapsedNanos()) : 0;
        n.put("io_bytes", bytes);
        n.put("io_kbytes", bytes / 1024);
        n.put("bw_bytes", (long) bps);
        n.put("bw", (long) (bps / 1024));
        n.put("iops", active ? d.iops(r.elapsedNanos()) : 0.0);
        n.put("runtime", runtimeMs);
        n.put("total_ios", ios);
        n.put("short_ios", 0);
        n.put("drop_ios", 0);
        n.set("slat_ns", latency(m, new Histogram(3), false));
        n.set("clat_ns", latency(m, h, true, bins));
        n.set("lat_ns", latency(m, h, true));
        return n;
    }

    public static void json(PrintWriter out, String jobName, Bench.Result r, String uri) {
        json(out, jobName, List.of(r), uri, 50, false);
    }

    /**
     * fio's JSON: one entry in {@code jobs} per result (one in all with group_reporting); with
     * {@code bins}, fio's json+ (the completion latency bins too).
     */
    public static void json(PrintWriter out, String jobName, List<Bench.Result> results, String uri, int rwmixread, boolean bins) {
        json(out, jobName, results, uri, rwmixread, bins, false);
    }

    /** The same; {@code interrupted}: a signal ended the run early (said at the top, {@code "interrupted": true}). */
    public static void json(PrintWriter out, String jobName, List<Bench.Result> results, String uri, int rwmixread, boolean bins,
                            boolean interrupted) {
        ObjectMapper m = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        ObjectNode root = m.createObjectNode();
        root.put("fio version", "nvmeof-java");
        root.put("timestamp", System.currentTimeMillis() / 1000);
        root.put("time", new Date().toString());
        if (interrupted) {
            root.put("interrupted", true);
        }
        ObjectNode options = root.putObject("global options");
        options.put("filename", uri);
        ArrayNode jobs = root.putArray("jobs");
        for (Bench.Result r : results) {
            job(jobs.addObject(), jobName, r, rwmixread, m, bins);
        }
        out.println(root.toPrettyString());
        out.flush();
    }

    private static void job(ObjectNode job, String jobName, Bench.Result r, int rwmixread, ObjectMapper m, boolean bins) {
        job.put("jobname", jobName);
        job.put("groupid", 0);
        job.put("error", 0);
        ObjectNode jo = job.putObject("job options");
        jo.put("rw", r.pattern().fioName);
        if (r.pattern().mixed) {
            jo.put("rwmixread", Integer.toString(rwmixread));
        }
        jo.put(r.bs().matches("\\d+") ? "bs" : "bssplit", r.bs());
        jo.put("iodepth", Integer.toString(r.iodepth()));
        job.put("elapsed", Math.max(1, r.elapsedNanos() / 1_000_000_000L));
        job.put("job_runtime", r.elapsedNanos() / 1_000_000);
        job.set("read", direction(m, r, r.read(), bins));
        job.set("write", direction(m, r, r.write(), bins));
        // fio's iodepth_level: percentages of submissions by the I/Os in flight
        ObjectNode levels = job.putObject("iodepth_level");
        long total = 0;
        for (long c : r.depthLevels()) {
            total += c;
        }
        for (int i = 0; i < Bench.DEPTH_LEVELS.length; i++) {
            String key = i == Bench.DEPTH_LEVELS.length - 1 ? ">=" + Bench.DEPTH_LEVELS[i] : Integer.toString(Bench.DEPTH_LEVELS[i]);
            levels.put(key, total == 0 ? 0.0 : 100.0 * r.depthLevels()[i] / total);
        }
    }
}
