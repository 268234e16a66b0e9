package io.nvmeof.target.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Backend copy, checked against a memmove of the same bytes: RAM by memory copy; files by
 * copy_file_range, and through the bounce buffer where the kernel refuses (overlapping ranges in
 * one file), with and without O_DIRECT; the default read/write path with a bounce smaller than the copy.
 */
class CopyBackendTest {
    static final int SIZE = 1 << 20;
    static final int BS = 4096;

    /** The copies each backend must do as a memmove would: apart, overlapping forward and backward, one block. */
    static final long[][] CASES = {
        {0, 512 << 10, 256 << 10},       // apart
        {64 << 10, 96 << 10, 128 << 10}, // destination inside the source, after it
        {96 << 10, 64 << 10, 128 << 10}, // destination inside the source, before it
        {BS, 3 * BS, BS},
    };

    static void check(Backend b, int bounce) throws IOException {
        byte[] model = new byte[SIZE];
        new Random(42).nextBytes(model);
        b.write(0, ByteBuffer.wrap(model.clone()).slice());
        ByteBuffer direct = ByteBuffer.allocateDirect(SIZE);
        for (long[] c : CASES) {
            ByteBuffer buf = ByteBuffer.allocateDirect(bounce + BS).alignedSlice(BS).limit(bounce).slice();
            b.copy(c[0], c[1], c[2], buf);
            System.arraycopy(model, (int) c[0], model, (int) c[1], (int) c[2]); // a memmove
            direct.clear();
            b.read(0, direct);
            byte[] got = new byte[SIZE];
            direct.flip().get(got);
            assertArrayEquals(model, got, b.describe() + " after copying " + c[2] + " bytes from " + c[0] + " to " + c[1]);
        }
    }

    static void writeAll(Backend b, byte[] bytes) throws IOException {
        ByteBuffer d = ByteBuffer.allocateDirect(bytes.length + BS).alignedSlice(BS);
        d.put(bytes).flip();
        b.write(0, d);
    }

    @Test
    void ram() throws IOException {
        check(new RamBackend(SIZE, BS), 64 << 10);
    }

    @Test
    void fileByCopyFileRangeAndByTheBounceBuffer(@TempDir Path dir) throws IOException {
        for (boolean direct : new boolean[] {false, true}) {
            try (FileBackend f = FileBackend.open(dir.resolve("f" + direct), SIZE, BS, false, direct)) {
                byte[] model = new byte[SIZE];
                new Random(7).nextBytes(model);
                writeAll(f, model);
                for (long[] c : CASES) {
                    ByteBuffer buf = ByteBuffer.allocateDirect((64 << 10) + BS).alignedSlice(BS);
                    f.copy(c[0], c[1], c[2], buf);
                    System.arraycopy(model, (int) c[0], model, (int) c[1], (int) c[2]);
                    // exactly SIZE: an aligned slice is a block longer where the allocation happens to be aligned
                    ByteBuffer back = ByteBuffer.allocateDirect(SIZE + BS).alignedSlice(BS).limit(SIZE);
                    f.read(0, back);
                    byte[] got = new byte[SIZE];
                    back.flip().get(got);
                    assertArrayEquals(model, got, f.describe() + " copy " + c[2] + " from " + c[0] + " to " + c[1]);
                }
            }
        }
    }

    /** The default copy (a block device's): reads and writes through a bounce buffer smaller than the copy. */
    @Test
    void theDefaultCopyThroughABounceBuffer() throws IOException {
        RamBackend ram = new RamBackend(SIZE, BS);
        Backend plain = new Backend() {
            @Override public long size() { return ram.size(); }
            @Override public int blockSize() { return BS; }
            @Override public boolean blocking() { return true; }
            @Override public void read(long offset, ByteBuffer dst) { ram.read(offset, dst); }
            @Override public void write(long offset, ByteBuffer src) { ram.write(offset, src); }
            @Override public void flush() { }
            @Override public String describe() { return "plain"; }
            @Override public void close() { }
        };
        check(plain, 16 << 10);
    }
}
