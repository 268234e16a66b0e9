package io.nvmeof.target.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The jnr-ffi paths against the real kernel: hole punching in files, and a loop block device. */
class LinuxBackendTest {
    @TempDir
    Path dir;

    private static ByteBuffer random(int len, long seed) {
        byte[] b = new byte[len];
        new Random(seed).nextBytes(b);
        return ByteBuffer.allocateDirect(len).put(b).flip();
    }

    private static long allocatedBytes(Path p) throws Exception {
        Process du = new ProcessBuilder("du", "--block-size=1", p.toString()).start();
        String out = new String(du.getInputStream().readAllBytes()).trim();
        assertTrue(du.waitFor(10, TimeUnit.SECONDS));
        return Long.parseLong(out.split("\\s+")[0]);
    }

    @Test
    void deallocatePunchesHolesAndWriteZeroesZeroes() throws Exception {
        Path p = dir.resolve("punch.img");
        try (FileBackend f = FileBackend.open(p, 8 << 20, 4096, false)) {
            f.write(0, random(8 << 20, 1));
            f.flush();
            long before = allocatedBytes(p);
            f.deallocate(1 << 20, 4 << 20);
            f.flush();
            long after = allocatedBytes(p);
            assertTrue(f.deallocatedReadsZeroes());
            assertTrue(after <= before - (4 << 20), "holes punched: " + before + " -> " + after);
            ByteBuffer back = ByteBuffer.allocateDirect(4 << 20);
            f.read(1 << 20, back);
            assertEquals(ByteBuffer.allocateDirect(4 << 20), back.flip(), "deallocated range reads zeroes");
            f.writeZeroes(0, 4096);
            ByteBuffer first = ByteBuffer.allocateDirect(4096);
            f.read(0, first);
            assertEquals(ByteBuffer.allocateDirect(4096), first.flip());
            ByteBuffer kept = ByteBuffer.allocateDirect(4096);
            f.read(6 << 20, kept);
            ByteBuffer want = random(8 << 20, 1).position(6 << 20).limit((6 << 20) + 4096);
            assertEquals(want, kept.flip(), "data outside the ranges is untouched");
        }
    }

    @Test
    void directIoReadsAndWritesAlignedBuffers() throws IOException {
        Path p = dir.resolve("direct.img");
        try (FileBackend f = FileBackend.open(p, 4 << 20, 4096, false, true)) {
            assertEquals(4096, f.bufferAlignment());
            ByteBuffer aligned = ByteBuffer.allocateDirect(3 * 4096).alignedSlice(4096);
            aligned.limit(8192);
            ByteBuffer data = random(8192, 3);
            aligned.put(data.duplicate()).flip();
            f.write(4096, aligned);
            ByteBuffer back = ByteBuffer.allocateDirect(3 * 4096).alignedSlice(4096).limit(8192);
            f.read(4096, back);
            assertEquals(data, back.flip());
        }
    }

    @Test
    void loopBlockDevice() throws Exception {
        Path img = dir.resolve("loop.img");
        try (var c = FileChannel.open(img, StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE)) {
            c.write(ByteBuffer.wrap(new byte[1]), (16 << 20) - 1);
        }
        LoopDevice loop = LoopDevice.attach(img);
        String dev = loop.path.toString();
        try (BlockBackend b = BlockBackend.open(Path.of(dev), 0, false)) {
            assertEquals(16 << 20, b.size());
            assertEquals(4096, b.blockSize());
            b.write(8192, random(65536, 4));
            b.flush();
            ByteBuffer back = ByteBuffer.allocateDirect(65536);
            b.read(8192, back);
            assertEquals(random(65536, 4), back.flip());
            b.writeZeroes(8192, 4096);
            ByteBuffer z = ByteBuffer.allocateDirect(4096);
            b.read(8192, z);
            assertEquals(ByteBuffer.allocateDirect(4096), z.flip(), "BLKZEROOUT zeroed the range");
            b.deallocate(1 << 20, 1 << 20); // BLKDISCARD; a loop device passes it to the file as a hole
        }
        // with O_DIRECT, as gateways sharing a device open it: aligned buffers, and what one
        // descriptor writes the next reads from the device, not from a page cache
        try (BlockBackend d = BlockBackend.open(Path.of(dev), 0, false, true);
                BlockBackend other = BlockBackend.open(Path.of(dev), 0, true, true)) {
            assertEquals(4096, d.bufferAlignment());
            assertEquals("block:" + dev + ",direct", d.describe());
            ByteBuffer data = ByteBuffer.allocateDirect(65536 + 4096).alignedSlice(4096);
            data.put(random(65536, 9)).flip();
            d.write(65536, data);
            d.flush();
            ByteBuffer back = ByteBuffer.allocateDirect(65536 + 4096).alignedSlice(4096).limit(65536);
            other.read(65536, back);
            assertEquals(random(65536, 9), back.flip());
        } finally {
            loop.close();
        }
        assertTrue(Files.size(img) == 16 << 20);
    }
}
