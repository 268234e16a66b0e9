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

/** Our own io_uring against real files: data, durability calls, errors and the in-flight bound. */
class IoRingTest {
    @TempDir
    Path dir;
    private long memory;
    private static final int MEMORY = 64 << 10;

    @BeforeEach
    void allocate() {
        memory = PlatformDependent.allocateMemory(MEMORY);
    }

    @AfterEach
    void free() {
        PlatformDependent.freeMemory(memory);
    }

    /** Records each result in order. */
    static final class Results implements IoRing.Completion {
        final List<Integer> got = new ArrayList<>();

        @Override
        public void ringDone(int result) {
            got.add(result);
        }
    }

    /** Submits, then waits until {@code count} results are in. */
    private static void complete(IoRing ring, Results r, int count) {
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

    @Test
    void writesReadsAndSyncsAFile() throws Exception {
        Path f = dir.resolve("f");
        Files.write(f, new byte[12288]);
        int fd = LinuxIo.open(f.toString(), true);
        try (IoRing ring = IoRing.open(8)) {
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

    @Test
    void anErrorComesBackAsANegatedErrno() throws Exception {
        try (IoRing ring = IoRing.open(8)) {
            Results r = new Results();
            assertTrue(ring.read(1 << 20, 0, memory, 4096, r)); // no such descriptor
            complete(ring, r, 1);
            assertEquals(-9, r.got.get(0), "EBADF");
            assertTrue(ring.describe(r.got.get(0)).contains("errno 9"), ring.describe(r.got.get(0)));
        }
    }

    @Test
    void noMoreInFlightThanTheRingHolds() throws Exception {
        Path f = dir.resolve("g");
        Files.write(f, new byte[4096]);
        int fd = LinuxIo.open(f.toString(), false);
        try (IoRing ring = IoRing.open(8)) {
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

    @Test
    void aCompletionMayQueueTheNext() throws Exception {
        Path f = dir.resolve("h");
        Files.write(f, new byte[4096 * 4]);
        int fd = LinuxIo.open(f.toString(), false);
        try (IoRing ring = IoRing.open(2)) {
            List<Integer> got = new ArrayList<>();
            IoRing.Completion[] chain = new IoRing.Completion[1];
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
}
