package io.nvmeof.target.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.internal.PlatformDependent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Our two kernel queues, io_uring ({@link IoRing}) and Linux AIO ({@link AioRing}), against real
 * files: data, durability calls, errors and the in-flight bound.
 */
class IoRingTest {
    @TempDir
    Path dir;
    private long allocated;
    /** Page-aligned, as O_DIRECT wants. */
    private long memory;
    private static final int MEMORY = 64 << 10;

    @BeforeEach
    void allocate() {
        allocated = PlatformDependent.allocateMemory(MEMORY + 4096);
        memory = (allocated + 4095) & -4096L;
    }

    @AfterEach
    void free() {
        PlatformDependent.freeMemory(allocated);
    }

    /** A queue of {@code kind} ("io_uring" or "aio") for {@code entries} operations. */
    private static KernelQueue open(String kind, int entries) throws Exception {
        return kind.equals("aio") ? AioRing.open(entries, -1) : IoRing.open(entries);
    }

    /** Records each result in order. */
    static final class Results implements KernelQueue.Completion {
        final List<Integer> got = new ArrayList<>();

        @Override
        public void ringDone(int result) {
            got.add(result);
        }
    }

    /** Submits, then waits until {@code count} results are in. */
    private static void complete(KernelQueue ring, Results r, int count) {
        assertEquals(0, ring.submit());
        while (r.got.size() < count) {
            assertEquals(0, ring.await());
            ring.reap();
        }
    }

    private void put(byte[] b) {
        for (int i = 0; i < b.length; i++) {
            PlatformDependent.putByte(memory + i, b[i]);
        }
    }

    private byte[] get(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = PlatformDependent.getByte(memory + i);
        }
        return b;
    }

    @ParameterizedTest
    @ValueSource(strings = {"io_uring", "aio"})
    void writesReadsAndSyncsAFile(String kind) throws Exception {
        Path f = dir.resolve("f");
        Files.write(f, new byte[12288]);
        int fd = LinuxIo.open(f.toString(), true);
        try (KernelQueue ring = open(kind, 8)) {
            byte[] data = new byte[8192];
            new Random(7).nextBytes(data);
            put(data);
            Results r = new Results();
            assertTrue(ring.write(fd, 4096, memory, 8192, false, r));
            assertTrue(ring.fdatasync(fd, r));
            complete(ring, r, 2);
            assertEquals(List.of(8192, 0), r.got);
            byte[] onDisk = Files.readAllBytes(f);
            assertArrayEquals(data, Arrays.copyOfRange(onDisk, 4096, 12288), "the file holds what the ring wrote");

            PlatformDependent.setMemory(memory, MEMORY, (byte) 0);
            assertTrue(ring.read(fd, 8192, memory, 8192, r));
            complete(ring, r, 3);
            assertEquals(4096, r.got.get(2), "a read across the end of the file is short");
            assertArrayEquals(Arrays.copyOfRange(data, 4096, 8192), get(4096));

            LinuxIo.ftruncate(fd, 1 << 20, f.toString());
            PlatformDependent.setMemory(memory, MEMORY, (byte) 1);
            assertTrue(ring.write(fd, 0, memory, 4096, true, r)); // RWF_DSYNC
            assertTrue(ring.read(fd, 512 << 10, memory + 4096, 4096, r)); // a hole
            complete(ring, r, 5);
            assertEquals(List.of(4096, 4096), r.got.subList(3, 5));
            assertEquals(1, Files.readAllBytes(f)[100], "the durable write is in the file");
            assertArrayEquals(new byte[4096], Arrays.copyOfRange(get(8192), 4096, 8192), "a hole reads as zeroes");
        } finally {
            LinuxIo.close(fd);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"io_uring", "aio"})
    void anErrorComesBackAsANegatedErrno(String kind) throws Exception {
        try (KernelQueue ring = open(kind, 8)) {
            Results r = new Results();
            assertTrue(ring.read(1 << 20, 0, memory, 4096, r)); // no such descriptor
            complete(ring, r, 1);
            assertEquals(-9, r.got.get(0), "EBADF");
            assertTrue(ring.describe(r.got.get(0)).contains("errno 9"), ring.describe(r.got.get(0)));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"io_uring", "aio"})
    void noMoreInFlightThanTheRingHolds(String kind) throws Exception {
        Path f = dir.resolve("g");
        Files.write(f, new byte[4096]);
        int fd = LinuxIo.open(f.toString(), false);
        try (KernelQueue ring = open(kind, 8)) {
            Results r = new Results();
            int queued = 0;
            while (ring.read(fd, 0, memory, 4096, r)) {
                queued++;
            }
            assertEquals(8, queued, "the ring takes as many as it has entries");
            assertEquals(0, ring.room());
            assertEquals(8, ring.inFlight());
            assertFalse(ring.fdatasync(fd, r), "a full ring refuses");
            complete(ring, r, 8);
            assertEquals(8, ring.room());
            assertEquals(0, ring.inFlight());
            assertTrue(r.got.stream().allMatch(n -> n == 4096), r.got.toString());
        } finally {
            LinuxIo.close(fd);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"io_uring", "aio"})
    void aCompletionMayQueueTheNext(String kind) throws Exception {
        Path f = dir.resolve("h");
        Files.write(f, new byte[4096 * 4]);
        int fd = LinuxIo.open(f.toString(), false);
        try (KernelQueue ring = open(kind, 2)) {
            List<Integer> got = new ArrayList<>();
            KernelQueue.Completion[] chain = new KernelQueue.Completion[1];
            chain[0] = res -> {
                got.add(res);
                if (got.size() < 6) {
                    assertTrue(ring.read(fd, 0, memory, 4096, chain[0]));
                }
            };
            assertTrue(ring.read(fd, 0, memory, 4096, chain[0]));
            while (got.size() < 6) {
                assertEquals(0, ring.submit());
                if (got.size() < 6 && ring.unsubmitted() == 0) {
                    ring.await();
                    ring.reap();
                }
            }
            assertEquals(List.of(4096, 4096, 4096, 4096, 4096, 4096), got);
            assertEquals(0, ring.inFlight());
        } finally {
            LinuxIo.close(fd);
        }
    }

    /** AIO's own case: O_DIRECT, where the kernel runs it asynchronously and posts the events from the device's completion. */
    @Test
    void aioReadsAndWritesAnODirectFileAndSignalsItsEventFd() throws Exception {
        Path f = dir.resolve("direct");
        Files.write(f, new byte[64 << 10]);
        int fd = LinuxIo.open(f.toString(), true, true);
        io.netty.channel.unix.FileDescriptor efd = io.netty.channel.epoll.Native.newEventFd();
        try (KernelQueue ring = AioRing.open(16, efd.intValue())) {
            byte[] data = new byte[32 << 10];
            new Random(9).nextBytes(data);
            put(data);
            Results r = new Results();
            for (int i = 0; i < 8; i++) {
                assertTrue(ring.write(fd, 4096L * i, memory + 4096L * i, 4096, i == 7, r));
            }
            complete(ring, r, 8); // in any order
            assertTrue(ring.fdatasync(fd, r)); // covers what completed before it, as a Flush does
            complete(ring, r, 9);
            assertEquals(List.of(4096, 4096, 4096, 4096, 4096, 4096, 4096, 4096, 0), r.got);
            java.nio.ByteBuffer counter = java.nio.ByteBuffer.allocateDirect(8).order(java.nio.ByteOrder.nativeOrder());
            assertEquals(8, efd.read(counter, 0, 8), "the eventfd was signalled");
            assertEquals(9, counter.getLong(0), "once per completion");
            assertArrayEquals(data, Arrays.copyOfRange(Files.readAllBytes(f), 0, 32 << 10));
            PlatformDependent.setMemory(memory, MEMORY, (byte) 0);
            assertTrue(ring.read(fd, 8192, memory, 16384, r));
            assertTrue(ring.read(fd, 100, memory + 16384, 4096, r)); // misaligned for O_DIRECT
            complete(ring, r, 11);
            // the kernel refuses the misaligned one as it is submitted, so it may complete first
            assertEquals(java.util.Set.of(16384, -22), java.util.Set.copyOf(r.got.subList(9, 11)),
                    "EINVAL for the misaligned one, the other read");
            assertArrayEquals(Arrays.copyOfRange(data, 8192, 24576), get(16384));
            assertEquals(0, ring.inFlight());
        } finally {
            efd.close();
            LinuxIo.close(fd);
        }
    }
}
