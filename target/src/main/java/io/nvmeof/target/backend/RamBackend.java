package io.nvmeof.target.backend;

import java.nio.ByteBuffer;

/**
 * Volatile memory namespace in off-heap segments of up to 1 GiB, so it may exceed 2 GiB.
 * Copies are cheap and never block, so it runs on the event loop.
 */
public final class RamBackend extends MemoryBackend {
    private static final int SEGMENT_SHIFT = 30;
    private static final long SEGMENT = 1L << SEGMENT_SHIFT;
    private final ByteBuffer[] segments;

    public RamBackend(long size, int blockSize) {
        super("ram", size, blockSize);
        int n = (int) ((size + SEGMENT - 1) >>> SEGMENT_SHIFT);
        segments = new ByteBuffer[n];
        for (int i = 0; i < n; i++) {
            segments[i] = ByteBuffer.allocateDirect((int) Math.min(SEGMENT, size - ((long) i << SEGMENT_SHIFT)));
        }
    }

    @Override
    public void read(long offset, ByteBuffer dst) {
        while (dst.hasRemaining()) {
            ByteBuffer seg = segments[(int) (offset >>> SEGMENT_SHIFT)];
            int at = (int) (offset & (SEGMENT - 1));
            int n = Math.min(dst.remaining(), seg.capacity() - at);
            dst.put(dst.position(), seg, at, n);
            dst.position(dst.position() + n);
            offset += n;
        }
    }

    @Override
    public void write(long offset, ByteBuffer src) {
        while (src.hasRemaining()) {
            ByteBuffer seg = segments[(int) (offset >>> SEGMENT_SHIFT)];
            int at = (int) (offset & (SEGMENT - 1));
            int n = Math.min(src.remaining(), seg.capacity() - at);
            seg.put(at, src, src.position(), n);
            src.position(src.position() + n);
            offset += n;
        }
    }

    @Override
    public void writeZeroes(long offset, long length) {
        while (length > 0) {
            ByteBuffer seg = segments[(int) (offset >>> SEGMENT_SHIFT)];
            int at = (int) (offset & (SEGMENT - 1));
            int n = (int) Math.min(length, seg.capacity() - at);
            fillZeros(seg, at, at + n);
            offset += n;
            length -= n;
        }
    }

    @Override
    public void deallocate(long offset, long length) {
        writeZeroes(offset, length);
    }
}
