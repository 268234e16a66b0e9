package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmeof.e2e.NetnsLab.Link;
import io.nvmeof.target.backend.CephCluster;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway group on separate machines: Ceph, two gateways and the host each in a network
 * namespace of their own ({@link NetnsLab}), so that a gateway can be cut from its hosts or from
 * its cluster for real (the link, not a socket). One host process writes through both gateways
 * (our initiator's multipath) with every write stamped in order ({@code StampWriter}); after each
 * event the writes pause and every block is read back: a block holding an older stamp than the
 * last acknowledged write to it is a write a gateway that had lost its role landed after the
 * other gateway's. The events, each on the owner (gateway a): cut from the hosts while it reaches
 * Ceph (it keeps its lease; the host writes through b, and the image's lock moves), cut from Ceph
 * while the hosts reach it (it reports its group inaccessible by its own deadline, b takes the
 * lease after it expires and fences it, and when the link is back a finds itself fenced and
 * rejoins), frozen past its lease with writes in flight, and killed. Every event: 0 failed
 * writes at the host, 0 stale blocks, 0 corrupt ones.
 */
class GatewayPartitionTest {
    static final String NQN = "nqn.2026-12.io.nvmeof:gw-netns";
    static final long LEASE_MS = 3000;
    static final long FAILBACK_DELAY_MS = 2000;
    /** The host's keep-alive: how soon it calls a silent path dead. */
    static final int KEEP_ALIVE_MS = 1000;

    @Test
    void noWriteOfAGatewayThatLostItsRoleLandsAfterTheOtherGatewaysWrites(@TempDir Path dir) throws Exception {
        try (NetnsLab lab = NetnsLab.create("a", "b")) {
            CephCluster ceph = CephCluster.start(dir.resolve("ceph"), "memstore", lab.ns("ceph"), NetnsLab.CEPH_ADDRESS);
            try {
                ceph.rbd("create", "--size", "8M", "rbd/gw");
                GroupGateway.Group group = new GroupGateway.Group(NQN, "gw", LEASE_MS, FAILBACK_DELAY_MS, "a",
                        Map.of("a", lab.hostAddress("a"), "b", lab.hostAddress("b")));
                try (GroupGateway a = new GroupGateway(dir, group, "a", 1, ceph, lab.hostAddress("a"), 4420, lab.in("a"));
                     GroupGateway b = new GroupGateway(dir, group, "b", 2, ceph, lab.hostAddress("b"), 4420, lab.in("b"))) {
                    a.start();
                    a.awaitRole("owner", Duration.ofSeconds(30));
                    b.start();
                    b.awaitRole("standby", Duration.ofSeconds(30));
                    String uri = "nvme+tcp://" + lab.hostAddress("a") + ":4420," + lab.hostAddress("b") + ":4420/" + NQN;
                    try (HostWriter w = HostWriter.start(lab, uri)) {
                        w.awaitWrites(500);
                        Awaitility.await("writes through a, the owner").atMost(Duration.ofSeconds(30))
                                .until(() -> writes(a) > 100);
                        List<String> timings = new ArrayList<>();
                        cutFromHosts(lab, a, b, w, timings);
                        cutFromCeph(lab, ceph, a, b, w, timings);
                        frozen(ceph, a, b, w, timings);
                        killed(a, b, w, timings);
                        System.out.println("gateway partitions, lease " + LEASE_MS + " ms, failback delay "
                                + FAILBACK_DELAY_MS + " ms, host keep-alive " + KEEP_ALIVE_MS + " ms:");
                        timings.forEach(t -> System.out.println("  " + t));
                        System.out.println("Ceph's blocklist: " + ceph.ceph("osd", "blocklist", "ls").strip());
                        System.out.println("gateway a: " + a.group().toPrettyString());
                        System.out.println("gateway b: " + b.group().toPrettyString());
                        w.quit();
                    }
                }
            } finally {
                ceph.close();
            }
        }
    }

    /** Cut from the hosts, reaching Ceph: a keeps its lease; the host goes on through b (non-optimized). */
    private static void cutFromHosts(NetnsLab lab, GroupGateway a, GroupGateway b, HostWriter w, List<String> timings)
            throws Exception {
        long at = w.writes();
        long bAt = writes(b);
        long cut = System.nanoTime();
        lab.cut("a", Link.HOSTS);
        w.awaitWrites(at + 300);
        timings.add("a cut from the hosts: writes go on through b after " + sinceMs(cut) + " ms");
        assertTrue(writes(b) > bAt, "the writes went through b");
        assertEquals("owner", a.role(), "a reaches Ceph, so it keeps its lease");
        assertEquals("standby", b.role());
        long healed = System.nanoTime();
        lab.heal("a", Link.HOSTS);
        long aAt = writes(a);
        Awaitility.await("writes through a again").atMost(Duration.ofSeconds(30)).until(() -> writes(a) > aAt + 100);
        timings.add("a's link healed: writes through a again after " + sinceMs(healed) + " ms");
        w.checkpoint("a cut from the hosts", timings);
    }

    /**
     * Cut from Ceph, reachable by the hosts: a reports its group inaccessible by its own deadline,
     * b takes the lease once it expires and fences a; healed, a finds itself fenced, rejoins with
     * a new client and takes its group back after the failback delay.
     */
    private static void cutFromCeph(NetnsLab lab, CephCluster ceph, GroupGateway a, GroupGateway b, HostWriter w,
            List<String> timings) throws Exception {
        String client = a.address();
        long fencings = b.group().path("fencings").asLong();
        long cut = System.nanoTime();
        lab.cut("a", Link.CEPH);
        Awaitility.await("a reports its group inaccessible").atMost(Duration.ofMillis(LEASE_MS + 5000))
                .pollInterval(Duration.ofMillis(50)).ignoreExceptions().until(() -> "inaccessible".equals(a.anaState()));
        timings.add("a cut from Ceph: a reports its group inaccessible after " + sinceMs(cut) + " ms");
        b.awaitRole("owner", Duration.ofSeconds(30));
        long failover = sinceMs(cut);
        timings.add("a cut from Ceph: b owns the group after " + failover + " ms");
        assertTrue(failover <= LEASE_MS + 2000 + 1000, "failover within the lease + 2 s (+1 s of polling): " + failover);
        assertEquals(fencings + 1, b.group().path("fencings").asLong(), "b fenced a: " + b.group());
        assertTrue(ceph.ceph("osd", "blocklist", "ls").contains(client), "Ceph's blocklist holds a's client " + client);
        long at = w.writes();
        w.awaitWrites(at + 300);
        timings.add("a cut from Ceph: writes go on through b after " + sinceMs(cut) + " ms");
        long healed = System.nanoTime();
        lab.heal("a", Link.CEPH);
        Awaitility.await("a finds itself fenced and rejoins with a new client").atMost(Duration.ofSeconds(60))
                .ignoreExceptions().until(() -> !client.equals(a.address()));
        timings.add("a's link to Ceph healed: a rejoined with a new client after " + sinceMs(healed) + " ms");
        a.awaitRole("owner", Duration.ofSeconds(60));
        timings.add("a's link to Ceph healed: a owns its group again after " + sinceMs(healed) + " ms (failback delay "
                + FAILBACK_DELAY_MS + " ms)");
        w.checkpoint("a cut from Ceph", timings);
    }

    /** Frozen (SIGSTOP) past its lease with writes in flight: fenced; thawed, none of them lands. */
    private static void frozen(CephCluster ceph, GroupGateway a, GroupGateway b, HostWriter w, List<String> timings)
            throws Exception {
        String client = a.address();
        long frozen = System.nanoTime();
        a.process.signal("STOP");
        try {
            b.awaitRole("owner", Duration.ofSeconds(30));
            timings.add("a frozen: b owns the group after " + sinceMs(frozen) + " ms");
            assertTrue(ceph.ceph("osd", "blocklist", "ls").contains(client), "Ceph's blocklist holds a's client " + client);
            w.awaitWrites(w.writes() + 300);
            timings.add("a frozen: writes go on through b after " + sinceMs(frozen) + " ms");
        } finally {
            a.process.signal("CONT");
        }
        long thawed = System.nanoTime();
        Awaitility.await("a finds itself fenced and rejoins with a new client").atMost(Duration.ofSeconds(60))
                .ignoreExceptions().until(() -> !client.equals(a.address()));
        timings.add("a thawed: rejoined with a new client after " + sinceMs(thawed) + " ms");
        a.awaitRole("owner", Duration.ofSeconds(60));
        timings.add("a thawed: owns its group again after " + sinceMs(thawed) + " ms");
        w.checkpoint("a frozen", timings);
    }

    /** Killed: b takes over once the lease expires; a, restarted, takes its group back. */
    private static void killed(GroupGateway a, GroupGateway b, HostWriter w, List<String> timings) throws Exception {
        long killed = System.nanoTime();
        a.process.signal("KILL");
        b.awaitRole("owner", Duration.ofSeconds(30));
        long failover = sinceMs(killed);
        timings.add("a killed: b owns the group after " + failover + " ms");
        assertTrue(failover <= LEASE_MS + 2000 + 1000, "failover within the lease + 2 s (+1 s of polling): " + failover);
        w.awaitWrites(w.writes() + 300);
        long restarted = System.nanoTime();
        a.start();
        a.awaitRole("owner", Duration.ofSeconds(60));
        timings.add("a restarted: owns its group again after " + sinceMs(restarted) + " ms (its JVM's start included)");
        w.checkpoint("a killed", timings);
    }

    private static long sinceMs(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }

    /** The commands a gateway ran on namespace 1 (reads and writes), from its management API. */
    static long writes(GroupGateway g) throws Exception {
        long n = 0;
        for (JsonNode s : ManagementApiTest.rpc(g.socket, "get_stats", "{}").get("result").path("subsystems")) {
            for (JsonNode ns : s.path("namespaces")) {
                if (ns.path("nsid").asInt() == 1) {
                    n += ns.path("write").path("commands").asLong();
                }
            }
        }
        return n;
    }

    /** The host: {@code StampWriter} in the hosts' namespace, driven by its stdin. */
    static final class HostWriter implements AutoCloseable {
        private static final Pattern FIELD = Pattern.compile("(\\w+)=(\\d+)");
        private final Process process;
        private final Writer stdin;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final StringBuilder stderr = new StringBuilder();

        private HostWriter(Process process) {
            this.process = process;
            this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            reader(new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)), true);
            reader(new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8)), false);
        }

        private void reader(BufferedReader in, boolean answers) {
            Thread t = new Thread(() -> {
                try {
                    for (String line; (line = in.readLine()) != null; ) {
                        if (answers) {
                            lines.add(line);
                        } else {
                            synchronized (stderr) {
                                stderr.append(line).append('\n');
                            }
                        }
                    }
                } catch (IOException e) {
                    // the process ended
                }
            });
            t.setDaemon(true);
            t.start();
        }

        static HostWriter start(NetnsLab lab, String uri) throws Exception {
            List<String> cmd = lab.in("hosts", Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Dio.netty.leakDetection.level=paranoid", "-Djava.net.preferIPv4Stack=true", "-Xmx256m", "-cp",
                    TargetProcess.JAR.toString(), "io.nvmeof.tools.harness.StampWriter", uri, "8",
                    Integer.toString(KEEP_ALIVE_MS));
            HostWriter w = new HostWriter(new ProcessBuilder(cmd).start());
            String first = w.next(Duration.ofSeconds(60));
            assertTrue(first != null && first.startsWith("WRITING"), "the writer did not start: " + first + "\n" + w.stderr());
            return w;
        }

        private String next(Duration within) throws InterruptedException {
            return lines.poll(within.toMillis(), TimeUnit.MILLISECONDS);
        }

        String stderr() {
            synchronized (stderr) {
                return stderr.toString();
            }
        }

        /** Sends {@code command}; its answer line. */
        String ask(String command, Duration within) throws Exception {
            stdin.write(command + "\n");
            stdin.flush();
            String answer = next(within);
            assertTrue(answer != null, "the writer did not answer '" + command + "' within " + within + ":\n" + stderr());
            return answer;
        }

        static long field(String line, String name) {
            Matcher m = FIELD.matcher(line);
            while (m.find()) {
                if (m.group(1).equals(name)) {
                    return Long.parseLong(m.group(2));
                }
            }
            throw new AssertionError("no " + name + " in: " + line);
        }

        long writes() throws Exception {
            return field(ask("status", Duration.ofSeconds(10)), "writes");
        }

        /** Waits until the host has completed {@code n} writes in all. */
        void awaitWrites(long n) {
            Awaitility.await("the host's writes past " + n).atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(50)).until(() -> writes() >= n);
        }

        /**
         * Pauses the writes (waiting out those in flight), reads every block back and holds the
         * result to 0 failed writes, 0 stale and 0 corrupt blocks; then writes again.
         */
        void checkpoint(String after, List<String> timings) throws Exception {
            String paused = ask("pause", Duration.ofSeconds(150));
            assertTrue(paused.startsWith("PAUSED writes="), after + ": " + paused + "\n" + stderr());
            String verified = ask("verify", Duration.ofSeconds(60));
            timings.add(after + ": " + paused + "; " + verified);
            assertEquals(0, field(paused, "errors"), after + ": the host saw a write fail: " + paused + "\n" + stderr());
            assertEquals(0, field(verified, "stale"), after + ": " + verified + "\n" + stderr());
            assertEquals(0, field(verified, "corrupt"), after + ": " + verified + "\n" + stderr());
            assertEquals("RESUMED", ask("resume", Duration.ofSeconds(10)));
        }

        void quit() throws Exception {
            stdin.write("quit\n");
            stdin.flush();
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the writer did not quit");
            assertEquals(0, process.exitValue(), stderr());
            assertTrue(!stderr().contains("LEAK:"), "the host leaked buffers:\n" + stderr());
        }

        @Override
        public void close() throws Exception {
            if (process.isAlive()) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
