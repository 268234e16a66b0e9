package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.internal.PlatformDependent;
import io.nvmeof.fabric.BusyPoll;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.tcp.DataPdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.target.backend.Backend;
import io.nvmeof.target.backend.BlockBackend;
import io.nvmeof.target.backend.FileBackend;
import io.nvmeof.target.backend.KernelQueue;
import io.nvmeof.target.backend.LoopDevice;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.time.Duration;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * File namespaces through the event loop's io_uring: the data on the wire and in the file are
 * right, and the I/O threads are not used; with {@code file_io=threads}, or where io_uring is
 * refused, the I/O threads do the same work.
 */
class RingIoTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:ring";
    static final int BS = 4096;

    @TempDir
    Path dir;

    /** Writes (by R2T, in capsule with FUA), flushes and reads back over NVMe/TCP; returns the I/O threads' task count. */
    private long exercise(Target.Options o, boolean direct) throws Exception {
        Path file = dir.resolve("ns" + direct);
        return exercise(o, FileBackend.open(file, 64 * BS, BS, false, direct), file);
    }

    /** As above for {@code backend}, whose bytes {@code file} holds. */
    private long exercise(Target.Options o, Backend backend, Path file) throws Exception {
        try (Target target = new Target(o.with(Settings.EVENT_LOOP_THREADS, 1))) {
            Subsystem s = new Subsystem(NQN, "R1", "ring", "1.0");
            s.addNamespace(new Namespace(NQN, 1, backend, false, null));
            target.addSubsystem(s);
            InetSocketAddress address = target.listenTcp(new InetSocketAddress("127.0.0.1", 0));
            byte[] data = new byte[16 * BS];
            new Random(11).nextBytes(data);
            try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
                int cntlid = admin.bringUpAdmin(NQN);
                io.bringUpIo(NQN, 1, cntlid);
                RawHost.Received r2t = io.command(q -> q.opcode(NvmOpcode.WRITE.code).psdt(1).nsid(1).slba(2)
                        .blockCount(16).sgl(0, data.length, Sgl.TCP_TRANSPORT), null);
                assertEquals(PduType.R2T, r2t.type());
                io.answer(r2t, data);
                assertEquals(Status.SUCCESS, io.receive().cqe().status());
                byte[] fua = Arrays.copyOfRange(data, 0, BS);
                assertEquals(Status.SUCCESS, io.command(q -> q.opcode(NvmOpcode.WRITE.code).psdt(1).nsid(1).slba(40)
                        .blockCount(1).cdw(12, 1L << 30).sgl(0, BS, Sgl.IN_CAPSULE), fua).cqe().status());
                assertEquals(Status.SUCCESS, io.command(q -> q.opcode(NvmOpcode.FLUSH.code).psdt(1).nsid(1), null).cqe().status());

                assertArrayEquals(data, read(io, 2, 16), "read back over the wire");
                assertArrayEquals(fua, read(io, 40, 1));
                assertArrayEquals(new byte[2 * BS], read(io, 60, 2), "never written: zeroes");
                byte[] onDisk = Files.readAllBytes(file);
                assertArrayEquals(data, Arrays.copyOfRange(onDisk, 2 * BS, 18 * BS), "in the file");
                assertArrayEquals(fua, Arrays.copyOfRange(onDisk, 40 * BS, 41 * BS));
                long tasks = ((ThreadPoolExecutor) target.threads().io()).getTaskCount();

                // Write Zeroes is the I/O threads' in every mode: the count is live
                assertEquals(Status.SUCCESS, io.command(q -> q.opcode(NvmOpcode.WRITE_ZEROES.code).psdt(1).nsid(1).slba(2)
                        .blockCount(1), null).cqe().status());
                assertEquals(tasks + 1, ((ThreadPoolExecutor) target.threads().io()).getTaskCount());
                assertArrayEquals(new byte[BS], read(io, 2, 1));
                return tasks;
            }
        }
    }

    private static byte[] read(RawHost io, long slba, int blocks) throws Exception {
        RawHost.Received r = io.command(q -> q.opcode(NvmOpcode.READ.code).psdt(1).nsid(1).slba(slba)
                .blockCount(blocks).sgl(0, (long) blocks * BS, Sgl.TCP_TRANSPORT), null);
        ByteBuffer got = ByteBuffer.allocate(blocks * BS);
        while (r.type() == PduType.C2H_DATA) {
            int off = (int) r.u32(DataPdu.DATAO_OFFSET);
            int len = (int) r.u32(DataPdu.DATAL_OFFSET);
            got.put(off, r.bytes(), r.u8(3), len);
            r = io.receive();
        }
        assertEquals(Status.SUCCESS, r.cqe().status());
        return got.array();
    }

    @ParameterizedTest(name = "O_DIRECT {0}")
    @ValueSource(booleans = {false, true})
    void theLoopsRingServesFilesWithoutTheIoThreads(boolean direct) throws Exception {
        assertEquals(0, exercise(Target.Options.defaults(), direct), "reads, writes and flushes took no I/O thread");
    }

    /**
     * Which of the loop's queues serves which file, shown by refusing the other: O_DIRECT goes
     * through AIO by default (it serves alone where io_uring is refused), through io_uring with
     * file_io=io_uring or where AIO is refused; a buffered file never through AIO.
     */
    @ParameterizedTest(name = "file_io={0}, O_DIRECT {1}, io_uring refused {2}, AIO refused {3}: I/O threads {4}")
    @org.junit.jupiter.params.provider.CsvSource({
        "auto, true, true, false, false",
        "auto, true, false, true, false",
        "auto, false, true, false, true",
        "io_uring, true, false, true, false",
        "io_uring, true, true, false, true",
        "auto, true, true, true, true"})
    void eachFileGoesToTheQueueThatCanTakeIt(String fileIo, boolean direct, boolean uringRefused, boolean aioRefused,
                                             boolean threads) throws Exception {
        LoopRing.refuseForTesting(uringRefused, aioRefused);
        try {
            long tasks = exercise(Target.Options.defaults().with(Settings.FILE_IO, fileIo), direct);
            if (threads) {
                assertTrue(tasks >= 6, "the I/O threads served it: " + tasks);
            } else {
                assertEquals(0, tasks, "the loop's queue served it");
            }
        } finally {
            LoopRing.refuseForTesting(false, false);
        }
    }

    /** A block device (a loop device over a file) goes through the ring as a file does, with O_DIRECT. */
    @Test
    void aBlockDeviceGoesThroughTheRing() throws Exception {
        Path img = dir.resolve("loop.img");
        Files.write(img, new byte[64 * BS]);
        try (LoopDevice loop = LoopDevice.attach(img)) {
            assertEquals(0, exercise(Target.Options.defaults(), BlockBackend.open(loop.path, 0, false, true), img),
                    "reads, writes and flushes took no I/O thread");
        }
    }

    @Test
    void fileIoThreadsUsesTheIoThreads() throws Exception {
        assertTrue(exercise(Target.Options.defaults().with(Settings.FILE_IO, "threads"), true) >= 6);
    }

    @Test
    void whereIoUringIsRefusedTheIoThreadsServe() throws Exception {
        LoopRing.refuseForTesting(true, true);
        try {
            assertTrue(exercise(Target.Options.defaults(), false) >= 6);
        } finally {
            LoopRing.refuseForTesting(false, false);
        }
    }

    @Test
    void aLoopsRingCompletesOnTheLoopAndClosesWithIt() throws Exception {
        Path f = dir.resolve("sync");
        Files.write(f, new byte[BS]);
        EventLoopGroup group = EventLoops.newGroup(1, "ring-test", BusyPoll.OFF);
        EventLoop loop = group.next();
        try (FileBackend b = FileBackend.open(f, 0, BS, false, false)) {
            int ringFd = b.ringFd();
            CompletableFuture<LoopRing> made = new CompletableFuture<>();
            CompletableFuture<String> doneOn = new CompletableFuture<>();
            loop.execute(() -> {
                LoopRing ring = LoopRing.of(loop);
                made.complete(ring);
                // fdatasync goes to the kernel's workers: it completes later, through the eventfd
                ring.queue(false, true).fdatasync(ringFd, res -> doneOn.complete(res + " on " + Thread.currentThread().getName()));
                ring.queued();
            });
            LoopRing ring = made.get(10, TimeUnit.SECONDS);
            assertNotNull(ring, "an epoll loop has a ring");
            String done = doneOn.get(10, TimeUnit.SECONDS);
            assertTrue(done.startsWith("0 on ring-test"), done);
            assertEquals(ring, CompletableFuture.supplyAsync(() -> LoopRing.of(loop), loop).get(10, TimeUnit.SECONDS),
                    "one ring per loop");
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
            Awaitility.await("the ring closed with the loop").atMost(Duration.ofSeconds(10)).until(ring::closed);
            assertFalse(ring.fd().isOpen(), "and its eventfd");
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    /**
     * A target stopping with file I/O in flight on a loop first has that loop close its queues:
     * what is in flight completes on the loop before the loop starts shutting down (completions
     * run only there; a queue closed after its loop would keep those buffers for good).
     */
    @Test
    void aStoppingTargetDeliversFileIoInFlightOnItsLoopsBeforeTheyStop() throws Exception {
        Path f = dir.resolve("closing");
        int blocks = 1024;
        int ops = 32;
        byte[] content = new byte[blocks * BS];
        new Random(5).nextBytes(content);
        Files.write(f, content); // not a hole: each read goes to the disk
        ByteBuffer buffer = ByteBuffer.allocateDirect((ops + 1) * BS).alignedSlice(BS);
        CompletableFuture<LoopRing> made = new CompletableFuture<>();
        AtomicBoolean stopping = new AtomicBoolean();
        AtomicInteger submitted = new AtomicInteger();
        List<String> delivered = Collections.synchronizedList(new ArrayList<>());
        try (FileBackend b = FileBackend.open(f, 0, BS, false, true)) {
            Target target = new Target(Target.Options.defaults().with(Settings.EVENT_LOOP_THREADS, 1));
            try {
                target.listenTcp(new InetSocketAddress("127.0.0.1", 0));
                EventLoop loop = (EventLoop) target.eventLoops().get(0);
                long address = PlatformDependent.directBufferAddress(buffer);
                int fd = b.ringFd();
                loop.execute(() -> {
                    LoopRing ring = LoopRing.of(loop);
                    made.complete(ring);
                    Random random = new Random(7);
                    // each slot reads again as its read completes, until the target is stopping:
                    // reads are in flight whenever close comes
                    KernelQueue.Completion[] again = new KernelQueue.Completion[ops];
                    for (int i = 0; i < ops; i++) {
                        long slot = address + (long) i * BS;
                        KernelQueue.Completion[] self = again;
                        int n = i;
                        again[i] = res -> {
                            delivered.add(res + (loop.inEventLoop() ? " on the loop" : " off the loop")
                                    + (loop.isShuttingDown() ? " shutting down" : ""));
                            if (!stopping.get()) {
                                submitted.incrementAndGet();
                                ring.queue(true, true).read(fd, (long) random.nextInt(blocks) * BS, slot, BS, self[n]);
                            }
                        };
                    }
                    for (int i = 0; i < ops; i++) {
                        submitted.incrementAndGet();
                        ring.queue(true, true).read(fd, (long) random.nextInt(blocks) * BS, address + (long) i * BS, BS,
                                again[i]);
                    }
                    ring.queued();
                });
                assertNotNull(made.get(10, TimeUnit.SECONDS), "an epoll loop has queues");
                Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> delivered.size() > 4 * ops);
            } finally {
                stopping.set(true);
                target.close();
            }
            LoopRing ring = made.get();
            assertTrue(ring.closed(), "the target closed its loop's queues");
            synchronized (delivered) {
                assertEquals(submitted.get(), delivered.size(), "every read submitted completed");
                assertEquals(Set.of(BS + " on the loop"), new HashSet<>(delivered),
                        "every read completed on its loop, before the loop was shutting down");
            }
        }
    }
}
