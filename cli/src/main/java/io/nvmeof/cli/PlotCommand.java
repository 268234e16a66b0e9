package io.nvmeof.cli;

import io.nvmeof.tools.BenchPlot;
import io.nvmeof.tools.BenchLog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code nvmeof plot LOG... -o out.svg}: fio-format logs (ours, from bench --write_lat_log and
 * --write_iops_log, or fio's own) drawn as IOPS and latency percentiles over time.
 */
@Command(name = "plot", mixinStandardHelpOptions = true,
        description = {"Draw fio-format logs (nvmeof bench --write_lat_log/--write_iops_log, or fio's) as an SVG:",
            "IOPS above (from *_iops.*.log, else counted from a per-I/O latency log), latency percentiles below",
            "(from *_lat.*.log or *_clat.*.log), per window of time."})
final class PlotCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "LOG", description = "fio log files: NAME_iops.N.log, NAME_lat.N.log, NAME_clat.N.log.")
    List<Path> logs;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "FILE.svg", description = "The SVG to write.")
    Path out;

    @Option(names = "--window", defaultValue = "1000", paramLabel = "MSEC",
            description = "Width of a point in ms (default: ${DEFAULT-VALUE}).")
    long window;

    @Option(names = "--title", description = "Chart title (default: the first log's name).")
    String title;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (window < 1) {
            throw new IllegalArgumentException("--window must be at least 1 ms");
        }
        if (!out.toString().endsWith(".svg")) {
            throw new IllegalArgumentException("--output writes SVG: name a .svg file, not " + out);
        }
        // per direction (0 read, 1 write): window index -> latencies, and IOPS values
        List<Map<Long, Histogram>> lat = List.of(new TreeMap<>(), new TreeMap<>());
        List<Map<Long, double[]>> iops = List.of(new TreeMap<>(), new TreeMap<>());
        Map<Long, Long> lastTime = new TreeMap<>(); // per window, the last time logged in it: where its point goes
        boolean anyIops = false;
        for (Path p : logs) {
            String n = p.getFileName().toString();
            boolean isIops = n.contains("_iops.");
            boolean isLat = n.contains("_lat.") || n.contains("_clat.");
            if (!isIops && !isLat) {
                throw new IllegalArgumentException(p + " is not an _iops, _lat or _clat log");
            }
            anyIops |= isIops;
            int lineNo = 0;
            for (String line : Files.readAllLines(p)) {
                lineNo++;
                if (line.isBlank()) {
                    continue;
                }
                String[] f = line.split(",");
                if (f.length < 3) {
                    throw new IOException(p + ":" + lineNo + ": not a fio log line: " + line);
                }
                long t;
                long v;
                int d;
                try {
                    t = Long.parseLong(f[0].trim());
                    v = Long.parseLong(f[1].trim());
                    d = Integer.parseInt(f[2].trim());
                } catch (NumberFormatException e) {
                    throw new IOException(p + ":" + lineNo + ": not a fio log line: " + line);
                }
                if (d != 0 && d != 1) {
                    continue; // trims and syncs: not plotted
                }
                long w = Math.max(0, (t - 1) / window);
                lastTime.merge(w, t, Math::max);
                if (isIops) {
                    double[] sumCount = iops.get(d).computeIfAbsent(w, k -> new double[2]);
                    sumCount[0] += v;
                    sumCount[1]++;
                } else {
                    lat.get(d).computeIfAbsent(w, k -> new Histogram(3)).recordValue(Math.max(1, v));
                }
            }
        }
        List<BenchLog.Window> windows = new ArrayList<>();
        for (int d = 0; d < 2; d++) {
            TreeMap<Long, Boolean> keys = new TreeMap<>();
            lat.get(d).keySet().forEach(k -> keys.put(k, true));
            iops.get(d).keySet().forEach(k -> keys.put(k, true));
            for (long w : keys.keySet()) {
                Histogram h = lat.get(d).get(w);
                double[] io = iops.get(d).get(w);
                long ios = anyIops ? (io == null ? 0 : Math.round(io[0] / io[1] * window / 1000.0))
                        : h == null ? 0 : h.getTotalCount();
                windows.add(new BenchLog.Window(lastTime.get(w), d == 1, ios, 0, h == null ? 0 : h.getMean(),
                        h == null ? 0 : h.getValueAtPercentile(50), h == null ? 0 : h.getValueAtPercentile(99),
                        h == null ? 0 : h.getValueAtPercentile(99.9), window));
            }
        }
        BenchPlot.svg(out, title != null ? title : logs.get(0).getFileName().toString(), windows);
        spec.commandLine().getOut().println("wrote " + out + " (" + windows.size() + " points)");
        return 0;
    }
}
