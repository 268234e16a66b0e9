package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Discovery;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.Nvmeof;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 55's target goal: one target (the launcher, as its service runs it) serves 4,096
 * namespaces across 256 subsystems, half null and half file; it starts in under 10 s; a reload
 * that changes one namespace among them, and a management call that adds one, are each applied
 * in under 1 s and touch that namespace alone (a host of another subsystem hears nothing); an
 * idle null namespace costs at most 16 KiB of heap and direct memory, and an idle controller
 * (admin and I/O queue) at most 64 KiB. Memory is the target's live heap after a full collection
 * ({@code jcmd GC.class_histogram}) and its direct memory (its metrics endpoint).
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ManyNamespacesTest {
    static final int SUBSYSTEMS = 256;
    static final int NULLS = 8;
    static final int FILES = 8;
    static final int CONTROLLERS = 1000;
    private static final Pattern METRICS = Pattern.compile("metrics on (http://\\S+/metrics)");

    @TempDir
    Path dir;

    static final String PREFIX = "nqn.2026-12.io.nvmeof:ns-";

    static String nqn(int s) {
        return PREFIX + s;
    }

    /** The configuration: SUBSYSTEMS subsystems of {@code nulls} null namespaces then FILES file ones, {@code sized} 2G. */
    String config(int nulls, String sized) {
        String nqns = IntStream.range(0, SUBSYSTEMS).mapToObj(s -> "\"" + nqn(s) + "\"").collect(Collectors.joining(","));
        StringBuilder subs = new StringBuilder();
        for (int s = 0; s < SUBSYSTEMS; s++) {
            List<String> ns = new ArrayList<>();
            for (int n = 1; n <= nulls; n++) {
                String size = (nqn(s) + "#" + n).equals(sized) ? "2G" : "1G";
                ns.add("{\"nsid\": " + n + ", \"backend\": \"null\", \"size\": \"" + size + "\"}");
            }
            for (int n = NULLS + 1; n <= NULLS + FILES; n++) {
                ns.add("{\"nsid\": " + n + ", \"backend\": \"file\", \"path\": \"" + dir.resolve("f" + s + "-" + n + ".img")
                        + "\", \"size\": \"1M\"}");
            }
            subs.append(s > 0 ? ",\n" : "").append("{\"nqn\": \"").append(nqn(s)).append("\", \"namespaces\": [")
                    .append(String.join(",", ns)).append("]}");
        }
        return """
                {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": [%s]}],
                 "metrics": "tcp://127.0.0.1:0",
                 "management": {"allowed_paths": ["%s"]},
                 "subsystems": [%s]}
                """.formatted(nqns, dir, subs);
    }

    /** The target's live heap after a full collection plus its direct memory (the JVM's and Netty's pool). */
    static long memory(TargetProcess t, String metricsUrl) throws Exception {
        Process jcmd = new ProcessBuilder("jcmd", Long.toString(t.process.pid()), "GC.class_histogram")
                .redirectErrorStream(true).start();
        String histogram = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(jcmd.waitFor(60, TimeUnit.SECONDS) && jcmd.exitValue() == 0, histogram);
        Matcher total = Pattern.compile("(?m)^Total\\s+\\d+\\s+(\\d+)\\s*$").matcher(histogram);
        assertTrue(total.find(), "jcmd's histogram has a total: " + histogram.lines().limit(5).toList());
        HttpClient http = HttpClient.newHttpClient();
        String m = null;
        for (int i = 0; i < 2; i++) { // the second sees whatever buffers the first one's answer left behind
            m = http.send(HttpRequest.newBuilder(URI.create(metricsUrl)).build(), HttpResponse.BodyHandlers.ofString()).body();
        }
        return Long.parseLong(total.group(1)) + metric(m, "jvm_buffer_pool_used_bytes\\{[^}]*pool=\"direct\"[^}]*\\}")
                + metric(m, "nvmeof_pooled_direct_memory_bytes");
    }

    private static long metric(String text, String name) {
        Matcher m = Pattern.compile("(?m)^" + name + " (\\S+)$").matcher(text);
        assertTrue(m.find(), name + " is scraped");
        return (long) Double.parseDouble(m.group(1));
    }

    @Test
    void fourThousandNamespacesOnOneTarget() throws Exception {
        Path config = dir.resolve("target.json");
        Files.writeString(config, config(NULLS, ""));
        long t0 = System.nanoTime();
        try (TargetProcess t = TargetProcess.startManaged(dir, config)) {
            double started = (System.nanoTime() - t0) / 1e9;
            t.await("the metrics endpoint", () -> METRICS.matcher(t.out()).find());
            Matcher mu = METRICS.matcher(t.out());
            assertTrue(mu.find());
            String metricsUrl = mu.group(1);
            JsonNode subs = ManagementApiTest.rpc(TargetProcess.managementSocket(dir), "get_subsystems", "{}").get("result");
            long namespaces = 0;
            for (JsonNode s : subs) {
                namespaces += s.get("namespaces").size();
            }
            assertEquals(SUBSYSTEMS * (NULLS + FILES), namespaces, "every namespace is served");
            assertTrue(started < 10, "started in " + started + " s with " + namespaces + " namespaces; at most 10 s");
            Discovery.Log log = Nvmeof.discover("nvme+tcp://127.0.0.1:" + t.port);
            assertEquals(SUBSYSTEMS, log.entries().stream().filter(e -> e.subsystemNqn().startsWith(PREFIX))
                    .count(), "the discovery log lists every subsystem");

            // memory of the null namespaces: the same target without them, after a reload that takes them out
            long full = memory(t, metricsUrl);
            Files.writeString(config, config(0, ""));
            reload(t, 1);
            long withoutNulls = memory(t, metricsUrl);
            double perNull = (full - withoutNulls) / (double) (SUBSYSTEMS * NULLS);
            Files.writeString(config, config(NULLS, ""));
            reload(t, 2);

            String changed = nqn(SUBSYSTEMS / 2);
            try (Controller same = Nvmeof.connect(t.uri(changed), ConnectOptions.defaults().ioQueues(1));
                 Controller other = Nvmeof.connect(t.uri(nqn(SUBSYSTEMS / 2 + 1)), ConnectOptions.defaults().ioQueues(1))) {
                List<Controller.AsyncEvent> heardSame = new CopyOnWriteArrayList<>();
                List<Controller.AsyncEvent> heardOther = new CopyOnWriteArrayList<>();
                same.onEvent(heardSame::add);
                other.onEvent(heardOther::add);
                assertEquals(1L << 30, same.namespace(1).size());

                // a reload that changes one namespace of 4,096
                Files.writeString(config, config(NULLS, changed + "#1"));
                double reloadSeconds = reload(t, 3);
                String line = reloadedLine(t, 3);
                assertTrue(!line.contains(";") && line.contains(changed), "the reload changed that namespace alone: " + line);
                assertTrue(reloadSeconds < 1, "the reload took " + reloadSeconds + " s; at most 1 s");
                t.await("the host of that subsystem sees the new size", () -> same.namespace(1).size() == 2L << 30);

                // a management call that adds one
                long a0 = System.nanoTime();
                JsonNode added = ManagementApiTest.rpc(TargetProcess.managementSocket(dir), "add_namespace",
                        "{\"nqn\": \"" + changed + "\", \"nsid\": 100, \"backend\": \"null\", \"size\": \"1G\"}");
                double addSeconds = (System.nanoTime() - a0) / 1e9;
                assertTrue(added.has("result"), added.toString());
                assertTrue(addSeconds < 1, "add_namespace took " + addSeconds + " s; at most 1 s");
                t.await("the host of that subsystem hears of the change", () -> heardSame.size() >= 2);
                same.namespace(100).write(0, ByteBuffer.allocateDirect(4096));
                Thread.sleep(500); // what would reach the other host has by now
                assertEquals(List.of(), heardOther, "a host of another subsystem hears of no change");
                System.out.printf("many namespaces: %d namespaces in %d subsystems started in %.2f s (JVM included);"
                        + " %.1f KiB per idle null namespace; reload of one in %.3f s, add_namespace in %.3f s%n",
                        namespaces, SUBSYSTEMS, started, perNull / 1024, reloadSeconds, addSeconds);
                assertTrue(perNull <= 16 << 10, "an idle null namespace holds " + perNull + " bytes; at most 16 KiB");
            }

            // idle controllers: an admin and an I/O queue each, over every subsystem, one host NQN each
            long before = memory(t, metricsUrl);
            List<Controller> open = new ArrayList<>();
            try {
                for (int i = 0; i < CONTROLLERS; i++) {
                    UUID id = new UUID(0x5ca1eL, i);
                    open.add(Nvmeof.connect(t.uri(nqn(i % SUBSYSTEMS)), ConnectOptions.defaults().ioQueues(1)
                            .identity(HostIdentity.of("nqn.2014-08.org.nvmexpress:uuid:" + id, id))));
                }
                long after = memory(t, metricsUrl);
                double perController = (after - before) / (double) CONTROLLERS;
                System.out.printf("many namespaces: %.1f KiB per idle controller (%d)%n", perController / 1024, CONTROLLERS);
                assertTrue(perController <= 64 << 10, "an idle controller holds " + perController + " bytes; at most 64 KiB");
                open.get(CONTROLLERS - 1).namespace(1).read(0, ByteBuffer.allocateDirect(4096));
            } finally {
                for (Controller c : open) {
                    c.close();
                }
            }
            t.assertNoLeaks();
        }
    }

    /** SIGHUP; waits for the {@code n}-th "reloaded" line; the seconds from the signal to it. */
    static double reload(TargetProcess t, int n) throws Exception {
        long s = System.nanoTime();
        t.signal("HUP");
        t.await("reload " + n, () -> count(t.out(), "nvmeof target reloaded") + count(t.out(), "kept its configuration") >= n);
        double seconds = (System.nanoTime() - s) / 1e9;
        assertEquals(n, count(t.out(), "nvmeof target reloaded"), "reload " + n + " was applied: " + t.out());
        return seconds;
    }

    private static String reloadedLine(TargetProcess t, int n) throws IOException {
        return t.out().lines().filter(l -> l.contains("nvmeof target reloaded")).skip(n - 1).findFirst().orElseThrow();
    }

    private static long count(String text, String what) {
        return text.lines().filter(l -> l.contains(what)).count();
    }
}
