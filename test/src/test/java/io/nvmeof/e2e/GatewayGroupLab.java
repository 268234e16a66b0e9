package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmeof.e2e.NetnsLab.Link;
import io.nvmeof.target.backend.CephCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;

/**
 * A gateway group on separate machines, for a host to ride through its events: Ceph, gateways a
 * (the preferred owner of ANA group 1) and b, and the hosts each in a network namespace of their
 * own ({@link NetnsLab}), one RBD image, a 3 s lease and a 2 s failback delay. The events, each on
 * the owner (a), each followed by the host's checkpoint:
 * <ul>
 * <li>cut from the hosts while it reaches Ceph: it keeps its lease; the host goes on through b
 * (non-optimized), and the image's lock moves with the writes;
 * <li>cut from Ceph while the hosts reach it: it reports its group inaccessible by its own
 * deadline, b takes the lease once it expires and fences it (Ceph's blocklist holds its client),
 * and with the link back a finds itself fenced, rejoins with a new client and takes its group
 * back after the failback delay;
 * <li>frozen (SIGSTOP) past its lease with writes in flight: fenced the same way; thawed, it
 * rejoins and takes its group back;
 * <li>killed: b takes over once the lease expires; a, restarted, takes its group back.
 * </ul>
 * Failover is held to the lease + 2 s (+1 s of polling).
 */
final class GatewayGroupLab {
    static final long LEASE_MS = 3000;
    static final long FAILBACK_DELAY_MS = 2000;

    /** The host under test: writes through both gateways (a multipath URI) from the hosts' namespace. */
    interface Host extends AutoCloseable {
        /**
         * Whether the host leaves a path whose gateway is frozen by itself (a keep-alive timeout
         * that fails the path over, as Linux's host and ours do); otherwise it waits on that path
         * until the gateway thaws, finds itself fenced and fails its commands with a path error.
         */
        default boolean leavesAFrozenPath() {
            return true;
        }

        /** After an event: what the host can check now (its blocks, its errors). */
        void checkpoint(String after, List<String> timings) throws Exception;

        /** After the last event: ends the host and holds it to its result. */
        void finish() throws Exception;
    }

    /** Starts a host against {@code uri} (both gateways' addresses and the subsystem). */
    interface HostStarter {
        Host start(NetnsLab lab, String uri) throws Exception;
    }

    private final NetnsLab lab;
    private final CephCluster ceph;
    private final GroupGateway a;
    private final GroupGateway b;
    private final Host host;
    private final List<String> timings = new ArrayList<>();

    private GatewayGroupLab(NetnsLab lab, CephCluster ceph, GroupGateway a, GroupGateway b, Host host) {
        this.lab = lab;
        this.ceph = ceph;
        this.a = a;
        this.b = b;
        this.host = host;
    }

    /** Builds the lab in {@code dir}, starts the host, runs every event, prints the timings and Ceph's blocklist. */
    static void run(Path dir, String nqn, HostStarter starter) throws Exception {
        try (NetnsLab lab = NetnsLab.create("a", "b")) {
            CephCluster ceph = CephCluster.start(dir.resolve("ceph"), "memstore", lab.ns("ceph"), lab.cephAddress());
            try {
                ceph.rbd("create", "--size", "8M", "rbd/gw");
                GroupGateway.Group group = new GroupGateway.Group(nqn, "gw", LEASE_MS, FAILBACK_DELAY_MS, "a",
                        Map.of("a", lab.hostAddress("a"), "b", lab.hostAddress("b")));
                try (GroupGateway a = new GroupGateway(dir, group, "a", 1, ceph, lab.hostAddress("a"), 4420, lab.in("a"));
                     GroupGateway b = new GroupGateway(dir, group, "b", 2, ceph, lab.hostAddress("b"), 4420, lab.in("b"))) {
                    a.start();
                    a.awaitRole("owner", Duration.ofSeconds(30));
                    b.start();
                    b.awaitRole("standby", Duration.ofSeconds(30));
                    String uri = "nvme+tcp://" + lab.hostAddress("a") + ":4420," + lab.hostAddress("b") + ":4420/" + nqn;
                    try (Host host = starter.start(lab, uri)) {
                        runEvents(lab, ceph, a, b, host);
                    } catch (Exception | AssertionError e) {
                        for (GroupGateway g : List.of(a, b)) {
                            String err = g.process.err();
                            System.out.println("gateway " + g.name + "'s stderr (its end):\n"
                                    + err.substring(Math.max(0, err.length() - 4000)));
                        }
                        throw e;
                    }
                }
            } finally {
                ceph.close();
            }
        }
    }

    private static void runEvents(NetnsLab lab, CephCluster ceph, GroupGateway a, GroupGateway b, Host host)
            throws Exception {
        Awaitility.await("writes through a, the owner").atMost(Duration.ofSeconds(60))
                .until(() -> writes(a) > 100);
        GatewayGroupLab events = new GatewayGroupLab(lab, ceph, a, b, host);
        events.cutFromHosts();
        events.cutFromCeph();
        events.frozen();
        events.killed();
        host.finish();
        System.out.println("gateway group events, lease " + LEASE_MS + " ms, failback delay "
                + FAILBACK_DELAY_MS + " ms:");
        events.timings.forEach(t -> System.out.println("  " + t));
        System.out.println("Ceph's blocklist: " + ceph.ceph("osd", "blocklist", "ls").strip());
        System.out.println("gateway a: " + a.group().toPrettyString());
        System.out.println("gateway b: " + b.group().toPrettyString());
    }

    private void cutFromHosts() throws Exception {
        long bAt = writes(b);
        long cut = System.nanoTime();
        lab.cut("a", Link.HOSTS);
        awaitWritesThrough(b, bAt, "a cut from the hosts", cut);
        assertEquals("owner", a.role(), "a reaches Ceph, so it keeps its lease");
        assertEquals("standby", b.role());
        long healed = System.nanoTime();
        lab.heal("a", Link.HOSTS);
        long aAt = writes(a);
        Awaitility.await("writes through a again").atMost(Duration.ofSeconds(30)).until(() -> writes(a) > aAt + 100);
        timings.add("a's link healed: writes through a again after " + sinceMs(healed) + " ms");
        host.checkpoint("a cut from the hosts", timings);
    }

    private void cutFromCeph() throws Exception {
        String client = a.address();
        long fencings = b.group().path("fencings").asLong();
        long bAt = writes(b);
        long cut = System.nanoTime();
        lab.cut("a", Link.CEPH);
        Awaitility.await("a reports its group inaccessible").atMost(Duration.ofMillis(LEASE_MS + 5000))
                .pollInterval(Duration.ofMillis(50)).ignoreExceptions().until(() -> "inaccessible".equals(a.anaState()));
        timings.add("a cut from Ceph: a reports its group inaccessible after " + sinceMs(cut) + " ms");
        awaitFailover("a cut from Ceph", cut, client);
        assertEquals(fencings + 1, b.group().path("fencings").asLong(), "b fenced a: " + b.group());
        awaitWritesThrough(b, bAt, "a cut from Ceph", cut);
        long healed = System.nanoTime();
        lab.heal("a", Link.CEPH);
        awaitRejoinAndFailback("a's link to Ceph healed", healed, client);
        host.checkpoint("a cut from Ceph", timings);
    }

    private void frozen() throws Exception {
        String client = a.address();
        long bAt = writes(b);
        long frozen = System.nanoTime();
        a.process.signal("STOP");
        try {
            awaitFailover("a frozen", frozen, client);
            if (host.leavesAFrozenPath()) {
                awaitWritesThrough(b, bAt, "a frozen", frozen);
            }
        } finally {
            a.process.signal("CONT");
        }
        if (!host.leavesAFrozenPath()) {
            awaitWritesThrough(b, bAt, "a frozen and thawed (the host waited on a's path)", frozen);
        }
        awaitRejoinAndFailback("a thawed", System.nanoTime(), client);
        host.checkpoint("a frozen", timings);
    }

    private void killed() throws Exception {
        String client = a.address();
        long bAt = writes(b);
        long killed = System.nanoTime();
        a.process.signal("KILL");
        awaitFailover("a killed", killed, client);
        awaitWritesThrough(b, bAt, "a killed", killed);
        long restarted = System.nanoTime();
        a.start();
        a.awaitRole("owner", Duration.ofSeconds(60));
        timings.add("a restarted: owns its group again after " + sinceMs(restarted) + " ms (its JVM's start included)");
        host.checkpoint("a killed", timings);
    }

    /** b owns the group within the lease + 2 s of {@code since}, having fenced a's {@code client}. */
    private void awaitFailover(String what, long since, String client) throws Exception {
        b.awaitRole("owner", Duration.ofSeconds(30));
        long failover = sinceMs(since);
        timings.add(what + ": b owns the group after " + failover + " ms");
        assertTrue(failover <= LEASE_MS + 2000 + 1000, what + ": failover within the lease + 2 s (+1 s of polling): "
                + failover + " ms");
        assertTrue(ceph.ceph("osd", "blocklist", "ls").contains(client), what + ": Ceph's blocklist holds a's client " + client);
    }

    /** a finds itself fenced, rejoins with a new client and, after the failback delay, owns its group again. */
    private void awaitRejoinAndFailback(String what, long since, String client) throws Exception {
        Awaitility.await(what + ": a finds itself fenced and rejoins with a new client").atMost(Duration.ofSeconds(60))
                .ignoreExceptions().until(() -> !client.equals(a.address()));
        long rejoined = System.nanoTime();
        timings.add(what + ": a rejoined with a new client after " + sinceMs(since) + " ms");
        a.awaitRole("owner", Duration.ofSeconds(60));
        long failback = sinceMs(rejoined);
        timings.add(what + ": a owns its group again " + failback + " ms after it rejoined (failback delay "
                + FAILBACK_DELAY_MS + " ms)");
        assertTrue(failback <= FAILBACK_DELAY_MS + 5000, what + ": failback within the delay + 5 s: " + failback + " ms");
    }

    /** The host's writes go on through {@code g}: 100 more than {@code from}. */
    private void awaitWritesThrough(GroupGateway g, long from, String what, long since) {
        Awaitility.await(what + ": writes through " + g.name).atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(50)).until(() -> writes(g) > from + 100);
        timings.add(what + ": writes go on through " + g.name + " after " + sinceMs(since) + " ms");
    }

    private static long sinceMs(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }

    /** The writes a gateway ran on namespace 1, from its management API. */
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
}
