package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.daemon.config.ConfigApplier;
import io.nvmeof.daemon.config.ConfigLoader;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Multipath;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.initiator.NvmeofUri;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import io.nvmeof.target.AnaState;
import io.nvmeof.target.Faults;
import io.nvmeof.target.Target;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Our initiator's multipath against two gateways (two targets in this JVM over one direct-I/O
 * file, as {@link GatewaysTest} has them): path choice by ANA state and policy, failover on
 * every kind of path error with no error reaching the caller, errors that are the caller's, a
 * gateway that goes away and comes back, no path at all, and a path that is another namespace.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class MultipathTest {
    static final String NQN = GatewaysTest.NQN;

    /** A gateway on a fixed port (so it can come back on it), its group 1 in {@code state}. */
    static Target gateway(Path file, int port, int cntlidMin, String state, String uuid) throws IOException {
        Target t = new Target();
        new ConfigApplier(t).apply(ConfigLoader.parse(GatewaysTest.config(file, cntlidMin, cntlidMin + 998, state)
                .replace("\"trsvcid\": 0", "\"trsvcid\": " + port)
                .replace("3e0c8a4e-6b7f-4d1a-9c55-2f1e0d9b7a61", uuid)));
        return t;
    }

    static Target gateway(Path file, int port, int cntlidMin, String state) throws IOException {
        return gateway(file, port, cntlidMin, state, "3e0c8a4e-6b7f-4d1a-9c55-2f1e0d9b7a61");
    }

    static ConnectOptions options() {
        return ConnectOptions.defaults().ioQueues(2).reconnectDelay(Duration.ofMillis(200)).keepAlive(Duration.ofSeconds(1))
                .controllerLossTimeout(Duration.ofSeconds(30)).commandTimeout(Duration.ofSeconds(5));
    }

    static String uri(int a, int b) {
        return "nvme+tcp://127.0.0.1:" + a + ",127.0.0.1:" + b + "/" + NQN;
    }

    static ByteBuffer pattern(int n, int seed) {
        ByteBuffer b = ByteBuffer.allocateDirect(n);
        for (int i = 0; i < n; i++) {
            b.put(i, (byte) (seed * 31 + i * 7));
        }
        return b;
    }

    /** Writes and reads back {@code rounds} blocks of 8 KiB at rotating offsets; every one must match. */
    static void io(BlockDevice d, int rounds, int seed) throws IOException {
        for (int r = 0; r < rounds; r++) {
            long at = 8192L * ((seed * 7 + r) % 256);
            ByteBuffer w = pattern(8192, seed + r);
            d.write(at, w.duplicate());
            ByteBuffer back = ByteBuffer.allocateDirect(8192);
            d.read(at, back);
            assertEquals(w.clear(), back.flip(), "block at " + at);
        }
    }

    @Test
    void aListOfAddressesIsOneUriPerPath() {
        List<NvmeofUri> l = NvmeofUri.parseAll("nvme+tcp://10.0.0.1:4420,10.0.0.2/" + NQN + "?nsid=3");
        assertEquals(2, l.size());
        assertEquals("10.0.0.2", l.get(1).host());
        assertEquals(4420, l.get(1).port());
        assertEquals(3, l.get(1).nsid());
        assertEquals(NQN, l.get(0).subsystemNqn());
        assertEquals(1, NvmeofUri.parseAll("nvme+tcp://10.0.0.1/" + NQN).size());
        assertThrows(IllegalArgumentException.class, () -> NvmeofUri.parseAll("nvme+tcp://10.0.0.1,,10.0.0.2/" + NQN));
        assertEquals(Multipath.Policy.ROUND_ROBIN, Multipath.Policy.of("round-robin"));
        assertEquals(Multipath.Policy.NUMA, Multipath.Policy.of("first"));
        assertThrows(IllegalArgumentException.class, () -> Multipath.Policy.of("random"));
    }

    @Test
    void ioGoesToTheOptimizedPathAndFailsOverOnAnaAndPathStatuses(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("shared.img");
        int pa = Ports.free();
        int pb = Ports.free();
        try (Target a = gateway(file, pa, 1, "optimized"); Target b = gateway(file, pb, 1000, "non-optimized");
                Multipath m = Nvmeof.connectMultipath(uri(pa, pb), options())) {
            BlockDevice d = m.namespace(1);
            Multipath.Path ma = m.paths().get(0);
            Multipath.Path mb = m.paths().get(1);
            assertEquals("live", ma.state());
            assertEquals("optimized", ma.anaState(1));
            assertEquals("non-optimized", mb.anaState(1));
            io(d, 20, 1);
            assertEquals(40, ma.ios(), "all on the optimized path");
            assertEquals(0, mb.ios());

            // a path status (no DNR) on A: that write runs again on B, the caller sees nothing
            a.faults().fail(Faults.Match.io().opcode(NvmOpcode.WRITE.code), 1, Status.INTERNAL_PATH_ERROR);
            io(d, 1, 2);
            assertEquals(1, ma.failovers());
            assertEquals(1, mb.ios());

            // ANA: A's group 1 inaccessible, so I/O moves to B without an error; back when optimized
            a.anaState(a.ports().get(0), 1, AnaState.INACCESSIBLE);
            io(d, 10, 3);
            awaitAna(ma, "inaccessible");
            long onB = mb.ios();
            io(d, 10, 4);
            assertEquals(onB + 20, mb.ios(), "with A inaccessible, B serves");
            a.anaState(a.ports().get(0), 1, AnaState.OPTIMIZED);
            awaitAna(ma, "optimized");
            long onA = ma.ios();
            io(d, 10, 5);
            assertEquals(onA + 20, ma.ios(), "back on the optimized path");

            // an ANA status on a command before the host knows (the log says inaccessible later)
            a.faults().fail(Faults.Match.io().opcode(NvmOpcode.READ.code), 1, Status.ANA_TRANSITION);
            io(d, 1, 6);
            assertTrue(ma.failovers() >= 2);
            // A is out of use until its ANA log is read again (optimized): then it serves again
            await("A serves again after its ANA log said optimized", () -> {
                long before = ma.ios();
                io(d, 1, 50);
                return ma.ios() == before + 2;
            });

            // not path errors: the caller's
            a.faults().fail(Faults.Match.io().opcode(NvmOpcode.WRITE.code), 1, Status.INTERNAL_ERROR);
            NvmeStatusException e = assertThrows(NvmeStatusException.class, () -> io(d, 1, 7));
            assertEquals(Status.INTERNAL_ERROR.sc(), e.status().sc());
            a.faults().fail(Faults.Match.io().opcode(NvmOpcode.WRITE.code), 1, Status.INTERNAL_PATH_ERROR.withDnr(true));
            e = assertThrows(NvmeStatusException.class, () -> io(d, 1, 8));
            assertTrue(e.status().dnr(), "a path status with DNR is final");
            long failoversBefore = m.failovers();
            a.faults().fail(Faults.Match.io().opcode(NvmOpcode.READ.code), 1, Status.LBA_OUT_OF_RANGE);
            e = assertThrows(NvmeStatusException.class, () -> io(d, 1, 9));
            assertEquals(Status.LBA_OUT_OF_RANGE.sc(), e.status().sc());
            assertEquals(failoversBefore, m.failovers(), "no failover for what is not a path error");
        }
    }

    static void awaitAna(Multipath.Path p, String state) {
        await(p.uri() + " " + state, () -> p.anaState(1).equals(state));
    }

    @Test
    void aGatewayThatGoesAwayAndComesBack(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("shared.img");
        int pa = Ports.free();
        int pb = Ports.free();
        Target a = gateway(file, pa, 1, "optimized");
        try (Target b = gateway(file, pb, 1000, "non-optimized");
                Multipath m = Nvmeof.connectMultipath(uri(pa, pb), options())) {
            BlockDevice d = m.namespace(1);
            Multipath.Path ma = m.paths().get(0);
            Multipath.Path mb = m.paths().get(1);
            for (int round = 0; round < 3; round++) {
                // I/O in flight from other threads while A goes: none of it fails
                BackgroundIo load = new BackgroundIo(d, 100 + round);
                load.start();
                await("round " + round + ": I/O in flight on A", () -> load.verified > 0);
                a.close();
                long onB = mb.ios();
                await("round " + round + ": I/O moved to B", () -> mb.ios() > onB);
                a = gateway(file, pa, 1, "optimized");
                awaitLive(ma);
                long onA = ma.ios();
                await("round " + round + ": back on A", () -> ma.ios() > onA);
                load.stop();
                assertEquals(0, load.errors, "round " + round + ": " + load.firstError);
                assertTrue(load.verified > 0);
            }
        } finally {
            a.close();
        }
    }

    /**
     * A namespace that one gateway stops serving for a moment (between two steps of a change)
     * is inactive through that path only: the device keeps its size, and I/O goes on through the
     * other path without an error. (Before, the notice from that gateway made it a 0-byte device,
     * and every write after failed at once.)
     */
    @Test
    void aNamespaceInactiveThroughOnePathKeepsTheDevicesSize(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("shared.img");
        int pa = Ports.free();
        int pb = Ports.free();
        try (Target a = gateway(file, pa, 1, "optimized"); Target b = gateway(file, pb, 1000, "non-optimized");
                Multipath m = Nvmeof.connectMultipath(uri(pa, pb), options())) {
            BlockDevice d = m.namespace(1);
            Multipath.Path mb = m.paths().get(1);
            long size = d.size();
            assertTrue(size > 0);
            assertTrue(b.subsystem(NQN).removeNamespace(1));
            // B's notices come in order on one queue and are handled in order on the path's
            // thread: once the ANA change after the removal is seen, the removal's is too
            b.anaState(b.ports().get(0), 1, AnaState.INACCESSIBLE);
            await("B's notices handled", () -> mb.anaState(1).equals("unknown"));
            assertEquals(size, d.size(), "the namespace is still served through A");
            io(d, 20, 7);
        }
    }

    static void awaitLive(Multipath.Path p) {
        await(p.uri() + " live and optimized", () -> p.state().equals("live") && p.anaState(1).equals("optimized"));
    }

    /** Waits for {@code condition} up to 60 s (a busy machine), polling every 20 ms. */
    static void await(String what, java.util.concurrent.Callable<Boolean> condition) {
        org.awaitility.Awaitility.await(what).atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
                .until(condition);
    }

    @Test
    void withNoPathCommandsWaitThenFail(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("shared.img");
        int pa = Ports.free();
        int pb = Ports.free();
        Target a = gateway(file, pa, 1, "optimized");
        Target b = gateway(file, pb, 1000, "non-optimized");
        try (Multipath m = Nvmeof.connectMultipath(uri(pa, pb), options().noPathTimeout(Duration.ofSeconds(3)))) {
            BlockDevice d = m.namespace(1);
            io(d, 2, 9);
            a.close();
            b.close();
            long t0 = System.nanoTime();
            IOException e = assertThrows(IOException.class, () -> io(d, 1, 10));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(e.getMessage().contains("no usable path"), e.getMessage());
            assertTrue(ms >= 2500 && ms < 30_000, "failed after " + ms + " ms");

            // a gateway back within the no-path timeout: the waiting command goes there
            BackgroundIo late = new BackgroundIo(d, 11);
            late.start();
            await("I/O waiting for a path", () -> m.waiting() > 0);
            b = gateway(file, pb, 1000, "non-optimized");
            await("the waiting I/O went to B once it was back", () -> late.verified > 2);
            late.stop();
            assertEquals(0, late.errors, String.valueOf(late.firstError));
            assertTrue(late.verified > 0);
        } finally {
            a.close();
            b.close();
        }
    }

    @Test
    void discoveryFollowsReferralsToEveryPath(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("shared.img");
        int pa = Ports.free();
        int pb = Ports.free();
        String referralTo = "\"subsystems\": [\"" + NQN + "\"],";
        try (Target a = new Target(); Target b = new Target()) {
            for (Target t : List.of(a, b)) {
                int own = t == a ? pa : pb;
                int other = t == a ? pb : pa;
                new ConfigApplier(t).apply(ConfigLoader.parse(GatewaysTest.config(file, t == a ? 1 : 1000,
                        t == a ? 999 : 1999, t == a ? "optimized" : "non-optimized")
                        .replace("\"trsvcid\": 0", "\"trsvcid\": " + own)
                        .replace(referralTo, referralTo + " \"referrals\": [{\"trtype\": \"tcp\", \"traddr\": \"127.0.0.1\","
                                + " \"trsvcid\": " + other + ", \"portid\": 1}],")));
            }
            List<NvmeofUri> found = Multipath.discover("nvme+tcp://127.0.0.1:" + pa, NQN, options());
            assertEquals(List.of(pa, pb), found.stream().map(NvmeofUri::port).toList(), "A's own entry, then B's through the referral");
            try (Multipath m = Multipath.connect(found, options())) {
                io(m.namespace(1), 4, 13);
                assertEquals("optimized", m.paths().get(0).anaState(1));
                assertEquals("non-optimized", m.paths().get(1).anaState(1));
            }
        }
    }

    @Test
    void aPathToAnotherNamespaceIsRefused(@TempDir Path dir) throws Exception {
        int pa = Ports.free();
        int pb = Ports.free();
        try (Target a = gateway(dir.resolve("a.img"), pa, 1, "optimized");
                Target b = gateway(dir.resolve("b.img"), pb, 1000, "optimized", "9d4c0e1a-0000-4000-8000-000000000001");
                Multipath m = Nvmeof.connectMultipath(uri(pa, pb), options().ioPolicy(Multipath.Policy.ROUND_ROBIN))) {
            BlockDevice d = m.namespace(1);
            assertEquals("refused", m.paths().get(1).state());
            assertTrue(m.paths().get(1).problem().contains("another namespace"), m.paths().get(1).problem());
            io(d, 10, 12);
            assertEquals(0, m.paths().get(1).ios());
        }
    }

    @Test
    void roundRobinAndQueueDepthSpreadOverEqualPaths(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("shared.img");
        int pa = Ports.free();
        int pb = Ports.free();
        for (Multipath.Policy policy : List.of(Multipath.Policy.ROUND_ROBIN, Multipath.Policy.QUEUE_DEPTH)) {
            try (Target a = gateway(file, pa, 1, "optimized"); Target b = gateway(file, pb, 1000, "optimized");
                    Multipath m = Nvmeof.connectMultipath(uri(pa, pb), options().ioPolicy(policy))) {
                BlockDevice d = m.namespace(1);
                BackgroundIo[] loads = {new BackgroundIo(d, 20), new BackgroundIo(d, 21), new BackgroundIo(d, 22)};
                for (BackgroundIo l : loads) {
                    l.start();
                }
                for (BackgroundIo l : loads) {
                    await(policy + ": " + l.thread.getName() + " verified 100 blocks", () -> l.verified >= 100);
                }
                for (BackgroundIo l : loads) {
                    l.stop();
                    assertEquals(0, l.errors, String.valueOf(l.firstError));
                }
                long ia = m.paths().get(0).ios();
                long ib = m.paths().get(1).ios();
                assertTrue(ia > 0 && ib > 0, policy + ": " + ia + " and " + ib);
                if (policy == Multipath.Policy.ROUND_ROBIN) {
                    assertTrue(Math.abs(ia - ib) <= Math.max(8, (ia + ib) / 10), policy + ": " + ia + " and " + ib);
                }
            }
        }
    }

    /** Writes and verifies its own blocks from a thread until stopped; counts errors. */
    static final class BackgroundIo {
        final BlockDevice d;
        final int seed;
        final Thread thread;
        volatile boolean stop;
        volatile int errors;
        volatile Throwable firstError;
        volatile int verified;

        BackgroundIo(BlockDevice d, int seed) {
            this.d = d;
            this.seed = seed;
            this.thread = new Thread(this::run, "io-" + seed);
        }

        void start() {
            thread.start();
        }

        void stop() throws InterruptedException {
            stop = true;
            thread.join(60_000);
        }

        private void run() {
            int r = 0;
            while (!stop) {
                long at = 4096L * ((seed % 16) * 64 + r % 64);
                ByteBuffer w = pattern(4096, seed * 1000 + r);
                try {
                    d.write(at, w.duplicate());
                    ByteBuffer back = ByteBuffer.allocateDirect(4096);
                    d.read(at, back);
                    if (!w.clear().equals(back.flip())) {
                        throw new AssertionError("block at " + at + " read back different");
                    }
                    verified++;
                } catch (Throwable t) {
                    if (errors++ == 0) {
                        firstError = t;
                    }
                }
                r++;
            }
        }
    }
}
