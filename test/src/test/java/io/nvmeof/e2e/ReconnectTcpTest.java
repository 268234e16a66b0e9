package io.nvmeof.e2e;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.NvmeofUri;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The target process is killed (SIGKILL) in the middle of a write/read-verify workload and
 * restarted on the same file and port; the initiator reconnects, resubmits what was in
 * flight, and the workload completes with every block verified.
 *
 * <p>The one process-level case: a real kill, a real restart, real sockets over NVMe/TCP. The
 * host's side of it (outages, partitions, resubmission, verification) is driven in milliseconds
 * through FakeFabric by {@code io.nvmeof.initiator.ReconnectFakeFabricTest}, and over each fabric
 * by the in-process suites (InitiatorApiSuite's timed-out command).
 */
class ReconnectTcpTest {
    private static Fabric fabric() {
        return Fabric.TCP;
    }

    static final String NQN = "nqn.2026-11.io.nvmeof:reconnect";
    static final int REGION = 4 << 20;
    static final int WORKERS = 4;

    @TempDir
    static Path dir;

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void workloadSurvivesATargetKilledAndRestarted() throws Exception {
        int port = Ports.free(); // listened on again after the kill
        String[] args = {"--listen", fabric().listen(port), "--subsystem", NQN, "--namespace",
                "file:" + dir.resolve("disk.img") + ",size=" + (WORKERS * REGION)};
        TargetProcess first = TargetProcess.start(fabric(), dir, args);
        byte[][] model = new byte[WORKERS][REGION];
        AtomicLong verified = new AtomicLong();
        AtomicLong ios = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        ConnectOptions o = ConnectOptions.defaults().ioQueues(2).queueSize(16).commandTimeout(Duration.ofSeconds(10))
                .reconnectDelay(Duration.ofMillis(250)).controllerLossTimeout(Duration.ofSeconds(60));
        TargetProcess second = null;
        try (Controller c = Controller.connect(NvmeofUri.parse(fabric().uri(port, NQN)), o)) {
            BlockDevice dev = c.namespace(1);
            List<Thread> workers = new ArrayList<>();
            for (int w = 0; w < WORKERS; w++) {
                int id = w;
                Thread t = new Thread(() -> {
                    Random rnd = new Random(id);
                    long base = (long) id * REGION;
                    try {
                        for (int i = 0; i < 400; i++) {
                            int blocks = 1 + rnd.nextInt(16);
                            int at = rnd.nextInt(REGION / 4096 - blocks) * 4096;
                            byte[] data = new byte[blocks * 4096];
                            rnd.nextBytes(data);
                            dev.write(base + at, ByteBuffer.wrap(data));
                            System.arraycopy(data, 0, model[id], at, data.length);
                            ByteBuffer back = ByteBuffer.allocate(data.length);
                            dev.read(base + at, back);
                            assertArrayEquals(data, back.array(), "worker " + id + " iteration " + i);
                            verified.addAndGet(data.length);
                            ios.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "worker-" + w);
                t.start();
                workers.add(t);
            }
            // let the workload run, then kill the target in the middle of it
            await("200 I/Os before the kill").atMost(TargetProcess.PATIENCE)
                    .failFast("the workload failed", () -> failure.get() != null).until(() -> ios.get() >= 200);
            long before = ios.get();
            first.process.destroyForcibly();
            assertTrue(first.process.waitFor(10, TimeUnit.SECONDS), "the target died");
            // the target is gone for good: for a second, nothing but what was already answered completes
            await("no I/O completes while the target is down").during(Duration.ofSeconds(1))
                    .atMost(Duration.ofSeconds(10)).until(() -> ios.get() - before < 8);
            second = TargetProcess.start(fabric(), dir, args);
            for (Thread t : workers) {
                t.join(TimeUnit.MINUTES.toMillis(2));
            }
            if (failure.get() != null) {
                throw new AssertionError("workload failed", failure.get());
            }
            assertEquals(WORKERS * 400, ios.get());
            assertTrue(c.reconnects() >= 1, "the initiator reconnected");
            // and the whole device matches what the workers wrote
            for (int w = 0; w < WORKERS; w++) {
                ByteBuffer all = ByteBuffer.allocate(REGION);
                dev.read((long) w * REGION, all);
                assertArrayEquals(model[w], all.array(), "region " + w);
            }
        } finally {
            first.close();
            if (second != null) {
                assertEquals(0, second.stop());
                second.assertNoLeaks();
                second.close();
            }
        }
    }
}
