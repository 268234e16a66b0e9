package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ctrl-C during {@code nvmeof bench} ends the run as fio does: the report of what ran (fio's
 * JSON here, marked {@code "interrupted": true}, its runtime what ran), then exit 130. Before,
 * SIGINT threw the run away and printed nothing.
 */
class BenchInterruptTest {
    static final String NQN = "nqn.2026-12.io.nvmeof:bench-int";

    @Test
    void sigintPrintsTheReportOfWhatRanThenExits130(@TempDir Path dir) throws Exception {
        Path socket = dir.resolve("rpc.sock");
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, "--listen", "tcp://127.0.0.1:0", "--subsystem", NQN,
                "--namespace", "ram:64M", "--rpc-socket", socket.toString())) {
            t.await("the management API", () -> t.out().contains("management API on"));
            Process bench = new ProcessBuilder(TargetProcess.javaWith(java.util.List.of(), "bench", t.uri(NQN),
                    "--runtime", "120", "--output-format", "json")).start();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            Thread a = copy(bench.getInputStream(), out);
            Thread b = copy(bench.getErrorStream(), err);
            Awaitility.await("the bench's reads at the target").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                    .until(() -> reads(socket) > 1000);
            new ProcessBuilder("kill", "-INT", Long.toString(bench.pid())).start().waitFor();
            assertTrue(bench.waitFor(60, TimeUnit.SECONDS), "bench did not end after SIGINT");
            a.join();
            b.join();
            String errText = err.toString(StandardCharsets.UTF_8);
            assertEquals(130, bench.exitValue(), errText);
            assertTrue(errText.contains("terminating on signal"), errText);
            JsonNode report = new ObjectMapper().readTree(out.toString(StandardCharsets.UTF_8));
            assertTrue(report.path("interrupted").asBoolean(), report.toString());
            JsonNode read = report.path("jobs").get(0).path("read");
            assertTrue(read.path("io_bytes").asLong() > 0, "what ran is reported: " + read);
            long runtimeMs = report.path("jobs").get(0).path("read").path("runtime").asLong();
            assertTrue(runtimeMs > 0 && runtimeMs < 120_000, "the runtime is what ran: " + runtimeMs + " ms");
        }
    }

    private static long reads(Path socket) throws Exception {
        long n = 0;
        for (JsonNode s : ManagementApiTest.rpc(socket, "get_stats", "{}").get("result").path("subsystems")) {
            for (JsonNode ns : s.path("namespaces")) {
                n += ns.path("read").path("commands").asLong();
            }
        }
        return n;
    }

    private static Thread copy(InputStream in, ByteArrayOutputStream to) {
        Thread t = new Thread(() -> {
            try {
                in.transferTo(to);
            } catch (java.io.IOException e) {
                // the process ended
            }
        });
        t.start();
        return t;
    }
}
