package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.NvmeofUri;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The target as its own JVM from the built jar, a file namespace, and the initiator: 64 MiB
 * of random data at random block-aligned offsets, several queues in flight, everything read
 * back and compared; then the target is killed (SIGKILL) after the Flush, restarted on the same
 * file, everything compared again, and stopped cleanly with SIGTERM.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class EndToEndSuite {
    /** The fabric this run of the suite uses. */
    abstract Fabric fabric();

    static final String NQN = "nqn.2026-11.io.nvmeof:e2e";
    static final int SPACE = 128 << 20;
    static final int BLOCK = 4096;

    @TempDir
    static Path dir;

    /** Disjoint extents of random block-aligned sizes (4 KiB - 256 KiB) covering the space, shuffled. */
    List<long[]> extents(Random rnd) {
        List<long[]> all = new ArrayList<>();
        long at = 0;
        while (at < SPACE) {
            long len = Math.min((1 + rnd.nextInt(64)) * (long) BLOCK, SPACE - at);
            all.add(new long[] {at, len});
            at += len;
        }
        Collections.shuffle(all, rnd);
        return all;
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void sixtyFourMebibytesAtRandomOffsetsSurviveRestart() throws Exception {
        Path disk = dir.resolve("disk.img");
        byte[] model = new byte[SPACE];
        Random rnd = new Random(20261122);
        List<long[]> written = new ArrayList<>();
        long total = 0;
        for (long[] e : extents(rnd)) {
            if (total >= 64 << 20) {
                break;
            }
            byte[] chunk = new byte[(int) e[1]];
            rnd.nextBytes(chunk);
            System.arraycopy(chunk, 0, model, (int) e[0], chunk.length);
            written.add(e);
            total += e[1];
        }
        assertTrue(total >= 64 << 20);

        try (TargetProcess t = TargetProcess.start(fabric(), dir, "--listen", fabric().listen(), "--subsystem", NQN,
                "--namespace", "file:" + disk + ",size=" + SPACE)) {
            ConnectOptions o = ConnectOptions.defaults().ioQueues(4).queueSize(32);
            try (Controller c = Controller.connect(NvmeofUri.parse(t.uri(NQN)), o)) {
                assertEquals(4, c.ioQueueCount());
                BlockDevice dev = c.namespace(1);
                assertEquals(SPACE, dev.size());
                assertEquals(BLOCK, dev.blockSize());
                Semaphore inFlight = new Semaphore(48);
                List<CompletableFuture<Void>> writes = new ArrayList<>();
                for (long[] e : written) {
                    inFlight.acquire();
                    ByteBuffer b = ByteBuffer.allocateDirect((int) e[1]);
                    b.put(model, (int) e[0], (int) e[1]).flip();
                    CompletableFuture<Void> f = dev.writeAsync(e[0], b);
                    f.whenComplete((v, x) -> inFlight.release());
                    writes.add(f);
                }
                CompletableFuture.allOf(writes.toArray(new CompletableFuture[0])).get(2, TimeUnit.MINUTES);
                dev.flush();
                verifyAll(dev, model);
                // A completed Flush survives a crash of the target process: SIGKILL, no goodbye.
                t.process.destroyForcibly();
                assertTrue(t.process.waitFor(10, TimeUnit.SECONDS));
            }
        }

        // Restart on the same file: everything flushed before the crash is there.
        try (TargetProcess t = TargetProcess.start(fabric(), dir, "--listen", fabric().listen(), "--subsystem", NQN,
                "--namespace", "file:" + disk)) {
            try (Controller c = Controller.connect(NvmeofUri.parse(t.uri(NQN)), ConnectOptions.defaults().ioQueues(2))) {
                verifyAll(c.namespace(1), model);
            }
            assertEquals(0, t.stop(), "clean exit on SIGTERM");
            assertTrue(t.out().contains("nvmeof target stopped"), t.out());
            t.assertNoLeaks();
        }
    }

    /** Reads the whole namespace in shuffled 1 MiB pieces with 16 in flight and compares with the model. */
    void verifyAll(BlockDevice dev, byte[] model) throws Exception {
        int piece = 1 << 20;
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < model.length / piece; i++) {
            order.add(i);
        }
        Collections.shuffle(order, new Random(1));
        Semaphore inFlight = new Semaphore(16);
        List<CompletableFuture<Void>> reads = new ArrayList<>();
        for (int i : order) {
            inFlight.acquire();
            ByteBuffer b = ByteBuffer.allocateDirect(piece);
            CompletableFuture<Void> f = dev.readAsync((long) i * piece, b).thenRun(() -> {
                byte[] got = new byte[piece];
                b.flip().get(got);
                byte[] want = new byte[piece];
                System.arraycopy(model, i * piece, want, 0, piece);
                assertArrayEquals(want, got, "MiB " + i + " differs");
            });
            f.whenComplete((v, x) -> inFlight.release());
            reads.add(f);
        }
        CompletableFuture.allOf(reads.toArray(new CompletableFuture[0])).get(2, TimeUnit.MINUTES);
    }
}
