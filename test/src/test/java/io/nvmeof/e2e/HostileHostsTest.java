package io.nvmeof.e2e;

import io.nvmeof.target.Settings;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.internal.PlatformDependent;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.FileBackend;
import io.nvmeof.target.backend.RamBackend;
import io.nvmeof.target.RawHost;
import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.awaitility.Awaitility;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A target under load keeps serving a well-behaved host, byte for byte, while other "hosts"
 * send garbage: random bytes, malformed headers, truncated PDUs, huge PLENs. Bounded: 4
 * hostile threads for 6 seconds.
 */
class HostileHostsTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:hostile";

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void garbageFromSomeHostsHarmsNoOther() throws Exception {
        try (Target target = new Target()) {
            Subsystem s = new Subsystem(NQN, "H1", "hostile", "1.0");
            s.addNamespace(new Namespace(NQN, 1, new RamBackend(32 << 20, 4096), false, null));
            s.addNamespace(new Namespace(NQN, 2, FileBackend.open(dir.resolve("d.img"), 32 << 20, 4096, false), false, null));
            target.addSubsystem(s);
            InetSocketAddress a = target.listenTcp(new InetSocketAddress("127.0.0.1", 0));
            long stopAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(6);
            AtomicLong garbageConnections = new AtomicLong();
            List<Thread> hostile = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int seed = t;
                Thread th = new Thread(() -> {
                    Random rnd = new Random(seed);
                    while (System.nanoTime() < stopAt) {
                        try (Socket sock = new Socket()) {
                            sock.connect(a, 2000);
                            sock.setSoTimeout(500);
                            OutputStream out = sock.getOutputStream();
                            out.write(garbage(rnd));
                            out.flush();
                            garbageConnections.incrementAndGet();
                            sock.getInputStream().read(new byte[256]); // a TermReq, or EOF
                        } catch (Exception expected) {
                            // the target hung up on us, as it should
                        }
                    }
                }, "hostile-" + t);
                th.start();
                hostile.add(th);
            }
            long verified = 0;
            try (Controller c = Nvmeof.connect("nvme+tcp://127.0.0.1:" + a.getPort() + "/" + NQN,
                    ConnectOptions.defaults().ioQueues(2))) {
                Random rnd = new Random(99);
                while (System.nanoTime() < stopAt) {
                    for (BlockDevice dev : new BlockDevice[] {c.namespace(1), c.namespace(2)}) {
                        verified += verify(dev, rnd, 1);
                    }
                }
            }
            for (Thread th : hostile) {
                th.join(10_000);
            }
            assertTrue(garbageConnections.get() > 50, "hostile connections: " + garbageConnections.get());
            assertTrue(verified > 1 << 20, "verified " + verified + " bytes");
        }
    }

    /**
     * The resource attacks of issue 11 at once, each bounded: 1000 sockets that send ICReq and
     * then nothing; 200 that send a Connect whose SGL claims 1 MiB; 4 I/O queues that each send
     * 128 writes of 1 MiB and never answer an R2T while their admin queue sends Keep Alive; a host
     * zeroing and deallocating its whole namespace over and over. A good host meanwhile writes
     * and reads back its data and never sees an error; the target's direct memory and threads
     * stay within its budget; every hostile socket is closed within its timeout.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void greedyAndSilentHostsAreBoundedWhileAGoodHostIsServed() throws Exception {
        Target.Options o = Target.Options.defaults();
        o = o.with(Settings.MAX_BUFFER_MEMORY, (long) (64 << 20));
        o = o.with(Settings.CONNECT_TIMEOUT_MS, 3000L);
        o = o.with(Settings.DATA_TIMEOUT_MS, 3000L);
        // the 1200 silent sockets below stand for many hosts, though all come from 127.0.0.1
        o = o.with(Settings.MAX_PENDING_PER_ADDRESS, 2000);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        BufferPoolMXBean direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(b -> b.getName().equals("direct")).findFirst().orElseThrow();
        LongSupplier directUsed = () -> direct.getMemoryUsed() + Math.max(0, PlatformDependent.usedDirectMemory());
        try (Target target = new Target(o)) {
            Subsystem s = new Subsystem(NQN, "H2", "hostile", "1.0");
            s.allowAnyHost(true);
            s.addNamespace(new Namespace(NQN, 1, new RamBackend(64 << 20, 4096), false, null));
            s.addNamespace(new Namespace(NQN, 2, new RamBackend(256 << 20, 4096), false, null));
            target.addSubsystem(s);
            InetSocketAddress a = target.listenTcp(new InetSocketAddress("127.0.0.1", 0));
            // the good host first, so the target's threads and pools are up before the baseline
            try (Controller good = Nvmeof.connect("nvme+tcp://127.0.0.1:" + a.getPort() + "/" + NQN,
                    ConnectOptions.defaults().ioQueues(2));
                 Controller zeroing = Nvmeof.connect("nvme+tcp://127.0.0.1:" + a.getPort() + "/" + NQN,
                         ConnectOptions.defaults().ioQueues(1))) {
                BlockDevice dev = good.namespace(1);
                verify(dev, new Random(1), 10);
                System.gc();
                long directBefore = directUsed.getAsLong();
                int threadsBefore = threads.getThreadCount();
                AtomicLong directPeak = new AtomicLong();
                AtomicLong budgetPeak = new AtomicLong();
                AtomicInteger threadPeak = new AtomicInteger();
                AtomicBoolean stop = new AtomicBoolean();
                List<Thread> helpers = new ArrayList<>();
                helpers.add(start("sampler", () -> {
                    while (!stop.get()) {
                        directPeak.accumulateAndGet(directUsed.getAsLong(), Math::max);
                        budgetPeak.accumulateAndGet(target.bufferBudget().used(), Math::max);
                        threadPeak.accumulateAndGet(threads.getThreadCount(), Math::max);
                        Thread.sleep(2);
                    }
                }));

                // the good host works on through all of it, verifying every byte
                AtomicLong verified = new AtomicLong();
                helpers.add(start("good-host", () -> {
                    Random rnd = new Random(2);
                    while (!stop.get()) {
                        verified.addAndGet(verify(dev, rnd, 10));
                    }
                }));

                // 4 I/O queues, each 128 writes of 1 MiB, no data ever; the admin queue keeps alive
                RawHost admin = new RawHost(a);
                int cntlid = admin.bringUpAdmin(NQN);
                List<RawHost> greedy = new ArrayList<>();
                List<int[]> seen = new ArrayList<>(); // per queue: R2Ts, Data Transfer Errors, most R2Ts unanswered, other
                for (int q = 1; q <= 4; q++) {
                    RawHost h = new RawHost(a);
                    h.bringUpIo(NQN, q, cntlid, 128);
                    greedy.add(h);
                    int[] counts = new int[4];
                    seen.add(counts);
                    helpers.add(start("greedy-" + q, () -> {
                        while (!stop.get()) {
                            RawHost.Received r;
                            try {
                                r = h.receive();
                            } catch (SocketTimeoutException e) {
                                continue;
                            } catch (IOException e) {
                                return; // closed at the end
                            }
                            if (r.type() == PduType.R2T) {
                                counts[0]++;
                            } else if (r.type() == PduType.CAPSULE_RESP
                                    && r.cqe().status().equals(Status.DATA_TRANSFER_ERROR)) {
                                counts[1]++;
                            } else {
                                counts[3]++;
                            }
                            counts[2] = Math.max(counts[2], counts[0] - counts[1]);
                        }
                    }));
                    for (int i = 0; i < 128; i++) {
                        long lba = (i % 64) * 256L;
                        h.send(h.capsule(x -> x.blocks(NvmOpcode.WRITE, lba, 256).psdt(1).nsid(1)
                                .sgl(0, 1 << 20, Sgl.TCP_TRANSPORT), null));
                    }
                }
                helpers.add(start("keep-alive", () -> {
                    while (!stop.get()) {
                        assertTrue(admin.command(RawHost::keepAlive, null).cqe().status().isSuccess());
                        Thread.sleep(1000);
                    }
                }));
                // the huge-deallocate host: the whole of namespace 2, zeroed and deallocated, again and again
                BlockDevice big = zeroing.namespace(2);
                AtomicInteger zeroed = new AtomicInteger();
                helpers.add(start("zeroing", () -> {
                    while (!stop.get()) {
                        big.writeZeroes(0, big.size());
                        big.discard(0, big.size());
                        zeroed.incrementAndGet();
                    }
                }));

                // 1000 sockets: ICReq, then silence; 200 more: a Connect whose SGL claims 1 MiB
                List<RawHost> silent = new ArrayList<>();
                List<Long> opened = new ArrayList<>();
                for (int i = 0; i < 1200; i++) {
                    RawHost h = new RawHost(a);
                    opened.add(System.nanoTime());
                    assertEquals(PduType.IC_RESP, h.icreq().type());
                    if (i >= 1000) {
                        // half ask the target to fetch 1 MiB, half claim 1 MiB in a capsule of 1 KiB
                        boolean fetch = i % 2 == 0;
                        assertEquals(Status.DATA_SGL_LENGTH_INVALID, h.command(x -> x.connect(0, 32, 0, 5000)
                                .sgl(0, 1 << 20, fetch ? Sgl.TCP_TRANSPORT : Sgl.IN_CAPSULE),
                                fetch ? null : RawHost.connectData(NQN, RawHost.HOST_NQN, 0xffff)).cqe().status());
                    }
                    silent.add(h);
                }

                // every socket that never connected is closed at its deadline
                long worstCloseMs = 0;
                for (int i = 0; i < silent.size(); i++) {
                    assertTrue(silent.get(i).closedByPeer(), "hostile socket " + i + " still open");
                    worstCloseMs = Math.max(worstCloseMs, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - opened.get(i)));
                    silent.get(i).close();
                }
                // on until the silent writers have lost buffers to the data timeout twice over
                long lastOpened = opened.get(opened.size() - 1);
                while (System.nanoTime() - lastOpened < TimeUnit.MILLISECONDS.toNanos(o.get(Settings.DATA_TIMEOUT_MS) * 2 + 1000)) {
                    Thread.sleep(100);
                }
                stop.set(true);
                for (RawHost h : greedy) {
                    h.close();
                }
                admin.close();
                for (Thread t : helpers) {
                    t.join(30_000);
                    assertTrue(!t.isAlive(), t.getName() + " still running");
                }
                assertTrue(failures.isEmpty(), "failures: " + failures);

                long directGrowth = directPeak.get() - directBefore;
                System.out.printf("hostile hosts: direct memory +%d MiB at peak (budget %d MiB, peak use %d MiB), "
                                + "threads %d -> %d, verified %d MiB, worst close %d ms, zeroing rounds %d%n",
                        directGrowth >> 20, o.get(Settings.MAX_BUFFER_MEMORY) >> 20, budgetPeak.get() >> 20, threadsBefore,
                        threadPeak.get(), verified.get() >> 20, worstCloseMs, zeroed.get());
                long window = o.get(Settings.MAX_QUEUE_WRITE_DATA) >> 20;
                for (int[] c : seen) {
                    assertTrue(c[2] <= window, "a silent queue held " + c[2] + " R2Ts unanswered, more than "
                            + window + " MiB of window");
                    assertTrue(c[1] >= window, "writes failed with Data Transfer Error on a silent queue: " + c[1]);
                    assertEquals(0, c[3], "other PDUs on a silent queue");
                }
                assertTrue(worstCloseMs <= o.get(Settings.CONNECT_TIMEOUT_MS) + 4000,
                        "a socket that never connected lived " + worstCloseMs + " ms");
                assertTrue(zeroed.get() > 0, "the zeroing host got nothing done");
                assertTrue(verified.get() > 4 << 20, "verified " + verified + " bytes");
                assertTrue(budgetPeak.get() <= o.get(Settings.MAX_BUFFER_MEMORY), "budget overdrawn: " + budgetPeak.get());
                // 512 MiB of writes asked for: the budget and the per-queue window keep what they take bounded
                assertTrue(directGrowth <= o.get(Settings.MAX_BUFFER_MEMORY) + (32 << 20),
                        "direct memory grew by " + (directGrowth >> 20) + " MiB");
                // 1200 connections, no thread per connection: only this test's helpers and the I/O pool
                assertTrue(threadPeak.get() - threadsBefore <= helpers.size() + o.get(Settings.IO_THREADS) + 4,
                        "threads " + threadsBefore + " -> " + threadPeak.get());
                Awaitility.await().atMost(Duration.ofSeconds(10))
                        .untilAsserted(() -> assertEquals(0, target.bufferBudget().waiting()));
            }
            Awaitility.await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertEquals(0, target.bufferBudget().used(), "buffers left held"));
        }
    }

    private final List<Throwable> failures = new CopyOnWriteArrayList<>();

    private interface Body {
        void run() throws Exception;
    }

    /** A helper thread whose failure fails the test. */
    private Thread start(String name, Body body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                failures.add(e);
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Writes random data at random places and reads it back, {@code rounds} times; returns the bytes verified. */
    private static long verify(BlockDevice dev, Random rnd, int rounds) throws IOException {
        long verified = 0;
        for (int i = 0; i < rounds; i++) {
            byte[] data = new byte[(1 + rnd.nextInt(32)) * 4096];
            rnd.nextBytes(data);
            long off = (long) rnd.nextInt((int) (dev.size() / 4096) - 32) * 4096;
            dev.write(off, ByteBuffer.wrap(data));
            ByteBuffer back = ByteBuffer.allocate(data.length);
            dev.read(off, back);
            assertEquals(ByteBuffer.wrap(data), back.flip());
            verified += data.length;
        }
        return verified;
    }

    /** One of several kinds of bad input. */
    static byte[] garbage(Random rnd) {
        ByteBuffer b = ByteBuffer.allocate(256).order(ByteOrder.LITTLE_ENDIAN);
        switch (rnd.nextInt(5)) {
            case 0: { // random bytes
                byte[] r = new byte[1 + rnd.nextInt(255)];
                rnd.nextBytes(r);
                return r;
            }
            case 1: // ICReq with a wrong HLEN
                b.put((byte) 0).put((byte) 0).put((byte) 99).put((byte) 0).putInt(128);
                break;
            case 2: // a capsule claiming 1 GiB
                b.put((byte) 0).put((byte) 0).put((byte) 128).put((byte) 0).putInt(128).position(128);
                b.put((byte) 4).put((byte) 0).put((byte) 72).put((byte) 72).putInt(1 << 30);
                break;
            case 3: // a valid ICReq then an H2CData nobody asked for
                b.put((byte) 0).put((byte) 0).put((byte) 128).put((byte) 0).putInt(128).position(128);
                b.put((byte) 6).put((byte) 4).put((byte) 24).put((byte) 24).putInt(24 + 16).putShort((short) 1)
                        .putShort((short) 3).putInt(0).putInt(16).putInt(0).put(new byte[16]);
                break;
            default: // half an ICReq
                b.put((byte) 0).put((byte) 0).put((byte) 128).put((byte) 0).putInt(128).position(60);
        }
        byte[] out = new byte[b.position()];
        b.flip().get(out);
        return out;
    }
}
