package io.nvmeof.testing;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.initiator.NvmeTimeoutException;
import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import io.nvmeof.target.Faults;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Each fault, and what our initiator does under it: the statuses, timeouts and reconnects an
 * application on top of it sees. Every test gets a fresh target from the class annotation.
 */
@NvmeofTarget(namespaces = {"16MiB", "1MiB"})
class FaultsTest {
    private static final int BLOCK = 4096;

    /** Quick recovery for tests: short reconnect delay and timeouts. */
    private static ConnectOptions options() {
        return ConnectOptions.defaults().ioQueues(2).reconnectDelay(Duration.ofMillis(100))
                .connectTimeout(Duration.ofSeconds(2)).controllerLossTimeout(Duration.ofSeconds(30));
    }

    private static ByteBuffer pattern(int seed, int length) {
        ByteBuffer b = ByteBuffer.allocateDirect(length);
        for (int i = 0; i < length; i++) {
            b.put(i, (byte) (seed * 31 + i * 7));
        }
        return b;
    }

    private static byte[] read(BlockDevice d, long offset, int length) throws IOException {
        ByteBuffer b = ByteBuffer.allocateDirect(length);
        d.read(offset, b);
        byte[] out = new byte[length];
        b.flip().get(out);
        return out;
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.capacity()];
        b.duplicate().clear().get(out);
        return out;
    }

    @Test
    void aDelayAddsLatencyAndOneLongerThanTheCommandTimeoutEndsInATimeoutError(EmbeddedTarget target) throws Exception {
        try (Controller c = Nvmeof.connect(target.uri(), options().commandTimeout(Duration.ofSeconds(1))
                .controllerLossTimeout(Duration.ZERO))) {
            BlockDevice disk = c.namespace(1);
            target.namespace(1).delay(Duration.ofMillis(800));
            long t0 = System.nanoTime();
            disk.write(0, pattern(1, BLOCK));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms >= 800, "a write under an 800 ms delay took " + ms + " ms");
            // namespace 2 is not delayed
            t0 = System.nanoTime();
            c.namespace(2).read(0, ByteBuffer.allocateDirect(BLOCK));
            assertTrue(System.nanoTime() - t0 < TimeUnit.MILLISECONDS.toNanos(600), "namespace 2 was delayed too");

            target.clearFaults();
            target.namespace(1).delay(Duration.ofSeconds(4));
            t0 = System.nanoTime();
            IOException e = assertThrows(IOException.class, () -> disk.read(0, ByteBuffer.allocateDirect(BLOCK)));
            ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            // the initiator asks for an Abort at the timeout, then resets the association; with no
            // controller-loss time left the caller gets the error at once
            assertTrue(e.getMessage().contains("timed out"), e.toString());
            assertTrue(ms >= 1000 && ms < 8000, "the timeout came after " + ms + " ms");
        }
    }

    @Test
    void droppedConnectionsAreRebuiltAndInFlightIoIsRetriedWithoutAnError(EmbeddedTarget target) throws Exception {
        try (Controller c = Nvmeof.connect(target.uri(), options())) {
            BlockDevice disk = c.namespace(1);
            ByteBuffer before = pattern(2, 64 * BLOCK);
            disk.write(0, before.duplicate());
            // writes in flight while the connections go: held in the target (before their R2T) by a
            // delay, so none can have completed before the drop, however fast this machine is
            Faults.Rule hold = target.namespace(1).delay(Duration.ofSeconds(5));
            List<CompletableFuture<Void>> writes = new CopyOnWriteArrayList<>();
            for (int i = 0; i < 32; i++) {
                writes.add(disk.writeAsync((64 + i) * (long) BLOCK, pattern(100 + i, BLOCK)));
            }
            Thread.sleep(200);
            assertEquals(1, target.dropConnections());
            hold.remove();
            for (CompletableFuture<Void> w : writes) {
                w.get(20, TimeUnit.SECONDS);
            }
            assertEquals(1, c.reconnects(), "the writes completed on the new association");
            assertArrayEquals(bytes(before), read(disk, 0, 64 * BLOCK));
            for (int i = 0; i < 32; i++) {
                assertArrayEquals(bytes(pattern(100 + i, BLOCK)), read(disk, (64 + i) * (long) BLOCK, BLOCK));
            }
        }
    }

    @Test
    void withoutAControllerLossTimeoutADroppedConnectionFailsTheNextIo(EmbeddedTarget target) throws Exception {
        try (Controller c = Nvmeof.connect(target.uri(), options().controllerLossTimeout(Duration.ZERO))) {
            BlockDevice disk = c.namespace(1);
            disk.write(0, pattern(3, BLOCK));
            target.dropConnections();
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                try {
                    disk.read(0, ByteBuffer.allocateDirect(BLOCK));
                    return false;
                } catch (IOException e) {
                    return e.getMessage().contains("lost the connection");
                }
            });
        }
    }

    @Test
    void theNextCommandsOfAnOpcodeFailWithTheChosenStatusAndThenWorkAgain(EmbeddedTarget target) throws Exception {
        try (Controller c = Nvmeof.connect(target.uri(), options())) {
            BlockDevice disk = c.namespace(1);
            disk.write(0, pattern(4, BLOCK));
            target.failNext(NvmOpcode.WRITE.code, 2, Status.WRITE_FAULT);
            for (int i = 0; i < 2; i++) {
                IOException e = assertThrows(IOException.class, () -> disk.write(0, pattern(5, BLOCK)));
                NvmeStatusException s = assertInstanceOf(NvmeStatusException.class, e, e.toString());
                assertEquals(Status.WRITE_FAULT, s.status());
            }
            // reads were never matched; the failed writes changed nothing
            assertArrayEquals(bytes(pattern(4, BLOCK)), read(disk, 0, BLOCK));
            disk.write(0, pattern(6, BLOCK)); // the third write goes through: the rule lifted itself
            assertArrayEquals(bytes(pattern(6, BLOCK)), read(disk, 0, BLOCK));
            assertTrue(target.faults().rules().isEmpty());

            // a status with DNR, on the admin queue
            target.failNextAdmin(AdminOpcode.IDENTIFY.code, 1, Status.INTERNAL_ERROR.withDnr(true));
            NvmeStatusException s = assertThrows(NvmeStatusException.class, () -> c.identifyNamespace(1));
            assertEquals(Status.INTERNAL_ERROR.withDnr(true), s.status());
            assertTrue(s.status().dnr());
            assertEquals(16 << 20, c.identifyNamespace(1).nsze() * BLOCK); // the next one is answered
        }
    }

    @Test
    void aStalledTargetTimesTheCommandOutAndAfterResumeTheInitiatorIsBackWithItsData(EmbeddedTarget target)
            throws Exception {
        try (Controller c = Nvmeof.connect(target.uri(), options().commandTimeout(Duration.ofSeconds(1))
                .connectTimeout(Duration.ofSeconds(1)))) {
            BlockDevice disk = c.namespace(1);
            disk.write(0, pattern(7, BLOCK));
            target.stall();
            long t0 = System.nanoTime();
            // unanswered: at the command timeout the initiator asks for an Abort (held too), then
            // resets the association and fails the command to its caller
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> disk.readAsync(0, ByteBuffer.allocateDirect(BLOCK)).get(20, TimeUnit.SECONDS));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertInstanceOf(NvmeTimeoutException.class, e.getCause(), e.toString());
            assertTrue(ms >= 1000 && ms < 10000, "the timeout came after " + ms + " ms");
            // its reconnect attempts are held as well: the controller stays away while the stall lasts
            await().atMost(Duration.ofSeconds(10)).until(() -> target.faults().heldCount() >= 3);
            assertEquals(0, c.reconnects());
            target.resume();
            await().atMost(Duration.ofSeconds(20)).until(() -> c.reconnects() == 1);
            assertArrayEquals(bytes(pattern(7, BLOCK)), read(disk, 0, BLOCK));
            assertEquals(0, target.faults().heldCount());
        }
    }

    @Test
    void aStallShorterThanTheCommandTimeoutOnlyDelays(EmbeddedTarget target) throws Exception {
        try (Controller c = Nvmeof.connect(target.uri(), options().commandTimeout(Duration.ofSeconds(10)))) {
            BlockDevice disk = c.namespace(1);
            disk.write(0, pattern(15, BLOCK));
            target.namespace(1).stall();
            ByteBuffer into = ByteBuffer.allocateDirect(BLOCK);
            CompletableFuture<Void> r = disk.readAsync(0, into);
            await().atMost(Duration.ofSeconds(5)).until(() -> target.faults().heldCount() == 1);
            await("the stalled read stays unanswered").during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5))
                    .until(() -> !r.isDone());
            target.resume();
            r.get(10, TimeUnit.SECONDS);
            assertArrayEquals(bytes(pattern(15, BLOCK)), bytes(into));
            assertEquals(0, c.reconnects());
        }
    }

    @Test
    void aNamespaceMadeReadOnlyRefusesWritesAndTheInitiatorSeesItsAttribute(EmbeddedTarget target) throws Exception {
        try (Controller c = Nvmeof.connect(target.uri(), options())) {
            BlockDevice disk = c.namespace(1);
            disk.write(0, pattern(8, BLOCK));
            assertFalse(disk.readOnly());
            target.namespace(1).readOnly(true);
            await().atMost(Duration.ofSeconds(10)).until(disk::readOnly); // the notice, then Identify Namespace
            NvmeStatusException s = assertThrows(NvmeStatusException.class, () -> disk.write(0, pattern(9, BLOCK)));
            assertEquals(Status.NAMESPACE_WRITE_PROTECTED, s.status());
            assertThrows(NvmeStatusException.class, () -> disk.writeZeroes(0, BLOCK));
            assertArrayEquals(bytes(pattern(8, BLOCK)), read(disk, 0, BLOCK));
            assertFalse(c.namespace(2).readOnly());
            c.namespace(2).write(0, pattern(10, BLOCK)); // the other namespace is writable

            target.namespace(1).readOnly(false);
            await().atMost(Duration.ofSeconds(10)).until(() -> !disk.readOnly());
            disk.write(0, pattern(11, BLOCK));
            assertArrayEquals(bytes(pattern(11, BLOCK)), read(disk, 0, BLOCK));
        }
    }

    @Test
    void aResizedNamespaceKeepsItsDataAndTheInitiatorFollowsItsSize(EmbeddedTarget target) throws Exception {
        try (Controller c = Nvmeof.connect(target.uri(), options())) {
            BlockDevice disk = c.namespace(1);
            assertEquals(16 << 20, disk.size());
            ByteBuffer head = pattern(12, 256 * BLOCK);
            disk.write(0, head.duplicate());
            disk.write((16 << 20) - BLOCK, pattern(13, BLOCK));

            target.namespace(1).resize(40L << 20);
            await().atMost(Duration.ofSeconds(10)).until(() -> disk.size() == 40L << 20);
            assertArrayEquals(bytes(head), read(disk, 0, 256 * BLOCK));
            assertArrayEquals(bytes(pattern(13, BLOCK)), read(disk, (16 << 20) - BLOCK, BLOCK));
            assertArrayEquals(new byte[BLOCK], read(disk, 16 << 20, BLOCK), "grown space reads as zeroes");
            disk.write((40L << 20) - BLOCK, pattern(14, BLOCK));
            assertArrayEquals(bytes(pattern(14, BLOCK)), read(disk, (40L << 20) - BLOCK, BLOCK));

            target.namespace(1).resize(8 << 20);
            await().atMost(Duration.ofSeconds(10)).until(() -> disk.size() == 8 << 20);
            assertArrayEquals(bytes(head), read(disk, 0, 256 * BLOCK));
            assertThrows(IllegalArgumentException.class, () -> read(disk, 8 << 20, BLOCK));
            assertEquals(8 << 20, target.namespace(1).namespace().blocks() * BLOCK);
        }
    }

    @Test
    void anAsynchronousEventReachesTheApplicationsListener(EmbeddedTarget target) throws Exception {
        try (Controller c = Nvmeof.connect(target.uri(), options())) {
            List<Controller.AsyncEvent> events = new CopyOnWriteArrayList<>();
            c.onEvent(events::add);
            // SMART / health status, "temperature threshold", the SMART / Health log
            assertEquals(1, target.asyncEvent(1, 1, 2));
            await().atMost(Duration.ofSeconds(10)).until(() -> !events.isEmpty());
            Controller.AsyncEvent e = events.get(0);
            assertEquals(1, e.type());
            assertEquals(1, e.info());
            assertEquals(2, e.logPage());
            c.namespace(1).read(0, ByteBuffer.allocateDirect(BLOCK)); // and I/O goes on
        }
    }

    @Test
    void faultsForOneHostLeaveTheOtherHostsConnectionsAlone(EmbeddedTarget target) throws Exception {
        String slow = "nqn.2014-08.org.nvmexpress:uuid:" + UUID.randomUUID();
        String fast = "nqn.2014-08.org.nvmexpress:uuid:" + UUID.randomUUID();
        try (Controller a = Nvmeof.connect(target.uri(), options().identity(HostIdentity.of(slow, UUID.randomUUID())));
             Controller b = Nvmeof.connect(target.uri(), options().identity(HostIdentity.of(fast, UUID.randomUUID())))) {
            target.host(slow).delay(Duration.ofMillis(1000));
            long t0 = System.nanoTime();
            b.namespace(1).read(0, ByteBuffer.allocateDirect(BLOCK));
            assertTrue(System.nanoTime() - t0 < TimeUnit.MILLISECONDS.toNanos(700), "the other host was delayed");
            t0 = System.nanoTime();
            a.namespace(1).read(0, ByteBuffer.allocateDirect(BLOCK));
            assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(1000), "the host was not delayed");

            assertEquals(1, target.host(slow).dropConnections());
            await().atMost(Duration.ofSeconds(10)).until(() -> a.reconnects() == 1);
            a.namespace(1).read(0, ByteBuffer.allocateDirect(BLOCK));
            assertEquals(0, b.reconnects());
        }
    }
}
