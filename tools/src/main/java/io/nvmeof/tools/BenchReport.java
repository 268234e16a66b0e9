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
    public static final double[] PERCENTILES = {1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
    /** The text report's percentiles unless told. */
    private static final double[] TEXT_PERCENTILES = {50, 90, 99, 99.9, 99.99};
    /** fio's limit on percentile_list's length. */
    public static final int MAX_PERCENTILES = 20;

    /** fio's percentile_list ("99:99.9:99.99"): each 0..100, at most 20; throws naming the option. */
    public static double[] percentiles(String list) {
        String[] parts = list.split(":");
        if (parts.length > MAX_PERCENTILES) {
            throw new IllegalArgumentException("--percentile_list takes at most " + MAX_PERCENTILES + " values, as fio's: "
                    + parts.length + " given");
        }
        double[] out = new double[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                out[i] = Double.parseDouble(parts[i].trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--percentile_list: '" + parts[i] + "' is not a number (give"
                        + " percentiles separated by ':', as 99:99.9:99.99)");
            }
            if (!(out[i] >= 0 && out[i] <= 100)) {
                throw new IllegalArgumentException("--percentile_list: " + parts[i] + " is not between 0 and 100");
            }
        }
        return out;
    }

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
        text(out, jobName, r, null);
    }

    /** What ran before the measured part, or null for nothing. */
    static String rampLine(Bench.Ramp ramp) {
        if (ramp.nanos() == 0) {
            return null;
        }
        double sec = ramp.nanos() / 1e9;
        if (!ramp.auto()) {
            return String.format(Locale.ROOT, "ramp: %.1f s unmeasured (--ramp_time)", sec);
        }
        return String.format(Locale.ROOT, "warm-up: %.1f s unmeasured before the runtime, %s (--ramp_time=0 measures from"
                + " the first I/O)", sec, ramp.settled() ? "until the rate settled and the JIT had compiled the I/O path"
                : "the most it takes: the rate had not settled");
    }

    /** The same, with the latency percentiles {@code percentiles} (fio's percentile_list) instead of the usual five. */
    public static void text(PrintWriter out, String jobName, Bench.Result r, double[] percentiles) {
        out.printf(Locale.ROOT, "%s: (rw=%s, bs=%s, iodepth=%d)%n", jobName, r.pattern().fioName, r.bs(), r.iodepth());
        String ramp = rampLine(r.ramp());
        if (ramp != null) {
            out.println("  " + ramp);
        }
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
            StringBuilder p = new StringBuilder("    lat percentiles (usec):");
            String sep = " ";
            for (double q : percentiles != null ? percentiles : TEXT_PERCENTILES) {
                // two decimals as fio, more where the percentile has them (99.999th)
                String name = Math.abs(q * 100 - Math.rint(q * 100)) < 1e-9 ? String.format(Locale.ROOT, "%.2f", q)
                        : java.math.BigDecimal.valueOf(q).stripTrailingZeros().toPlainString();
                p.append(String.format(Locale.ROOT, "%s%sth=[%.1f]", sep, name, h.getValueAtPercentile(q) / 1e3));
                sep = ", ";
            }
            out.println(p);
            BenchSamples sm = d.samples();
            if (sm.count() > 0) {
                double[] kib = sm.kibPerSecond();
                double[] iops = sm.iops();
                out.printf(Locale.ROOT, "   bw (  KiB/s): min=%d, max=%d, avg=%.2f, stdev=%.2f, samples=%d%n",
                        Math.round(BenchSamples.min(kib)), Math.round(BenchSamples.max(kib)), BenchSamples.mean(kib),
                        BenchSamples.stddev(kib), sm.count());
                out.printf(Locale.ROOT, "   iops        : min=%d, max=%d, avg=%.2f, stdev=%.2f, samples=%d%n",
                        Math.round(BenchSamples.min(iops)), Math.round(BenchSamples.max(iops)), BenchSamples.mean(iops),
                        BenchSamples.stddev(iops), sm.count());
            }
        }
        ProcessUsage u = r.usage();
        out.printf(Locale.ROOT, "  cpu          : usr=%.2f%%, sys=%.2f%%, ctx=%d, majf=%d, minf=%d%n",
                u.userPercent(r.elapsedNanos()), u.systemPercent(r.elapsedNanos()), u.contextSwitches(), u.majorFaults(),
                u.minorFaults());
        out.flush();
    }

    /**
     * fio's closing block, "Run status group 0 (all jobs)": per direction, the bandwidth of all
     * jobs together (their bytes over the longest run), each job's lowest and highest, the bytes
     * moved and the shortest and longest run.
     */
    public static void groupStatus(PrintWriter out, List<Bench.Result> jobs) {
        out.println();
        out.println("Run status group 0 (all jobs):");
        for (boolean write : new boolean[] {false, true}) {
            long bytes = 0;
            long longest = 0;
            long shortest = Long.MAX_VALUE;
            double min = Double.MAX_VALUE;
            double max = 0;
            for (Bench.Result r : jobs) {
                Bench.Direction d = write ? r.write() : r.read();
                if (d.ios() == 0) {
                    continue;
                }
                bytes += d.bytes();
                longest = Math.max(longest, r.elapsedNanos());
                shortest = Math.min(shortest, r.elapsedNanos());
                double bps = d.bytesPerSecond(r.elapsedNanos());
                min = Math.min(min, bps);
                max = Math.max(max, bps);
            }
            if (bytes == 0) {
                continue;
            }
            double all = bytes * 1e9 / longest;
            out.printf(Locale.ROOT, "  %s: bw=%s (%s), %s-%s (%s-%s), io=%s (%s), run=%d-%dmsec%n", write ? "WRITE" : " READ",
                    binary(all) + "/s", decimal(all) + "/s", binary(min) + "/s", binary(max) + "/s", decimal(min) + "/s",
                    decimal(max) + "/s", binary(bytes), decimal(bytes), shortest / 1_000_000, longest / 1_000_000);
        }
        out.flush();
    }

    /** fio's sizes: KiB, MiB or GiB with up to four digits. */
    private static String binary(double v) {
        return scaled(v, 1024, new String[] {"B", "KiB", "MiB", "GiB", "TiB"});
    }

    private static String decimal(double v) {
        return scaled(v, 1000, new String[] {"B", "kB", "MB", "GB", "TB"});
    }

    private static String scaled(double v, double base, String[] units) {
        int u = 0;
        while (v >= 10_000 && u < units.length - 1) {
            v /= base;
            u++;
        }
        return String.format(Locale.ROOT, v >= 100 || u == 0 ? "%.0f%s" : "%.1f%s", v, units[u]);
    }

    private static ObjectNode latency(ObjectMapper m, Histogram h, double[] percentiles) {
        return latency(m, h, percentiles, false);
    }

    /** fio's latency object; with {@code bins} (json+) every latency seen, in ns, and how often. */
    private static ObjectNode latency(ObjectMapper m, Histogram h, double[] percentiles, boolean bins) {
        ObjectNode n = m.createObjectNode();
        boolean any = h.getTotalCount() > 0;
        n.put("min", any ? h.getMinValue() : 0);
        n.put("max", any ? h.getMaxValue() : 0);
        n.put("mean", any ? h.getMean() : 0.0);
        n.put("stddev", any ? h.getStdDeviation() : 0.0);
        n.put("N", h.getTotalCount());
        if (percentiles != null && any) {
            ObjectNode p = n.putObject("percentile");
            for (double q : percentiles) {
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

    /** A direction this tool never drives (fio's trim here): fio's object, all zero. */
    private static ObjectNode idle(ObjectMapper m) {
        return direction(m, new Bench.Result(null, "", 0, 1, null, null, new long[0], ProcessUsage.NONE, Bench.Ramp.NONE),
                new Bench.Direction(0, 0, new Histogram(3), BenchSamples.NONE), false, 0, PERCENTILES);
    }

    private static ObjectNode direction(ObjectMapper m, Bench.Result r, Bench.Direction d, boolean bins, double aggKib,
                                        double[] percentiles) {
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
        n.set("slat_ns", latency(m, new Histogram(3), null));
        n.set("clat_ns", latency(m, h, percentiles, bins));
        n.set("lat_ns", latency(m, h, percentiles));
        // fio's samples of bandwidth (KiB/s) and IOPS, a value every 500 ms
        BenchSamples sm = d.samples();
        n.put("bw_min", Math.round(BenchSamples.min(sm.kibPerSecond())));
        n.put("bw_max", Math.round(BenchSamples.max(sm.kibPerSecond())));
        n.put("bw_agg", aggKib > 0 && active ? 100.0 * (bps / 1024) / aggKib : 0.0);
        n.put("bw_mean", BenchSamples.mean(sm.kibPerSecond()));
        n.put("bw_dev", BenchSamples.stddev(sm.kibPerSecond()));
        n.put("bw_samples", sm.count());
        n.put("iops_min", Math.round(BenchSamples.min(sm.iops())));
        n.put("iops_max", Math.round(BenchSamples.max(sm.iops())));
        n.put("iops_mean", BenchSamples.mean(sm.iops()));
        n.put("iops_stddev", BenchSamples.stddev(sm.iops()));
        n.put("iops_samples", sm.count());
        return n;
    }

    /** fio's latency_ns, latency_us and latency_ms: the share of I/Os whose latency is below each bound (and above the one before). */
    private static void latencyBuckets(ObjectNode job, Histogram h) {
        long[] bounds = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};
        String[] units = {"latency_ns", "latency_us", "latency_ms"};
        long[] scale = {1, 1000, 1_000_000};
        double total = h.getTotalCount();
        for (int u = 0; u < units.length; u++) {
            ObjectNode o = job.putObject(units[u]);
            long lower = u == 0 ? 0 : 1000 * scale[u - 1];
            long[] all = u == 2 ? new long[] {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000} : bounds;
            for (long b : all) {
                long upper = b * scale[u];
                o.put(Long.toString(b), share(h, lower, upper, total));
                lower = upper;
            }
            if (u == 2) {
                o.put(">=2000", share(h, lower, Long.MAX_VALUE, total));
            }
        }
    }

    /** Percent of the histogram's values in [lower, upper) nanoseconds. */
    private static double share(Histogram h, long lower, long upper, double total) {
        if (total == 0) {
            return 0.0;
        }
        long n = 0;
        for (HistogramIterationValue v : h.recordedValues()) {
            long x = v.getValueIteratedTo();
            if (x >= lower && x < upper) {
                n += v.getCountAddedInThisIterationStep();
            }
        }
        return 100.0 * n / total;
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
        json(out, jobName, results, uri, rwmixread, bins, interrupted, PERCENTILES);
    }

    /** The same, with the latency percentiles {@code percentiles} (fio's percentile_list). */
    public static void json(PrintWriter out, String jobName, List<Bench.Result> results, String uri, int rwmixread, boolean bins,
                            boolean interrupted, double[] percentiles) {
        ObjectMapper m = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        ObjectNode root = m.createObjectNode();
        root.put("fio version", "nvmeof-java");
        long nowMs = System.currentTimeMillis();
        root.put("timestamp", nowMs / 1000);
        root.put("timestamp_ms", nowMs);
        root.put("time", new Date().toString());
        if (interrupted) {
            root.put("interrupted", true);
        }
        ObjectNode options = root.putObject("global options");
        options.put("filename", uri);
        ArrayNode jobs = root.putArray("jobs");
        // each job's share of the bandwidth of all (fio's bw_agg, of its group)
        double readKib = 0;
        double writeKib = 0;
        for (Bench.Result r : results) {
            readKib += r.read().bytesPerSecond(r.elapsedNanos()) / 1024;
            writeKib += r.write().bytesPerSecond(r.elapsedNanos()) / 1024;
        }
        for (Bench.Result r : results) {
            job(jobs.addObject(), jobName, r, rwmixread, m, bins, readKib, writeKib, percentiles);
        }
        out.println(root.toPrettyString());
        out.flush();
    }

    private static void job(ObjectNode job, String jobName, Bench.Result r, int rwmixread, ObjectMapper m, boolean bins,
                            double readKib, double writeKib, double[] percentiles) {
        job.put("jobname", jobName);
        job.put("groupid", 0);
        job.put("error", 0);
        job.put("eta", 0);
        ObjectNode jo = job.putObject("job options");
        jo.put("rw", r.pattern().fioName);
        if (r.pattern().mixed) {
            jo.put("rwmixread", Integer.toString(rwmixread));
        }
        jo.put(r.bs().matches("\\d+") ? "bs" : "bssplit", r.bs());
        jo.put("iodepth", Integer.toString(r.iodepth()));
        if (r.ramp().nanos() > 0) {
            jo.put("ramp_time", String.format(Locale.ROOT, "%.3f", r.ramp().nanos() / 1e9));
        }
        job.put("elapsed", Math.max(1, r.elapsedNanos() / 1_000_000_000L));
        job.set("read", direction(m, r, r.read(), bins, readKib, percentiles));
        job.set("write", direction(m, r, r.write(), bins, writeKib, percentiles));
        job.set("trim", idle(m));
        ObjectNode sync = job.putObject("sync");
        sync.put("total_ios", 0);
        sync.set("lat_ns", latency(m, new Histogram(3), null));
        job.put("job_runtime", r.elapsedNanos() / 1_000_000);
        // the whole process's CPU (one JVM runs every job), as a share of one core over the run
        ProcessUsage u = r.usage();
        job.put("usr_cpu", u.userPercent(r.elapsedNanos()));
        job.put("sys_cpu", u.systemPercent(r.elapsedNanos()));
        job.put("ctx", u.contextSwitches());
        job.put("majf", u.majorFaults());
        job.put("minf", u.minorFaults());
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
        // each submission and each completion is handled one I/O at a time: all in fio's "4" (1 to 4 per call)
        for (String k : new String[] {"iodepth_submit", "iodepth_complete"}) {
            ObjectNode o = job.putObject(k);
            for (String b : new String[] {"0", "4", "8", "16", "32", "64", ">=64"}) {
                o.put(b, b.equals("4") && total > 0 ? 100.0 : 0.0);
            }
        }
        latencyBuckets(job, r.latency());
        job.put("latency_depth", r.iodepth());
        job.put("latency_target", 0);
        job.put("latency_percentile", 100.0);
        job.put("latency_window", 0);
    }
}
