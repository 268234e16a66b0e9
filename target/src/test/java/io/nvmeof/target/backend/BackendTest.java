package io.nvmeof.target.backend;

import io.nvmeof.fabric.Sizes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BackendTest {
    @TempDir
    Path dir;

    private static ByteBuffer pattern(int len, int seed) {
        ByteBuffer b = ByteBuffer.allocateDirect(len);
        for (int i = 0; i < len; i++) {
            b.put((byte) (i * 31 + seed));
        }
        return b.flip();
    }

    @Test
    void fileIsCreatedAtSizeAndKeepsDataAcrossReopen() throws IOException {
        Path p = dir.resolve("disk.img");
        try (Backend b = BackendSpec.open("file:" + p + ",size=1M")) {
            assertEquals(1 << 20, b.size());
            assertEquals(4096, b.blockSize());
            assertTrue(b.blocking());
            b.write(8192, pattern(4096, 3));
            b.flush();
        }
        assertEquals(1 << 20, Files.size(p));
        try (Backend b = BackendSpec.open("file:" + p)) {
            ByteBuffer back = ByteBuffer.allocateDirect(4096);
            b.read(8192, back);
            assertEquals(pattern(4096, 3), back.flip());
            ByteBuffer zeros = ByteBuffer.allocateDirect(4096);
            b.read(0, zeros);
            assertEquals(ByteBuffer.allocateDirect(4096), zeros.flip());
        }
    }

    @Test
    void ramSpansSegmentsAndReadsBack() {
        RamBackend ram = new RamBackend(8 << 20, 512);
        ram.write(4096, pattern(8192, 9));
        ByteBuffer back = ByteBuffer.allocate(8192);
        ram.read(4096, back);
        assertEquals(pattern(8192, 9), back.flip());
        assertThrows(IllegalArgumentException.class, () -> new RamBackend(1000, 512));
    }

    /** Where the kernel offers transparent huge pages, a RAM namespace sits on them, reads zeroes, and keeps data. */
    @Test
    @org.junit.jupiter.api.Timeout(10)
    void aRamTransferPastTheEndIsRefusedNotSpunOn() {
        RamBackend b = new RamBackend(1 << 20, 4096);
        ByteBuffer one = ByteBuffer.allocateDirect(4096);
        assertThrows(IndexOutOfBoundsException.class, () -> b.read((1 << 20) - 2048, one.clear()));
        assertThrows(IndexOutOfBoundsException.class, () -> b.write(1 << 20, one.clear()));
        b.read((1 << 20) - 4096, one.clear());
        assertEquals(0, one.remaining(), "the last block reads");
    }

    @Test
    void ramSitsOnHugePagesWhereTheKernelOffersThem() throws IOException {
        Path thp = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
        boolean offered = Files.exists(thp) && !Files.readString(thp).contains("[never]");
        long before = anonHugePagesKiB();
        RamBackend ram = new RamBackend(64 << 20, 4096);
        if (!offered) {
            assertEquals(0, ram.hugePageBytes());
            return;
        }
        assertTrue(ram.hugePageBytes() >= 62 << 20, "advised " + ram.hugePageBytes() + " of 64 MiB");
        long grown = anonHugePagesKiB() - before;
        assertTrue(grown >= 32 << 10, "the process's huge pages grew by " + grown + " KiB for a 64 MiB namespace");
        ByteBuffer back = ByteBuffer.allocate(1 << 20);
        ram.read(33 << 20, back);
        assertEquals(ByteBuffer.allocate(1 << 20), back.flip(), "a fresh namespace reads zeroes");
        ram.write((32 << 20) - 4096, pattern(8192, 3)); // across a huge page boundary
        ByteBuffer b = ByteBuffer.allocate(8192);
        ram.read((32 << 20) - 4096, b);
        assertEquals(pattern(8192, 3), b.flip());
    }

    /** A read view shows the bytes in place, comes back to the pool when released, and leaves the memory alone. */
    @Test
    void ramReadViewsShowTheDataAndComeBack() {
        RamBackend ram = new RamBackend(8 << 20, 4096);
        ram.write(1 << 20, pattern(8192, 7));
        io.netty.buffer.ByteBuf v = ram.readView(1 << 20, 8192);
        org.junit.jupiter.api.Assumptions.assumeTrue(v != null, "no Unsafe: reads copy");
        assertEquals(8192, v.readableBytes());
        assertTrue(v.hasMemoryAddress(), "writev takes the address as it is");
        ByteBuffer got = ByteBuffer.allocate(8192);
        v.getBytes(v.readerIndex(), got);
        assertEquals(pattern(8192, 7), got.flip());
        io.netty.buffer.ByteBuf second = ram.readView(0, 4096);
        assertTrue(second != v, "a view in use is not handed out twice");
        assertTrue(v.release(), "the last release");
        io.netty.buffer.ByteBuf again = ram.readView(4096, 4096);
        assertSame(v, again, "a released view is reused: nothing allocated per read");
        assertEquals(1, again.refCnt());
        assertEquals(4096, again.readerIndex());
        assertEquals(4096, again.readableBytes());
        again.release();
        second.release();
        ByteBuffer back = ByteBuffer.allocate(8192);
        ram.read(1 << 20, back);
        assertEquals(pattern(8192, 7), back.flip(), "releasing views frees nothing of the namespace");
        assertNull(ram.readView((8 << 20) - 4096, 8192), "past the end of the segment: no view");
    }

    private static long anonHugePagesKiB() throws IOException {
        return Files.readAllLines(Path.of("/proc/self/smaps_rollup")).stream().filter(l -> l.startsWith("AnonHugePages:"))
                .mapToLong(l -> Long.parseLong(l.replaceAll("[^0-9]", ""))).findFirst().orElse(0);
    }

    @Test
    void specErrorsNameTheProblem() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BackendSpec.open("ram:lots"));
        assertTrue(e.getMessage().contains("lots"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> BackendSpec.open("tape:/dev/st0"));
        assertTrue(e.getMessage().contains("unknown backend 'tape'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> BackendSpec.open("file:/x,colour=blue"));
        assertTrue(e.getMessage().contains("colour=blue"), e.getMessage());
        IOException io = assertThrows(IOException.class, () -> BackendSpec.open("file:" + dir.resolve("missing")));
        assertTrue(io.getMessage().contains("does not exist"), io.getMessage());
        assertEquals(256L << 20, Sizes.parse("256M", "size"));
        assertEquals(4096, Sizes.parse("4k", "bs"));
        assertEquals(1L << 30, Sizes.parse("1GiB", "size"));
        assertInstanceOf(RamBackend.class, assertDoesNotThrowOpen("ram:1M,bs=512"));
        // a block device takes direct I/O (gateways sharing it need it), not a size of its own
        assertTrue(BackendSpec.parse("block:/dev/sdx,direct").directIo());
        e = assertThrows(IllegalArgumentException.class, () -> BackendSpec.parse("block:/dev/sdx,size=1G"));
        assertTrue(e.getMessage().contains("own size"), e.getMessage());
    }

    private static Backend assertDoesNotThrowOpen(String spec) {
        try {
            return BackendSpec.open(spec);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aRamNamespaceGrowsAndShrinksInPlaceKeepingItsData() throws IOException {
        RamBackend b = new RamBackend(1 << 20, 4096);
        ByteBuffer data = ByteBuffer.allocateDirect(1 << 20);
        for (int i = 0; i < data.capacity(); i++) {
            data.put(i, (byte) (i * 13 + 5));
        }
        b.write(0, data.duplicate());
        b.resize(3 << 20);
        assertEquals(3 << 20, b.size());
        ByteBuffer back = ByteBuffer.allocateDirect(1 << 20);
        b.read(0, back);
        assertEquals(data.clear(), back.flip());
        ByteBuffer grown = ByteBuffer.allocateDirect(2 << 20);
        b.read(1 << 20, grown);
        assertEquals(ByteBuffer.allocateDirect(2 << 20), grown.flip(), "the added bytes read as zeroes");
        b.write((3 << 20) - 4096, data.duplicate().limit(4096));

        b.resize(512 << 10);
        assertEquals(512 << 10, b.size());
        ByteBuffer half = ByteBuffer.allocateDirect(512 << 10);
        b.read(0, half);
        assertEquals(data.duplicate().limit(512 << 10), half.flip());
        b.resize(1 << 20); // what was cut off does not come back
        ByteBuffer again = ByteBuffer.allocateDirect(512 << 10);
        b.read(512 << 10, again);
        assertEquals(ByteBuffer.allocateDirect(512 << 10), again.flip());

        assertThrows(IllegalArgumentException.class, () -> b.resize(1000));
        assertThrows(IllegalArgumentException.class, () -> b.resize(0));
        assertEquals(1 << 20, b.size());
    }

    @Test
    void aFileNamespaceChangesSizeInPlaceUnlessReadOnly() throws IOException {
        java.nio.file.Path p = dir.resolve("grow.img");
        try (FileBackend f = FileBackend.open(p, 1 << 20, 4096, false)) {
            f.resize(3 << 20);
            assertEquals(3 << 20, f.size());
            assertEquals(3 << 20, java.nio.file.Files.size(p), "the file grew (a hole)");
            assertEquals(3 << 20, f.storageSize());
            f.resize(2 << 20);
            assertEquals(2 << 20, java.nio.file.Files.size(p));
        }
        try (FileBackend ro = FileBackend.open(p, 0, 4096, true)) {
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, () -> ro.resize(4 << 20));
            assertTrue(e.getMessage().contains("read-only"), e.getMessage());
            assertEquals(2 << 20, ro.size());
        }
    }
}
