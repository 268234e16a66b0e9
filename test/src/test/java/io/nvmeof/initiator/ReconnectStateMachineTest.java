package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Port;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.RamBackend;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The host's recovery state machine (LIVE, RESETTING, CONNECTING, back to LIVE or on to DEAD)
 * driven through a fake {@code flaky} transport that the test breaks and mends at will: it
 * opens real NVMe/TCP queues to an in-process target, refuses every queue while "down", and
 * cuts every open queue on {@link Flaky#drop}. Nothing waits for wall-clock time to pass:
 * each step waits for the event that ends it (a reconnect attempt, a completion), so the
 * tests take milliseconds on an idle machine and still hold on a busy one. ReconnectFakeFabricTest
 * runs a verified workload through outages and partitions of a FakeFabric port; ReconnectTcpTest
 * does it once with a real target process killed and restarted, StalledTargetTest with a target
 * that stops reading.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ReconnectStateMachineTest {
    private static final String NQN = "nqn.2026-11.io.nvmeof:flaky";
    /** How long an event may take to come on a busy machine: a bound, not an expectation. */
    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private static final Flaky FLAKY = new Flaky();
    private static Target target;
    private static int port;

    /** A host transport the test controls: NVMe/TCP underneath, refused or cut on demand. */
    static final class Flaky extends FakeHostTransport {
        volatile boolean down;
        final AtomicInteger attempts = new AtomicInteger();
        /** When each attempt began (System.nanoTime()), in order. */
        final List<Long> attemptNanos = new CopyOnWriteArrayList<>();
        final List<HostQueue> open = new CopyOnWriteArrayList<>();

        Flaky() {
            super("flaky");
        }

        @Override
        CompletableFuture<HostQueue> open(EventLoopGroup group, InetSocketAddress address, int qid, int depth, int inCapsule,
                                          ConnectOptions options) {
            if (qid == 0) {
                attemptNanos.add(System.nanoTime());
            }
            attempts.incrementAndGet();
            if (down) {
                return CompletableFuture.failedFuture(new ConnectException("flaky: the fabric is down"));
            }
            return super.open(group, address, qid, depth, inCapsule, options).thenApply(q -> {
                open.add(q);
                return q;
            });
        }

        /** Cuts every queue opened so far, as a cable pulled out would; returns once they have ended. */
        void drop() throws Exception {
            List<HostQueue> cut = List.copyOf(open);
            open.clear();
            for (HostQueue q : cut) {
                if (q.isOpen()) {
                    q.eventLoop().execute(q::resetConnection);
                }
            }
            for (HostQueue q : cut) {
                q.closeFuture().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
            }
        }
    }

    @BeforeAll
    static void start() throws Exception {
        HostTransports.register(FLAKY);
        target = new Target();
        Subsystem s = new Subsystem(NQN, "FLAKY1", "flaky", "1.0");
        s.addNamespace(new Namespace(NQN, 1, new RamBackend(4 << 20, 4096), false, null));
        target.addSubsystem(s);
        port = target.addPort(new Port(1, "tcp", new InetSocketAddress("127.0.0.1", 0), false, List.of(NQN)))
                .bound().getPort();
    }

    @AfterAll
    static void stop() throws Exception {
        target.close();
    }

    @BeforeEach
    void mend() {
        FLAKY.down = false;
        FLAKY.open.clear(); // the queues of an earlier test's controllers, closed with them
    }

    /** Fast recovery: a reconnect attempt every 10 ms, no keep-alive quiet time before resubmitting. */
    private static ConnectOptions options(Duration lossTimeout) {
        return ConnectOptions.defaults().ioQueues(2).keepAlive(Duration.ZERO).commandTimeout(Duration.ofSeconds(30))
                .reconnectDelay(Duration.ofMillis(10)).controllerLossTimeout(lossTimeout);
    }

    private static Controller connect(ConnectOptions o) throws IOException {
        return Nvmeof.connect("nvme+flaky://127.0.0.1:" + port + "/" + NQN, o);
    }

    private static ByteBuffer pattern(int seed) {
        ByteBuffer b = ByteBuffer.allocate(8192);
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, (byte) (i * 31 + seed));
        }
        return b;
    }

    @Test
    void ioWaitsThroughALossAndRunsOnTheNewAssociation() throws Exception {
        try (Controller c = connect(options(Duration.ofSeconds(120)))) {
            BlockDevice dev = c.namespace(1);
            dev.write(0, pattern(1));
            assertEquals(ControllerState.LIVE, c.state());

            FLAKY.down = true;
            int before = FLAKY.attempts.get();
            FLAKY.drop();
            CompletableFuture<Void> write = dev.writeAsync(8192, pattern(2));
            ByteBuffer first = ByteBuffer.allocate(8192);
            CompletableFuture<Void> read = dev.readAsync(0, first);
            // several refused attempts, one every reconnect delay, while the I/O waits
            Awaitility.await().atMost(PATIENCE).until(() -> FLAKY.attempts.get() >= before + 3);
            assertEquals(ControllerState.CONNECTING, c.state());
            assertFalse(write.isDone() || read.isDone(), "I/O waits for the reconnect instead of failing");
            assertEquals(0, c.reconnects());

            FLAKY.down = false;
            write.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
            read.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
            assertEquals(pattern(1), first.flip());
            assertEquals(ControllerState.LIVE, c.state());
            assertEquals(1, c.reconnects());
            ByteBuffer second = ByteBuffer.allocate(8192);
            dev.read(8192, second);
            assertEquals(pattern(2), second.flip(), "the write that waited landed once the new association was up");
        }
    }

    @Test
    void aLossRightAfterAReconnectStartsAnotherRound() throws Exception {
        try (Controller c = connect(options(Duration.ofSeconds(120)))) {
            BlockDevice dev = c.namespace(1);
            for (int round = 1; round <= 3; round++) {
                FLAKY.drop();
                dev.write(0, pattern(round));
                ByteBuffer back = ByteBuffer.allocate(8192);
                dev.read(0, back);
                assertEquals(pattern(round), back.flip(), "round " + round);
                assertEquals(round, c.reconnects());
                assertEquals(ControllerState.LIVE, c.state());
            }
        }
    }

    @Test
    void waitingIoFailsOnceTheControllerLossTimeoutHasPassed() throws Exception {
        Duration loss = Duration.ofMillis(300);
        try (Controller c = connect(options(loss))) {
            BlockDevice dev = c.namespace(1);
            dev.write(0, pattern(3));
            FLAKY.down = true;
            int before = FLAKY.attempts.get();
            long lost = System.nanoTime();
            FLAKY.drop();
            CompletionException e = assertThrows(CompletionException.class,
                    () -> dev.readAsync(0, ByteBuffer.allocate(4096)).join());
            assertTrue(e.getCause() instanceof IOException && e.getCause().getMessage().contains("controller loss timeout"),
                    String.valueOf(e.getCause()));
            assertTrue(System.nanoTime() - lost >= loss.toNanos(), "not before the controller loss timeout");
            assertTrue(FLAKY.attempts.get() > before, "it tried to reconnect first");
            assertEquals(ControllerState.DEAD, c.state());
            // a dead controller fails new I/O at once; mending the fabric does not bring it back
            FLAKY.down = false;
            assertThrows(IOException.class, () -> dev.read(0, ByteBuffer.allocate(4096)));
            assertEquals(0, c.reconnects());
        }
    }

    @Test
    void withoutAControllerLossTimeoutALossIsFinal() throws Exception {
        try (Controller c = connect(options(Duration.ZERO))) {
            BlockDevice dev = c.namespace(1);
            dev.write(0, pattern(4));
            int before = FLAKY.attempts.get();
            FLAKY.drop();
            Awaitility.await().atMost(PATIENCE).until(() -> c.state() == ControllerState.DEAD);
            assertThrows(IOException.class, () -> dev.read(0, ByteBuffer.allocate(4096)));
            assertEquals(before, FLAKY.attempts.get(), "no reconnect attempt");
            assertEquals(0, c.reconnects());
        }
    }

    @Test
    void reconnectAttemptsStartQuickAndBackOffToTheReconnectDelay() throws Exception {
        ConnectOptions o = options(Duration.ofSeconds(120)).reconnectDelay(Duration.ofSeconds(10));
        assertEquals(List.of(100L, 200L, 400L, 800L, 1600L, 3200L, 6400L, 10000L, 10000L),
                java.util.stream.IntStream.range(0, 9).mapToObj(o::reconnectDelayMillis).toList());
        assertEquals(10000L, o.reconnectDelayMillis(Integer.MAX_VALUE));
        assertEquals(30L, options(Duration.ofSeconds(1)).reconnectDelay(Duration.ofMillis(30)).reconnectDelayMillis(0),
                "a reconnect delay shorter than the first wait is the first wait");
        try (Controller c = connect(o)) {
            BlockDevice dev = c.namespace(1);
            for (int round = 0; round < 2; round++) {
                dev.write(0, pattern(5 + round));
                FLAKY.down = true;
                int seen = FLAKY.attemptNanos.size();
                long lost = System.nanoTime();
                FLAKY.drop();
                CompletableFuture<Void> write = dev.writeAsync(8192, pattern(7 + round));
                Awaitility.await().atMost(PATIENCE).until(() -> FLAKY.attemptNanos.size() >= seen + 4);
                List<Long> at = FLAKY.attemptNanos.subList(seen, seen + 4);
                // each wait is at least the one it should be (a timer never fires early) ...
                assertTrue(at.get(0) - lost >= TimeUnit.MILLISECONDS.toNanos(100), "round " + round + ": the first after 100 ms");
                for (int i = 1; i < 4; i++) {
                    long gap = at.get(i) - at.get(i - 1);
                    assertTrue(gap >= TimeUnit.MILLISECONDS.toNanos(100L << i),
                            "round " + round + ": attempt " + (i + 1) + " waited " + gap / 1_000_000 + " ms");
                }
                // ... and four attempts (0.1 + 0.2 + 0.4 + 0.8 s) came before one reconnect delay had passed
                assertTrue(at.get(3) - lost < TimeUnit.SECONDS.toNanos(10),
                        "round " + round + ": four attempts took " + (at.get(3) - lost) / 1_000_000 + " ms");
                assertFalse(write.isDone(), "the write waits while the fabric is down");
                FLAKY.down = false;
                write.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
                assertEquals(round + 1, c.reconnects());
                // the next loss starts again from the quick first attempt (the second round checks it)
            }
            ByteBuffer back = ByteBuffer.allocate(8192);
            dev.read(8192, back);
            assertEquals(pattern(8), back.flip());
        }
    }
}
