package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.protocol.Status;
import io.nvmeof.target.backend.CephCluster;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two gateways (target processes) in a gateway group over one RBD image of a real one-node Ceph
 * cluster, each with its own Ceph client: the preferred gateway owns ANA group 1 (optimized there,
 * non-optimized at the other); killed, the other takes the lease once it expires, fences the dead
 * one's client first (Ceph's blocklist holds it) and reports the group optimized; back, the
 * preferred one takes its group back after the failback delay, with no fencing (the other let go
 * cleanly); frozen past its lease, it is fenced, and when thawed it finds itself fenced, reports
 * the group inaccessible, re-opens its image with a new client and comes back as non-optimized,
 * then takes its group back again. Manual ANA changes to the managed group are refused.
 */
class GatewayGroupTest {
    static final String NQN = "nqn.2026-12.io.nvmeof:gw";
    static final long LEASE_MS = 3000;
    static final long FAILBACK_DELAY_MS = 2000;
    @RegisterExtension
    static final CephCluster.PerClass CEPH = new CephCluster.PerClass();

    @Test
    void failoverFencesTheOldOwnerAndFailbackReturnsTheGroup() throws Exception {
        CEPH.get().rbd("create", "--size", "8M", "rbd/gw");
        GroupGateway.Group group = new GroupGateway.Group(NQN, "gw", LEASE_MS, FAILBACK_DELAY_MS, "a",
                Map.of("a", "127.0.0.1", "b", "127.0.0.1"));
        GroupGateway a = new GroupGateway(CEPH.dir(), group, "a", 1, CEPH.get(), "127.0.0.1", 0, List.of());
        GroupGateway b = new GroupGateway(CEPH.dir(), group, "b", 2, CEPH.get(), "127.0.0.1", 0, List.of());
        try {
            a.start();
            a.awaitRole("owner", Duration.ofSeconds(30));
            b.start();
            b.awaitRole("standby", Duration.ofSeconds(30));
            assertEquals("optimized", a.anaState(), "the owner reports the group optimized");
            assertEquals("non-optimized", b.anaState(), "the other reports it non-optimized");
            JsonNode refused = ManagementApiTest.rpc(a.socket, "set_ana_state", "{\"portid\": 1, \"grpid\": 1, \"state\": \"inaccessible\"}");
            assertTrue(refused.path("error").path("message").asText().contains("managed by gateway group"), refused.toString());
            String aClient = a.address();

            // the owner dies: the other takes the lease after it expires, fencing the dead one first
            long killed = System.nanoTime();
            a.process.signal("KILL");
            b.awaitRole("owner", Duration.ofSeconds(30));
            long failoverMs = (System.nanoTime() - killed) / 1_000_000;
            System.out.println("failover after the owner was killed: " + failoverMs + " ms (lease " + LEASE_MS + " ms)");
            assertTrue(failoverMs <= LEASE_MS + 2000 + 1000, "failover within the lease + 2 s (+1 s of polling): "
                    + failoverMs + " ms");
            assertEquals("optimized", b.anaState());
            assertEquals(1, b.group().path("fencings").asInt(), b.group().toString());
            assertTrue(CEPH.get().ceph("osd", "blocklist", "ls").contains(aClient),
                    "Ceph's blocklist holds the dead owner's client " + aClient);

            // back, the preferred gateway takes its group back after the failback delay, fencing no one
            a.start();
            long back = System.nanoTime();
            a.awaitRole("owner", Duration.ofSeconds(30));
            long failbackMs = (System.nanoTime() - back) / 1_000_000;
            System.out.println("failback after the preferred gateway came back: " + failbackMs + " ms (delay "
                    + FAILBACK_DELAY_MS + " ms, JVM start included)");
            b.awaitRole("standby", Duration.ofSeconds(10));
            assertEquals(0, a.group().path("fencings").asInt(), "b let go cleanly: " + a.group());
            assertEquals("non-optimized", b.anaState());

            // frozen past its lease: fenced; a write sent to it while frozen never lands after the
            // new owner's; thawed, it finds out, re-opens and comes back
            String aClient2 = a.address();
            ConnectOptions once = ConnectOptions.defaults().ioQueues(1).controllerLossTimeout(Duration.ZERO);
            try (Controller toA = Nvmeof.connect(a.process.uri(NQN), once);
                 Controller toB = Nvmeof.connect(b.process.uri(NQN), once)) {
                BlockDevice viaA = toA.namespace(1);
                BlockDevice viaB = toB.namespace(1);
                a.process.signal("STOP");
                long frozen = System.nanoTime();
                CompletableFuture<Void> stale;
                try {
                    stale = viaA.writeAsync(0, block((byte) 0xA));
                    b.awaitRole("owner", Duration.ofSeconds(30));
                    System.out.println("failover after the owner froze: " + (System.nanoTime() - frozen) / 1_000_000 + " ms");
                    assertEquals(2, b.group().path("fencings").asInt(), b.group().toString());
                    assertTrue(CEPH.get().ceph("osd", "blocklist", "ls").contains(aClient2), "the frozen owner is fenced");
                    viaB.write(0, block((byte) 0xB)); // the new owner's first write
                } finally {
                    a.process.signal("CONT");
                }
                ExecutionException e = assertThrows(ExecutionException.class, () -> stale.get(60, TimeUnit.SECONDS),
                        "the write the frozen gateway held never succeeds");
                assertTrue(e.getCause() instanceof NvmeStatusException s && s.status().sct() == Status.SCT_PATH,
                        "it fails with a path error, so the host retries elsewhere: " + e.getCause());
                System.out.println("the frozen gateway's write: " + e.getCause().getMessage());
                ByteBuffer got = ByteBuffer.allocateDirect(4096);
                viaB.read(0, got);
                assertEquals(block((byte) 0xB), got.flip(), "the block holds the new owner's write, not the stale one");
            }
            Awaitility.await("the thawed gateway finds itself fenced and rejoins").atMost(Duration.ofSeconds(60))
                    .ignoreExceptions().until(() -> a.group().path("times_fenced").asInt() == 1
                            && !a.address().equals(aClient2));
            a.awaitRole("owner", Duration.ofSeconds(60)); // and, healthy again, takes its group back
            assertEquals("optimized", a.anaState());
            System.out.println("gateway a: " + a.group().toPrettyString());
            System.out.println("gateway b: " + b.group().toPrettyString());
        } finally {
            a.close();
            b.close();
        }
    }

    private static ByteBuffer block(byte fill) {
        ByteBuffer b = ByteBuffer.allocateDirect(4096);
        while (b.hasRemaining()) {
            b.put(fill);
        }
        return b.flip();
    }
}
