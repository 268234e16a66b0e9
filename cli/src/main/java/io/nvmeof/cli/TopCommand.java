package io.nvmeof.cli;

import io.nvmeof.tools.MetricsText.Sample;
import io.nvmeof.tools.MetricsText;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

/**
 * {@code nvmeof top URL}: a target's metrics endpoint as a live table, per namespace IOPS,
 * throughput, latency and errors, per controller its host, connections and commands in flight.
 */
@Command(name = "top", mixinStandardHelpOptions = true,
        description = {"Show a target's activity live, from its metrics endpoint (nvmeof target --metrics):",
            "per namespace IOPS, MB/s, mean and 99th percentile latency, errors; per controller its host,",
            "connections and commands in flight. Redraws in place on a terminal; one table per interval on a pipe."})
final class TopCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "URL", description = "The metrics endpoint, e.g. http://127.0.0.1:9748"
            + " (/metrics is added when no path is given).")
    String url;

    @Option(names = {"-d", "--interval"}, defaultValue = "1", paramLabel = "SECONDS",
            description = "Seconds between updates (default: ${DEFAULT-VALUE}).")
    double interval;

    @Option(names = {"-n", "--count"}, defaultValue = "0", paramLabel = "N",
            description = "Stop after N updates (default: run until interrupted).")
    int count;

    @Option(names = "--user", paramLabel = "USER", description = "HTTP basic authentication as USER (the endpoint's"
            + " \"metrics\": {\"user\"}); with --password-file.")
    String user;

    @Option(names = "--password-file", paramLabel = "FILE", description = "The password for --user, from FILE (which"
            + " others must not be able to read).")
    Path passwordFile;

    @Override
    public Integer call() throws Exception {
        if (!(interval >= 0.05 && interval <= 3600)) {
            throw new IllegalArgumentException("--interval must be between 0.05 and 3600 seconds: " + interval);
        }
        if (count < 0) {
            throw new IllegalArgumentException("--count must not be negative: " + count);
        }
        URI uri = endpoint(url);
        if ((user == null) != (passwordFile == null)) {
            throw new IllegalArgumentException("--user and --password-file go together");
        }
        authorization = user == null ? null : "Basic " + Base64.getEncoder().encodeToString((user + ":"
                + KeyFiles.readPrivate(passwordFile, "--password-file")).getBytes(StandardCharsets.UTF_8));
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        PrintWriter out = spec.commandLine().getOut();
        boolean terminal = System.console() != null;
        long intervalNanos = (long) (interval * 1e9);
        Snapshot before = scrape(http, uri);
        long next = before.nanos + intervalNanos;
        for (int shown = 0; count == 0 || shown < count; shown++) {
            long wait = next - System.nanoTime();
            if (wait > 0) {
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            }
            next += intervalNanos;
            Snapshot now = scrape(http, uri);
            if (terminal) {
                out.print("\033[H\033[2J");
            } else if (shown > 0) {
                out.println();
            }
            render(out, uri, before, now);
            out.flush();
            before = now;
        }
        return 0;
    }

    /** The Authorization header of every scrape, or null. */
    private String authorization;

    static URI endpoint(String s) {
        URI u = URI.create(s.contains("://") ? s : "http://" + s);
        if (!("http".equals(u.getScheme()) || "https".equals(u.getScheme())) || u.getHost() == null) {
            throw new IllegalArgumentException("'" + s + "' is not http[s]://HOST:PORT[/metrics]");
        }
        return u.getPath() == null || u.getPath().isEmpty() || u.getPath().equals("/") ? u.resolve("/metrics") : u;
    }

    /** One scrape: its samples and when it was taken. */
    record Snapshot(List<Sample> samples, long nanos) {
        double value(String name, Map<String, String> labels) {
            for (Sample s : samples) {
                if (s.name().equals(name) && s.labels().equals(labels)) {
                    return s.value();
                }
            }
            return 0;
        }

        double sum(String name) {
            double v = 0;
            for (Sample s : samples) {
                if (s.name().equals(name)) {
                    v += s.value();
                }
            }
            return v;
        }
    }

    private Snapshot scrape(HttpClient http, URI uri) throws IOException, InterruptedException {
        HttpResponse<String> r;
        try {
            HttpRequest.Builder req = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10));
            if (authorization != null) {
                req.header("Authorization", authorization);
            }
            r = http.send(req.build(), HttpResponse.BodyHandlers.ofString());
        } catch (ConnectException e) {
            throw new IOException("cannot reach " + uri + ": nothing listens there (nvmeof target --metrics"
                    + " tcp://ADDR:PORT serves it)", e);
        } catch (HttpTimeoutException e) {
            throw new IOException(uri + " did not answer within 10 s", e);
        }
        if (r.statusCode() == 401) {
            throw new IOException(uri + " asks for a password (HTTP 401): give --user and --password-file");
        }
        if (r.statusCode() != 200) {
            throw new IOException(uri + " answered HTTP " + r.statusCode());
        }
        return new Snapshot(MetricsText.parse(r.body()), System.nanoTime());
    }

    static void render(PrintWriter out, URI uri, Snapshot a, Snapshot b) {
        double secs = Math.max(1e-9, (b.nanos - a.nanos) / 1e9);
        out.printf("nvmeof top %s  %s  connections %.0f  buffers %s of %s in use, %.0f waiting  keep-alive expiries %.0f%n",
                uri, LocalTime.now().format(DateTimeFormatter.ofPattern("HH:mm:ss")),
                b.sum("nvmeof_connections"), mib(b.sum("nvmeof_buffer_budget_used_bytes")),
                mib(b.sum("nvmeof_buffer_budget_limit_bytes")), b.sum("nvmeof_buffer_budget_waiting"),
                b.sum("nvmeof_keep_alive_expiries_total"));
        out.printf("%-40s %5s %10s %10s %9s %9s %17s %17s %7s%n", "SUBSYSTEM", "NSID", "READ IO/s", "WRITE IO/s",
                "READ MB/s", "WRITE MB/s", "READ LAT avg/p99", "WRITE LAT avg/p99", "ERR/s");
        Map<String, Map<String, String>> namespaces = new TreeMap<>();
        for (Sample s : b.samples()) {
            if (s.name().equals("nvmeof_namespace_size_bytes")) {
                namespaces.put(s.label("subsystem") + " " + s.label("nsid"), s.labels());
            }
        }
        for (Map<String, String> ns : namespaces.values()) {
            double rIops = rate(a, b, "nvmeof_namespace_commands_total", ns, "read", secs);
            double wIops = rate(a, b, "nvmeof_namespace_commands_total", ns, "write", secs);
            double rMb = rate(a, b, "nvmeof_namespace_bytes_total", ns, "read", secs) / 1e6;
            double wMb = rate(a, b, "nvmeof_namespace_bytes_total", ns, "write", secs) / 1e6;
            double errors = 0;
            for (Sample s : b.samples()) {
                if (s.name().equals("nvmeof_namespace_errors_total") && s.label("subsystem").equals(ns.get("subsystem"))
                        && s.label("nsid").equals(ns.get("nsid"))) {
                    errors += s.value() - a.value(s.name(), s.labels());
                }
            }
            out.printf("%-40s %5s %10.0f %10.0f %9.1f %9.1f %17s %17s %7.0f%n", ns.get("subsystem"), ns.get("nsid"),
                    rIops, wIops, rMb, wMb, latency(a, b, ns, "read"), latency(a, b, ns, "write"), errors / secs);
        }
        out.printf("%-40s %6s %-48s %5s %9s%n", "SUBSYSTEM", "CNTLID", "HOST", "CONNS", "IN FLIGHT");
        for (Sample s : b.samples()) {
            if (s.name().equals("nvmeof_controller_connections")) {
                out.printf("%-40s %6s %-48s %5.0f %9.0f%n", s.label("subsystem"), s.label("cntlid"), s.label("host"),
                        s.value(), b.value("nvmeof_controller_commands_in_flight", s.labels()));
            }
        }
    }

    private static Map<String, String> with(Map<String, String> ns, String op) {
        Map<String, String> m = new TreeMap<>();
        m.put("subsystem", ns.get("subsystem"));
        m.put("nsid", ns.get("nsid"));
        m.put("op", op);
        return m;
    }

    private static double rate(Snapshot a, Snapshot b, String name, Map<String, String> ns, String op, double secs) {
        Map<String, String> l = with(ns, op);
        return Math.max(0, b.value(name, l) - a.value(name, l)) / secs;
    }

    /** Mean and 99th percentile latency over the interval, from the histogram's changes; "-" when idle. */
    static String latency(Snapshot a, Snapshot b, Map<String, String> ns, String op) {
        Map<String, String> l = with(ns, op);
        double n = b.value("nvmeof_namespace_latency_seconds_count", l) - a.value("nvmeof_namespace_latency_seconds_count", l);
        if (n <= 0) {
            return "-";
        }
        double mean = (b.value("nvmeof_namespace_latency_seconds_sum", l)
                - a.value("nvmeof_namespace_latency_seconds_sum", l)) / n;
        List<double[]> buckets = new ArrayList<>(); // {upper bound, cumulative count in the interval}
        for (Sample s : b.samples()) {
            if (s.name().equals("nvmeof_namespace_latency_seconds_bucket") && s.label("subsystem").equals(l.get("subsystem"))
                    && s.label("nsid").equals(l.get("nsid")) && s.label("op").equals(op)) {
                double le = s.label("le").equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(s.label("le"));
                buckets.add(new double[] {le, s.value() - a.value(s.name(), s.labels())});
            }
        }
        buckets.sort((x, y) -> Double.compare(x[0], y[0]));
        double p99 = Double.POSITIVE_INFINITY;
        for (double[] bk : buckets) {
            if (bk[1] >= 0.99 * n) {
                p99 = bk[0];
                break;
            }
        }
        return micros(mean) + "/" + (p99 == Double.POSITIVE_INFINITY ? ">10s" : "<" + micros(p99));
    }

    private static String micros(double seconds) {
        double us = seconds * 1e6;
        return us >= 10_000 ? String.format("%.0fms", us / 1000) : String.format("%.0fus", us);
    }

    private static String mib(double bytes) {
        return String.format("%.0f MiB", bytes / (1 << 20));
    }
}
