package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.ThreadMXBean;
import io.netty.util.ResourceLeakDetector;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.BlockDeviceChannel;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.IoCallback;
import io.nvmeof.initiator.IoRequest;
import io.nvmeof.initiator.NvmeTimeoutException;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.Backend;
import io.nvmeof.target.backend.RamBackend;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/** The initiator's API as an application uses it, against our target in the same JVM. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class InitiatorApiSuite {
    /** The fabric this run of the suite uses. */
    abstract Fabric fabric();

    static final String NQN = "nqn.2026-11.io.nvmeof:api";
    Target target;
    Subsystem subsystem;
    String uri;
    final SlowBackend slow = new SlowBackend();

    /** RAM that can be told to take its time over reads. */
    static final class SlowBackend implements Backend {
        final RamBackend ram = new RamBackend(4 << 20, 4096);
        volatile long delayMillis;

        @Override public long size() { return ram.size(); }
        @Override public int blockSize() { return 4096; }
        @Override public boolean blocking() { return true; }
        @Override public void write(long o, ByteBuffer s) { ram.write(o, s); }
        @Override public void flush() { }
        @Override public String describe() { return "slow"; }
        @Override public void close() { }

        @Override
        public void read(long o, ByteBuffer d) throws IOException {
            long ms = delayMillis;
            if (ms > 0) {
                try {
                    Thread.sleep(ms);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            ram.read(o, d);
        }
    }

    @BeforeAll
    void start() throws IOException {
        target = new Target();
        subsystem = new Subsystem(NQN, "API1", "api", "1.0");
        subsystem.addNamespace(new Namespace(NQN, 1, new RamBackend(16 << 20, 4096), false, null));
        subsystem.addNamespace(new Namespace(NQN, 2, slow, false, null));
        target.addSubsystem(subsystem);
        InetSocketAddress a = fabric().listen(target, new InetSocketAddress("127.0.0.1", 0));
        uri = fabric().uri(a.getPort(), NQN);
    }

    @AfterAll
    void stop() throws IOException {
        target.close();
    }

    ByteBuffer random(int len, long seed) {
        byte[] b = new byte[len];
        new Random(seed).nextBytes(b);
        return ByteBuffer.wrap(b);
    }

    @Test
    void discardWriteZeroesAndScatterGather() throws Exception {
        try (Controller c = Nvmeof.connect(uri, ConnectOptions.defaults().ioQueues(2))) {
            BlockDevice dev = c.namespace(1);
            dev.write(0, random(1 << 20, 1));
            dev.discard(4096, 8192);
            dev.writeZeroes(65536, 3 << 20 >> 2);
            ByteBuffer back = ByteBuffer.allocate(1 << 20);
            dev.read(0, back);
            ByteBuffer want = random(1 << 20, 1);
            for (int i = 4096; i < 4096 + 8192; i++) {
                want.put(i, (byte) 0);
            }
            for (int i = 65536; i < 65536 + (3 << 18); i++) {
                want.put(i, (byte) 0);
            }
            assertEquals(want, back.flip());
            // gather three buffers, scatter into two
            dev.writeAsync(2 << 20, random(4096, 2), random(8192, 3), random(4096, 4)).get(10, TimeUnit.SECONDS);
            ByteBuffer a = ByteBuffer.allocate(8192);
            ByteBuffer b = ByteBuffer.allocate(8192);
            dev.readAsync(2 << 20, a, b).get(10, TimeUnit.SECONDS);
            ByteBuffer joined = ByteBuffer.allocate(16384).put(random(4096, 2)).put(random(8192, 3)).put(random(4096, 4));
            ByteBuffer got = ByteBuffer.allocate(16384).put(a.flip()).put(b.flip());
            assertEquals(joined.flip(), got.flip());
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> dev.discard(100, 4096));
            assertTrue(e.getMessage().contains("offset 100"), e.getMessage());
        }
    }

    @Test
    void channelAndStreamsWorkAtAnyByte() throws Exception {
        try (Controller c = Nvmeof.connect(uri, ConnectOptions.defaults().ioQueues(1))) {
            BlockDevice dev = c.namespace(1);
            byte[] text = "hello, remote block device: bytes at odd offsets are fine".getBytes();
            try (OutputStream out = dev.outputStream(5000)) {
                out.write(text);
            }
            byte[] back = new byte[text.length];
            try (InputStream in = dev.inputStream(5000)) {
                assertEquals(text.length, in.readNBytes(back, 0, back.length));
            }
            assertArrayEquals(text, back);
            try (BlockDeviceChannel ch = dev.channel()) {
                assertEquals(16 << 20, ch.size());
                ch.position(40_954);
                ByteBuffer across = random(20000, 9);
                ch.write(across.duplicate());
                ch.position(40_954);
                ByteBuffer r = ByteBuffer.allocate(20000);
                while (r.hasRemaining()) {
                    ch.read(r);
                }
                assertEquals(across, r.flip());
                ch.position(ch.size() - 2);
                assertEquals(2, ch.read(ByteBuffer.allocate(10)));
                assertEquals(-1, ch.read(ByteBuffer.allocate(10)));
            }
            // the bytes around the stream's write are untouched
            ByteBuffer block = ByteBuffer.allocate(4096);
            dev.read(4096, block);
            assertArrayEquals(text, Arrays.copyOfRange(block.array(), 5000 - 4096, 5000 - 4096 + text.length));
        }
    }

    private long hostThreadsAllocated() {
        ThreadMXBean mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        long total = 0;
        for (long id : mx.getAllThreadIds()) {
            ThreadInfo info = mx.getThreadInfo(id);
            if (info != null && info.getThreadName().startsWith("nvmeof-host")) {
                total += mx.getThreadAllocatedBytes(id);
            }
        }
        return total;
    }

    /** The callback form: requests made once, reused; the host's event loops allocate nothing per I/O. */
    @Test
    void callbackFormReusesRequestsAndAllocatesNothing() throws Exception {
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        try (Controller c = Nvmeof.connect(uri, ConnectOptions.defaults().ioQueues(1))) {
            BlockDevice dev = c.namespace(1);
            int depth = 8;
            AtomicInteger left = new AtomicInteger();
            AtomicReference<Throwable> error = new AtomicReference<>();
            CountDownLatch[] done = new CountDownLatch[1];
            ByteBuffer[] bufs = new ByteBuffer[depth];
            IoCallback[] loop = new IoCallback[1];
            loop[0] = (req, err) -> {
                if (err != null) {
                    error.compareAndSet(null, err);
                }
                int n = left.decrementAndGet();
                if (n < 0 || err != null) {
                    done[0].countDown();
                    return;
                }
                int slot = (Integer) req.attachment;
                long off = (long) ((n * 7919L) % 4000) * 4096;
                if ((n & 1) == 0) {
                    req.write(off, bufs[slot], loop[0]);
                } else {
                    req.read(off, bufs[slot], loop[0]);
                }
            };
            IoRequest[] reqs = new IoRequest[depth];
            for (int i = 0; i < depth; i++) {
                reqs[i] = dev.newRequest();
                reqs[i].attachment = i;
                bufs[i] = ByteBuffer.allocateDirect(4096);
            }
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
            long before = 0;
            for (int round = 0; round < 2; round++) {
                left.set(20_000);
                done[0] = new CountDownLatch(depth);
                if (round == 1) {
                    before = hostThreadsAllocated();
                }
                for (int i = 0; i < depth; i++) {
                    reqs[i].read(0, bufs[i], loop[0]);
                }
                assertTrue(done[0].await(60, TimeUnit.SECONDS));
                if (error.get() != null) {
                    throw new AssertionError(error.get());
                }
            }
            double perIo = (hostThreadsAllocated() - before) / 20_000.0;
            System.out.printf("host event loops allocated %.2f bytes per I/O%n", perIo);
            assertTrue(perIo < 16, perIo + " bytes allocated per I/O");
            // one operation at a time: the slow namespace keeps the first in flight for sure
            slow.delayMillis = 300;
            BlockDevice slowDev = c.namespace(2);
            assertThrows(IllegalStateException.class, () -> {
                IoRequest r = slowDev.newRequest();
                CountDownLatch l = new CountDownLatch(1);
                r.read(0, ByteBuffer.allocateDirect(4096), (x, e) -> l.countDown());
                try {
                    r.read(0, ByteBuffer.allocateDirect(4096), (x, e) -> { });
                } finally {
                    l.await(10, TimeUnit.SECONDS);
                }
            });
        } finally {
            slow.delayMillis = 0;
            ResourceLeakDetector.setLevel(level);
        }
    }

    @Test
    void namespaceEventsReachTheApplication() throws Exception {
        try (Controller c = Nvmeof.connect(uri, ConnectOptions.defaults().ioQueues(1))) {
            List<Controller.AsyncEvent> events = new CopyOnWriteArrayList<>();
            c.onEvent(events::add);
            BlockDevice one = c.namespace(1);
            subsystem.addNamespace(new Namespace(NQN, 9, new RamBackend(2 << 20, 4096), false, null));
            try {
                Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> events.stream()
                        .anyMatch(e -> e.namespaceChanged() && e.namespaces().contains(9)));
                assertEquals(List.of(1, 2, 9), c.activeNamespaces());
                assertEquals(2 << 20, c.namespace(9).size());
            } finally {
                subsystem.removeNamespace(9);
            }
            Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> events.size() >= 2);
            assertEquals(16 << 20, one.size());
        }
    }

    @Test
    void aTimedOutCommandFailsAndTheQueueRecovers() throws Exception {
        ConnectOptions o = ConnectOptions.defaults().ioQueues(1).commandTimeout(Duration.ofSeconds(1))
                .reconnectDelay(Duration.ofMillis(100)).controllerLossTimeout(Duration.ofSeconds(20));
        try (Controller c = Nvmeof.connect(uri, o)) {
            BlockDevice dev = c.namespace(2);
            dev.write(0, random(4096, 5));
            slow.delayMillis = 4000;
            long t0 = System.nanoTime();
            CompletionException e = assertThrows(CompletionException.class, () -> dev.readAsync(0, ByteBuffer.allocate(4096))
                    .join());
            assertTrue(e.getCause() instanceof NvmeTimeoutException, String.valueOf(e.getCause()));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms >= 1000 && ms < 10_000, "failed after " + ms + " ms");
            slow.delayMillis = 0;
            // the association was reset and rebuilt; I/O works again
            ByteBuffer back = ByteBuffer.allocate(4096);
            dev.read(0, back);
            assertEquals(random(4096, 5), back.flip());
            assertTrue(c.reconnects() >= 1);
        } finally {
            slow.delayMillis = 0;
        }
    }
}
