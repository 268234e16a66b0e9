package io.nvmeof.initiator;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The host's side of a lost target, through {@link FakeFabric}: a write/read-verify workload on
 * four threads while the port goes down and comes back (three times), or is partitioned (nothing
 * closes, nothing is answered) and heals. The controller reconnects, resubmits what was in
 * flight, and every block verifies, both as read back and as the fabric's volume holds it. No
 * process is killed and nothing waits for the clock: each step waits for the state it needs, so
 * this takes well under a second per outage. ReconnectTcpTest (in io.nvmeof.e2e) does it once
 * with a real target process SIGKILLed and restarted.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ReconnectFakeFabricTest {
    private static final AtomicInteger NEXT = new AtomicInteger(7000);
    /** How long an event may take on a busy machine: a bound, not an expectation. */
    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private static final int REGION = 1 << 20;
    private static final int WORKERS = 4;

    private FakeFabric.Volume volume;
    private FakeFabric.Port port;

    @BeforeEach
    void aPort() {
        int n = NEXT.incrementAndGet();
        volume = new FakeFabric.Volume("nqn.2026-11.io.nvmeof:reconnect" + n, WORKERS * REGION / 4096, n);
        port = FakeFabric.port("127.0.0.1:" + n, volume, 1);
    }

    @AfterEach
    void removePort() {
        FakeFabric.remove(port);
    }

    private Controller connect(ConnectOptions o) throws Exception {
        return Controller.connect(NvmeofUri.parse(port.uri()), o);
    }

    @Test
    void aWorkloadSurvivesThreeOutagesOfThePort() throws Exception {
        // no keep-alive: a port that goes down ends its queues, and nothing then waits out a KATO before resubmitting
        ConnectOptions o = ConnectOptions.defaults().ioQueues(2).queueSize(16).keepAlive(Duration.ZERO)
                .commandTimeout(Duration.ofSeconds(10)).reconnectDelay(Duration.ofMillis(10)).controllerLossTimeout(PATIENCE);
        try (Controller c = connect(o)) {
            Workload w = new Workload(c.namespace(1));
            w.start();
            for (int outage = 1; outage <= 3; outage++) {
                w.awaitMore(200);
                port.down();
                await("the association is gone").atMost(PATIENCE)
                        .until(() -> port.queues.isEmpty() && c.state() != ControllerState.LIVE);
                // down: no queue, none to be had, so the port answers nothing; the workload gets at most
                // the answers that were on their way to its threads
                long before = w.ios.get();
                int answered = port.ios.get();
                await("no I/O completes while the port is down").during(Duration.ofMillis(200)).atMost(PATIENCE)
                        .until(() -> port.ios.get() == answered && w.ios.get() - before < 2 * WORKERS);
                port.up();
                int reconnects = outage;
                await("reconnected").atMost(PATIENCE)
                        .until(() -> c.state() == ControllerState.LIVE && c.reconnects() == reconnects);
            }
            w.awaitMore(200);
            w.stopAndVerify();
            assertEquals(3, c.reconnects());
        }
    }

    @Test
    void aWorkloadSurvivesAPartitionOfThePort() throws Exception {
        // a partition closes nothing: only the keep-alive and the command timeout notice it
        ConnectOptions o = ConnectOptions.defaults().ioQueues(2).queueSize(16).keepAlive(Duration.ofSeconds(1))
                .commandTimeout(Duration.ofSeconds(2)).connectTimeout(Duration.ofSeconds(2))
                .reconnectDelay(Duration.ofMillis(10)).controllerLossTimeout(PATIENCE);
        try (Controller c = connect(o)) {
            Workload w = new Workload(c.namespace(1));
            w.start();
            w.awaitMore(200);
            port.partition(true);
            await("the partition noticed").atMost(PATIENCE).until(() -> c.state() != ControllerState.LIVE);
            int answered = port.ios.get();
            await("no I/O is answered across the partition").during(Duration.ofMillis(200)).atMost(PATIENCE)
                    .until(() -> port.ios.get() == answered);
            port.partition(false);
            await("reconnected").atMost(PATIENCE).until(() -> c.state() == ControllerState.LIVE && c.reconnects() >= 1);
            w.awaitMore(200);
            w.stopAndVerify();
        }
    }

    /** Writes random extents of its own region and reads each back, on four threads, until stopped. */
    private final class Workload {
        private final BlockDevice dev;
        private final byte[][] model = new byte[WORKERS][REGION];
        private final List<Thread> threads = new ArrayList<>();
        private final AtomicBoolean stop = new AtomicBoolean();
        final AtomicLong ios = new AtomicLong();
        final AtomicReference<Throwable> failure = new AtomicReference<>();

        Workload(BlockDevice dev) {
            this.dev = dev;
        }

        void start() {
            for (int w = 0; w < WORKERS; w++) {
                int id = w;
                Thread t = new Thread(() -> {
                    Random rnd = new Random(id);
                    long base = (long) id * REGION;
                    try {
                        for (int i = 0; !stop.get(); i++) {
                            int blocks = 1 + rnd.nextInt(16);
                            int at = rnd.nextInt(REGION / 4096 - blocks) * 4096;
                            byte[] data = new byte[blocks * 4096];
                            rnd.nextBytes(data);
                            dev.write(base + at, ByteBuffer.wrap(data));
                            System.arraycopy(data, 0, model[id], at, data.length);
                            ByteBuffer back = ByteBuffer.allocate(data.length);
                            dev.read(base + at, back);
                            assertArrayEquals(data, back.array(), "worker " + id + " iteration " + i);
                            ios.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "worker-" + w);
                t.start();
                threads.add(t);
            }
        }

        /** Waits until {@code n} more write/read pairs have verified; fails at once if a worker failed. */
        void awaitMore(long n) {
            long target = ios.get() + n;
            await(n + " more I/Os").atMost(PATIENCE).failFast("a worker failed", () -> failure.get() != null)
                    .until(() -> ios.get() >= target);
        }

        /** Stops the workers; every region reads back as the workers last wrote it, and the volume agrees. */
        void stopAndVerify() throws Exception {
            stop.set(true);
            for (Thread t : threads) {
                t.join(PATIENCE.toMillis());
                assertTrue(!t.isAlive(), t.getName() + " ended");
            }
            if (failure.get() != null) {
                throw new AssertionError("workload failed", failure.get());
            }
            for (int w = 0; w < WORKERS; w++) {
                byte[] all = new byte[REGION];
                for (int at = 0; at < REGION; at += 64 << 10) {
                    ByteBuffer chunk = ByteBuffer.allocate(64 << 10);
                    dev.read((long) w * REGION + at, chunk);
                    System.arraycopy(chunk.array(), 0, all, at, chunk.capacity());
                }
                assertArrayEquals(model[w], all, "region " + w + " as read back");
                byte[] held;
                synchronized (volume.data) {
                    held = Arrays.copyOfRange(volume.data.array(), w * REGION, (w + 1) * REGION);
                }
                assertArrayEquals(model[w], held, "region " + w + " as the volume holds it");
            }
        }
    }
}
