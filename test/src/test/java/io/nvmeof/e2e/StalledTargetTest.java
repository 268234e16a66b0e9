package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.internal.PlatformDependent;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.RamBackend;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The initiator against a target that stops reading its sockets (a hung target, a stalled
 * network): an application that keeps submitting writes does not make the initiator buffer
 * them all; what it holds in flight is bounded by the queue, the rest waits as the caller's own
 * buffers, and every write fails at its command timeout instead of hanging. Once the target
 * reads again, the controller recovers and writes land.
 */
class StalledTargetTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:stalled";
    static final int SLOT = 256 << 10;
    static final int SLOTS = 128;

    /** A TCP relay on loopback whose host-to-target direction can be stopped: the target then reads nothing. */
    static final class Relay implements AutoCloseable {
        final ServerSocket server;
        private boolean stalled; // guarded by this
        private final List<Socket> sockets = new ArrayList<>();

        Relay(InetSocketAddress target) throws IOException {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread accept = new Thread(() -> {
                try {
                    while (true) {
                        Socket host = server.accept();
                        Socket tgt = new Socket(target.getAddress(), target.getPort());
                        synchronized (sockets) {
                            sockets.add(host);
                            sockets.add(tgt);
                        }
                        pump(host, tgt, true);
                        pump(tgt, host, false);
                    }
                } catch (IOException closed) {
                    // the relay is closed
                }
            }, "relay-accept");
            accept.setDaemon(true);
            accept.start();
        }

        private void pump(Socket from, Socket to, boolean stoppable) {
            Thread t = new Thread(() -> {
                byte[] buf = new byte[64 << 10];
                try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                    while (true) {
                        if (stoppable) {
                            passable();
                        }
                        int n = in.read(buf);
                        if (n < 0) {
                            break;
                        }
                        if (stoppable) {
                            passable(); // what was read as the relay stalled waits with it
                        }
                        out.write(buf, 0, n);
                    }
                } catch (IOException | InterruptedException e) {
                    // either side went away
                } finally {
                    closeQuietly(from);
                    closeQuietly(to);
                }
            }, "relay-pump");
            t.setDaemon(true);
            t.start();
        }

        int port() {
            return server.getLocalPort();
        }

        /** Stops (or lets go again) the host-to-target direction. */
        synchronized void stall(boolean on) {
            stalled = on;
            notifyAll();
        }

        /** Returns once the host-to-target direction is not stopped. */
        private synchronized void passable() throws InterruptedException {
            while (stalled) {
                wait();
            }
        }

        @Override
        public void close() {
            closeQuietly(server);
            synchronized (sockets) {
                sockets.forEach(Relay::closeQuietly);
            }
        }

        private static void closeQuietly(AutoCloseable c) {
            try {
                c.close();
            } catch (Exception ignored) {
                // closing anyway
            }
        }
    }

    /** What slot {@code s} holds: every write of a slot writes the same bytes, so a late duplicate harms nothing. */
    static ByteBuffer pattern(int s) {
        ByteBuffer b = ByteBuffer.allocate(SLOT);
        for (int i = 0; i < SLOT; i += 8) {
            b.putLong(i, (long) s << 32 | i);
        }
        return b.asReadOnlyBuffer();
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void writesToATargetThatStopsReadingStayBoundedAndCompleteWhenItReadsAgain() throws Exception {
        try (Target target = new Target()) {
            Subsystem s = new Subsystem(NQN, "ST1", "stalled", "1.0");
            s.addNamespace(new Namespace(NQN, 1, new RamBackend((long) SLOT * SLOTS, 4096), false, null));
            target.addSubsystem(s);
            InetSocketAddress a = target.listenTcp(new InetSocketAddress("127.0.0.1", 0));
            ConnectOptions o = ConnectOptions.defaults().ioQueues(1).queueSize(32)
                    .commandTimeout(Duration.ofSeconds(2)).connectTimeout(Duration.ofSeconds(2))
                    .reconnectDelay(Duration.ofMillis(250)).controllerLossTimeout(Duration.ofSeconds(60));
            try (Relay relay = new Relay(a);
                 Controller c = Nvmeof.connect("nvme+tcp://127.0.0.1:" + relay.port() + "/" + NQN, o)) {
                BlockDevice dev = c.namespace(1);
                ByteBuffer[] data = new ByteBuffer[SLOTS];
                for (int i = 0; i < SLOTS; i++) {
                    data[i] = pattern(i);
                }
                dev.write(0, data[0].duplicate());

                relay.stall(true);
                System.gc();
                long before = PlatformDependent.usedDirectMemory();
                // 2000 writes, half of 256 KiB (data sent when the target asks: R2T) and half of 8 KiB
                // (data in the command capsule, sent at once): 250 MiB if the initiator took them all in
                List<CompletableFuture<Void>> writes = new ArrayList<>();
                for (int i = 0; i < 2000; i++) {
                    ByteBuffer d = data[i % SLOTS].duplicate();
                    writes.add(dev.writeAsync((long) (i % SLOTS) * SLOT, i % 2 == 0 ? d : d.limit(8192)));
                }
                // until every write has ended at its command timeout (2 s), the direct memory's peak
                AtomicLong peakSeen = new AtomicLong(before);
                Awaitility.await("writes left hanging past their command timeout").atMost(Duration.ofSeconds(60))
                        .pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(5)).until(() -> {
                            peakSeen.accumulateAndGet(PlatformDependent.usedDirectMemory(), Math::max);
                            return writes.stream().allMatch(CompletableFuture::isDone);
                        });
                long peak = peakSeen.get();
                long failed = writes.stream().filter(CompletableFuture::isCompletedExceptionally).count();
                long done = writes.stream().filter(CompletableFuture::isDone).count();
                // queue depth 31 of 256 KiB in flight (sent twice at most: before and after a reconnect) and pooled chunks
                long bound = 2L * 31 * SLOT + (16 << 20);
                System.out.printf("stalled target: %d of %d writes failed at their timeout while stalled; direct"
                        + " memory +%d MiB at peak (bound %d MiB)%n", failed, writes.size(), (peak - before) >> 20,
                        bound >> 20);
                assertTrue(peak - before <= bound, "direct memory grew by " + ((peak - before) >> 20) + " MiB");
                assertEquals(writes.size(), done, "writes left hanging past their command timeout");
                assertEquals(writes.size(), failed, "writes reported done while the target read nothing");
                for (CompletableFuture<Void> w : writes) {
                    Throwable e = w.handle((v, x) -> x).get();
                    assertTrue(e instanceof IOException || e.getCause() instanceof IOException, e.toString());
                }

                relay.stall(false);
                // the controller recovers; writes land again and read back
                Awaitility.await().atMost(Duration.ofSeconds(60)).ignoreExceptions()
                        .until(() -> {
                            dev.write(0, data[0].duplicate());
                            return true;
                        });
                for (int i = 0; i < SLOTS; i++) {
                    dev.write((long) i * SLOT, data[i].duplicate());
                }
                for (int i = 0; i < SLOTS; i++) {
                    ByteBuffer back = ByteBuffer.allocate(SLOT);
                    dev.read((long) i * SLOT, back);
                    assertEquals(data[i].duplicate().rewind(), back.flip(), "slot " + i);
                }
            }
        }
    }
}
