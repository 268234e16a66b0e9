package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.protocol.AnaLog;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The path selector and the failover logic of {@link Multipath}, through {@link FakeFabric}: two
 * ports in front of one volume, every fault made by hand, no socket and no target process.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MultipathFailoverTest {
    private static final AtomicInteger NEXT = new AtomicInteger(1000);
    private FakeFabric.Volume volume;
    private FakeFabric.Port a;
    private FakeFabric.Port b;

    @BeforeEach
    void twoPorts() {
        int n = NEXT.addAndGet(2);
        volume = new FakeFabric.Volume("nqn.2026-11.io.nvmeof:fake" + n, 256, n);
        a = FakeFabric.port("127.0.0.1:" + n, volume, 1);
        b = FakeFabric.port("127.0.0.1:" + (n + 1), volume, 1000);
        b.ana = AnaLog.NON_OPTIMIZED;
    }

    @AfterEach
    void removePorts() {
        FakeFabric.remove(a);
        FakeFabric.remove(b);
    }

    private Multipath connect(ConnectOptions o) throws IOException {
        return Multipath.connect(List.of(NvmeofUri.parse(a.uri()), NvmeofUri.parse(b.uri())), o);
    }

    private static ConnectOptions options() {
        return ConnectOptions.defaults().ioQueues(1).keepAlive(Duration.ofSeconds(1)).reconnectDelay(Duration.ofMillis(50))
                .commandTimeout(Duration.ofSeconds(2)).controllerLossTimeout(Duration.ofSeconds(20));
    }

    private static void writeRead(BlockDevice d, int seed) throws IOException {
        ByteBuffer w = ByteBuffer.allocateDirect(4096);
        for (int i = 0; i < 4096; i++) {
            w.put(i, (byte) (seed + i));
        }
        long at = 4096L * (seed % 200);
        d.write(at, w.duplicate());
        ByteBuffer r = ByteBuffer.allocateDirect(4096);
        d.read(at, r);
        assertEquals(w.clear(), r.flip());
    }

    private static void await(String what, Callable<Boolean> c) {
        Awaitility.await(what).atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5)).until(c);
    }

    @Test
    void optimizedFirstThenFailoverOnEveryPathError() throws Exception {
        try (Multipath m = connect(options())) {
            BlockDevice d = m.namespace(1);
            writeRead(d, 1);
            assertEquals(2, a.ios.get());
            assertEquals(0, b.ios.get());

            // a path status, an SQ deletion, a transient transport error: each runs again on B
            int s = 2;
            for (Status st : List.of(Status.INTERNAL_PATH_ERROR, Status.ABORTED_SQ_DELETION, Status.TRANSIENT_TRANSPORT_ERROR)) {
                a.failNext(NvmOpcode.WRITE.code, 1, st);
                int before = b.ios.get();
                writeRead(d, s++);
                assertEquals(before + 1, b.ios.get(), st.name() + " went to B");
            }
            assertEquals(3, m.paths().get(0).failovers());

            // the caller's: DNR, media, reservation conflict, LBA out of range
            for (Status st : List.of(Status.INTERNAL_PATH_ERROR.withDnr(true), Status.UNRECOVERED_READ_ERROR,
                    Status.of(Status.SCT_GENERIC, 0x83, false, true), Status.LBA_OUT_OF_RANGE)) {
                a.failNext(NvmOpcode.READ.code, 1, st);
                NvmeStatusException e = assertThrows(NvmeStatusException.class, () -> writeRead(d, 9));
                assertEquals(st.sc(), e.status().sc(), st.name());
            }
            assertEquals(3, m.failovers());
        }
    }

    /** A gateway killed while the device is being opened: the next live path answers (CI saw the bench fail here). */
    @Test
    void aPathLostWhileTheNamespaceIsOpenedLeavesItToTheNextPath() throws Exception {
        try (Multipath m = connect(options())) {
            a.dropOnIdentifyNamespace = true;
            BlockDevice d = m.namespace(1);
            assertEquals(volume.blocks() * 4096, d.size());
            writeRead(d, 3);
        }
    }

    @Test
    void aBurstOfAnaStatusesReadsTheAnaLogOnceMoreNotOncePerCommand() throws Exception {
        try (Multipath m = connect(options())) {
            BlockDevice d = m.namespace(1);
            writeRead(d, 1);
            int before = a.anaLogReads.get();
            a.holdIo = true;          // 32 writes in flight on A, answered at once with ANA statuses
            a.holdAnaLog = true;      // the first read stays in flight while the others' statuses come
            a.failNext(NvmOpcode.WRITE.code, 32, Status.ANA_INACCESSIBLE);
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                writes.add(d.writeAsync(i * 4096L, ByteBuffer.allocateDirect(4096)));
            }
            await("32 writes on A", () -> m.paths().get(0).inflight() == 32);
            a.releaseIo();
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
            assertEquals(32, m.paths().get(0).failovers(), "every write failed over to B");
            a.releaseAnaLog();
            await("A read again", () -> m.paths().get(0).anaState(1).equals("optimized") && m.waiting() == 0);
            // and no more reads come after: one in flight, one queued behind it
            Awaitility.await("ANA log reads for 32 ANA statuses").during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(20))
                    .until(() -> a.anaLogReads.get() - before <= 2);
            int reads = a.anaLogReads.get() - before;
            assertTrue(reads >= 1 && reads <= 2, reads + " ANA log reads for 32 ANA statuses: one in flight, one queued behind it");
        }
    }

    @Test
    void anaChangesMoveIoAndBack() throws Exception {
        try (Multipath m = connect(options())) {
            BlockDevice d = m.namespace(1);
            writeRead(d, 1);
            a.ana(AnaLog.INACCESSIBLE);
            await("A inaccessible", () -> m.paths().get(0).anaState(1).equals("inaccessible"));
            int onB = b.ios.get();
            writeRead(d, 2);
            assertEquals(onB + 2, b.ios.get());
            a.ana(AnaLog.OPTIMIZED);
            await("A optimized", () -> m.paths().get(0).anaState(1).equals("optimized"));
            int onA = a.ios.get();
            writeRead(d, 3);
            assertEquals(onA + 2, a.ios.get());
            // an ANA status before the notice: that command goes to B, and A is read again
            a.failNext(NvmOpcode.WRITE.code, 1, Status.ANA_TRANSITION);
            writeRead(d, 4);
            assertTrue(m.paths().get(0).failovers() >= 1);
        }
    }

    @Test
    void aPortGoingDownAndAPartitionFailOverAndBack() throws Exception {
        try (Multipath m = connect(options())) {
            BlockDevice d = m.namespace(1);
            writeRead(d, 1);
            a.down();
            writeRead(d, 2);                     // on B, no error
            assertTrue(b.ios.get() >= 2);
            a.up();
            await("A live again", () -> m.paths().get(0).state().equals("live"));
            await("I/O back on A", () -> {
                int before = a.ios.get();
                writeRead(d, 3);
                return a.ios.get() > before;
            });

            // a partition: A answers nothing and closes nothing; its keep-alive (KATO 1 s) notices
            a.partition(true);
            long t0 = System.nanoTime();
            writeRead(d, 4);                     // waits until A's association is reset, then on B
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms < 10_000, "failed over after " + ms + " ms");
            a.partition(false);
            await("A live after the partition", () -> m.paths().get(0).state().equals("live"));
        }
    }

    @Test
    void policiesAndNoPath() throws Exception {
        b.ana = AnaLog.OPTIMIZED;
        try (Multipath m = connect(options().ioPolicy(Multipath.Policy.ROUND_ROBIN))) {
            BlockDevice d = m.namespace(1);
            for (int i = 0; i < 20; i++) {
                writeRead(d, i);
            }
            assertEquals(20, a.ios.get());
            assertEquals(20, b.ios.get());
        }
        a.ios.set(0);
        b.ios.set(0);
        try (Multipath m = connect(options().noPathTimeout(Duration.ofMillis(300)))) {
            BlockDevice d = m.namespace(1);
            writeRead(d, 1);
            a.down();
            b.down();
            long t0 = System.nanoTime();
            IOException e = assertThrows(IOException.class, () -> writeRead(d, 2));
            assertTrue(e.getMessage().contains("no usable path"), e.getMessage());
            assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(250));
        }
    }
}
