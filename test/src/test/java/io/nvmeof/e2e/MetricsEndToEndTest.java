package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.initiator.Command;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.protocol.NvmOpcode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The target's Prometheus endpoint as an operator uses it: scraped while a bench runs, its
 * counters only grow, and afterwards they agree exactly with what the bench says it did;
 * failures are counted by status; {@code nvmeof top} shows the same.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class MetricsEndToEndTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:metrics";
    @TempDir
    Path dir;
    final HttpClient http = HttpClient.newHttpClient();

    String scrape(String url) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        return r.body();
    }

    /** The value of the one sample {@code name{labels}} (labels in the exposition's order), or 0 if absent. */
    static double sample(String text, String name, String labels) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name + labels) + " (\\S+)$").matcher(text);
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }

    static String ns(int nsid, String op) {
        return "{nsid=\"" + nsid + "\",op=\"" + op + "\",subsystem=\"" + NQN + "\"}";
    }

    @Test
    void scrapesDuringABenchAgreeWithTheBench() throws Exception {
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, "--listen", "tcp://127.0.0.1:0", "--subsystem", NQN,
                "--namespace", "ram:32M", "--namespace", "file:" + dir.resolve("ns2.img") + ",size=16M",
                "--metrics", "tcp://127.0.0.1:0")) {
            Pattern metricsLine = Pattern.compile("metrics on (http://\\S+/metrics)");
            t.await("the metrics endpoint", () -> metricsLine.matcher(t.out()).find());
            Matcher at = metricsLine.matcher(t.out());
            assertTrue(at.find(), t.out());
            String url = at.group(1);
            String idle = scrape(url);
            assertEquals(0, sample(idle, "nvmeof_namespace_commands_total", ns(2, "write")));
            assertTrue(idle.contains("jvm_memory_used_bytes"), "JVM metrics");
            assertTrue(idle.contains("process_cpu_seconds_total"), "process metrics");
            assertEquals(16 << 20, sample(idle, "nvmeof_namespace_size_bytes", "{nsid=\"2\",subsystem=\"" + NQN + "\"}"));

            // a bench bounded by I/Os, scraped while it runs
            CompletableFuture<TargetProcess.Run> bench = CompletableFuture.supplyAsync(() -> {
                try {
                    return TargetProcess.cli(120, "bench", t.uri(NQN, 2), "--rw", "randrw", "--rwmixread", "60",
                            "--bs", "4k", "--iodepth", "16", "--number_ios", "40000", "--output-format", "json");
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            List<Double> seen = new CopyOnWriteArrayList<>();
            AtomicReference<String> scraped = new AtomicReference<>();
            // a scrape every 50 ms until the bench has ended
            Awaitility.await("the bench").atMost(Duration.ofSeconds(150)).pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(50)).until(() -> {
                        boolean ended = bench.isDone();
                        String s = scrape(url);
                        double n = sample(s, "nvmeof_namespace_commands_total", ns(2, "read"))
                                + sample(s, "nvmeof_namespace_commands_total", ns(2, "write"));
                        if (n > 0 && sample(s, "nvmeof_connections", "") > 0) {
                            scraped.set(s);
                        }
                        seen.add(n);
                        return ended;
                    });
            String during = scraped.get();
            TargetProcess.Run b = bench.get();
            assertEquals(0, b.exit(), b.err());
            for (int i = 1; i < seen.size(); i++) {
                assertTrue(seen.get(i) >= seen.get(i - 1), "a counter went down: " + seen);
            }
            assertTrue(during != null, "no scrape saw the bench running: " + seen);
            assertTrue(during.contains("nvmeof_controller_connections{cntlid="), during);

            JsonNode job = new ObjectMapper().readTree(b.out()).get("jobs").get(0);
            String after = scrape(url);
            for (String op : new String[] {"read", "write"}) {
                long ios = job.get(op).get("total_ios").asLong();
                long bytes = job.get(op).get("io_bytes").asLong();
                assertTrue(ios > 0, op);
                assertEquals(ios, (long) sample(after, "nvmeof_namespace_commands_total", ns(2, op)), op + " commands");
                assertEquals(bytes, (long) sample(after, "nvmeof_namespace_bytes_total", ns(2, op)), op + " bytes");
                assertEquals(ios, (long) sample(after, "nvmeof_namespace_latency_seconds_count", ns(2, op)), op + " latencies");
                assertEquals(ios, (long) sample(after, "nvmeof_namespace_latency_seconds_bucket",
                        ns(2, op).replace("}", ",le=\"+Inf\"}")), op + " histogram");
                assertTrue(sample(after, "nvmeof_namespace_latency_seconds_sum", ns(2, op)) > 0, op + " latency sum");
            }
            assertEquals(0, sample(after, "nvmeof_namespace_commands_total", ns(1, "read")), "namespace 1 was idle");

            // a failed command is counted by its status: LBA Out of Range is SCT 0, SC 80h
            try (Controller c = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults())) {
                assertThrows(NvmeStatusException.class, () -> c.io(new Command("Read").opcode(NvmOpcode.READ.code).nsid(2)
                        .cdw(10, 4096).cdw(12, 0).dataIn(java.nio.ByteBuffer.allocateDirect(4096), 4096)));
            }
            String failed = scrape(url);
            assertEquals(1, sample(failed, "nvmeof_namespace_errors_total",
                    "{nsid=\"2\",status=\"0x0/0x80\",subsystem=\"" + NQN + "\"}"), failed);
            assertEquals(1, sample(failed, "nvmeof_subsystem_errors_total", "{status=\"0x0/0x80\",subsystem=\"" + NQN + "\"}"));

            // nvmeof top on a pipe: plain tables, the namespace busy while a bench runs. The bench
            // runs until top is done (a busy machine may take seconds to start either JVM), and
            // top starts once the target has counted the bench's first reads.
            Process load = new ProcessBuilder(TargetProcess.java("bench", t.uri(NQN, 1), "--rw", "randread", "--runtime", "100"))
                    .redirectErrorStream(true).redirectOutput(dir.resolve("load.out").toFile()).start();
            TargetProcess.Run top;
            try {
                t.await("the bench's first reads", () -> sample(scrape(url), "nvmeof_namespace_commands_total", ns(1, "read")) > 0);
                top = TargetProcess.cli(60, "top", url.replace("/metrics", ""), "--interval", "1", "--count", "3");
                assertTrue(load.isAlive(), "the bench still runs");
            } finally {
                load.destroy();
                load.waitFor(30, TimeUnit.SECONDS);
            }
            assertEquals(0, top.exit(), top.err());
            assertFalse(top.out().contains("\033["), "no terminal codes on a pipe");
            Matcher row = Pattern.compile("(?m)^" + Pattern.quote(NQN) + "\\s+1\\s+(\\d+)\\s").matcher(top.out());
            long busiest = 0;
            while (row.find()) {
                busiest = Math.max(busiest, Long.parseLong(row.group(1)));
            }
            assertTrue(busiest > 0, "read IOPS of namespace 1 while a bench reads it:\n" + top.out());
            assertTrue(top.out().contains("CNTLID"), top.out());
            assertEquals(0, t.stop());
            t.assertNoLeaks();
        }
    }

    @Test
    void aPasswordGuardsTheEndpointAndTopGivesIt() throws Exception {
        Path pw = Files.writeString(dir.resolve("metrics.password"), "correct horse\n");
        Files.setPosixFilePermissions(pw, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        Path cfg = dir.resolve("auth.json");
        Files.writeString(cfg, "{\"ports\": [{\"portid\": 1, \"trtype\": \"tcp\", \"traddr\": \"127.0.0.1\", \"trsvcid\": 0,"
                + " \"subsystems\": [\"" + NQN + "\"]}], \"subsystems\": [{\"nqn\": \"" + NQN + "\", \"namespaces\":"
                + " [{\"nsid\": 1, \"backend\": \"ram\", \"size\": \"1M\"}]}], \"metrics\": {\"listen\":"
                + " \"tcp://127.0.0.1:0\", \"user\": \"prometheus\", \"password_file\": \"metrics.password\"}}");
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, "--config", cfg.toString())) {
            Pattern metricsLine = Pattern.compile("metrics on (http://\\S+/metrics) \\(basic authentication\\)");
            String[] url = new String[1];
            t.await("the metrics endpoint", () -> {
                Matcher m = metricsLine.matcher(t.out());
                if (m.find()) {
                    url[0] = m.group(1);
                }
                return url[0] != null;
            });
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            java.net.http.HttpResponse<String> none = http.send(java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create(url[0])).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
            assertEquals(401, none.statusCode(), "a scrape without the password");
            TargetProcess.Run refused = TargetProcess.cli(60, "top", url[0], "--count", "1");
            assertEquals(1, refused.exit());
            assertTrue(refused.firstErrLine().contains("asks for a password"), refused.err());
            TargetProcess.Run top = TargetProcess.cli(60, "top", url[0], "--count", "1", "--user", "prometheus",
                    "--password-file", pw.toString());
            assertEquals(0, top.exit(), top.err());
            assertTrue(top.out().contains(NQN), top.out());
            assertEquals(0, t.stop());
        }
    }

    @Test
    void aBadMetricsAddressIsNamed() throws Exception {
        TargetProcess.Run r = TargetProcess.cli(30, "target", "--listen", "tcp://127.0.0.1:0", "--subsystem", NQN,
                "--namespace", "ram:1M", "--metrics", "udp://127.0.0.1:1");
        assertEquals(1, r.exit());
        assertTrue(r.firstErrLine().contains("--metrics 'udp://127.0.0.1:1' is not tcp://ADDR:PORT"), r.err());
        Path cfg = dir.resolve("bad.json");
        Files.writeString(cfg, "{\"ports\": [{\"portid\": 1, \"trtype\": \"tcp\", \"traddr\": \"127.0.0.1\", \"trsvcid\": 0,"
                + " \"subsystems\": []}], \"subsystems\": [], \"metrics\": 9748}");
        TargetProcess.Run c = TargetProcess.cli(30, "target", "--config", cfg.toString());
        assertEquals(1, c.exit());
        assertTrue(c.firstErrLine().contains("metrics"), c.err());
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            TargetProcess.Run busy = TargetProcess.cli(30, "target", "--listen", "tcp://127.0.0.1:0", "--subsystem", NQN,
                    "--namespace", "ram:1M", "--metrics", "tcp://127.0.0.1:" + taken.getLocalPort());
            assertEquals(1, busy.exit());
            assertTrue(busy.err().contains("nvmeof: metrics endpoint http://127.0.0.1:" + taken.getLocalPort()
                    + "/metrics: Address already in use"), busy.err());
        }
        TargetProcess.Run top = TargetProcess.cli(30, "top", "http://127.0.0.1:1", "--count", "1");
        assertEquals(1, top.exit());
        assertTrue(top.firstErrLine().contains("cannot reach http://127.0.0.1:1/metrics"), top.err());
    }
}
