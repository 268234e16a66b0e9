package io.nvmeof.target.backend;

import java.nio.ByteBuffer;

/** A namespace with no storage: reads return zeros, writes are dropped. For benchmarks of the fabric alone. */
public final class NullBackend implements Backend {
    private final long size;
    private final int blockSize;

    public NullBackend(long size, int blockSize) {
        if (size <= 0 || size % blockSize != 0) {
            throw new IllegalArgumentException("null size must be a positive multiple of " + blockSize + ": " + size);
        }
        this.size = size;
        this.blockSize = blockSize;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    @Override
    public boolean blocking() {
        return false;
    }

    @Override
    public void read(long offset, ByteBuffer dst) {
        int end = dst.limit();
        int i = dst.position();
        for (; i + 8 <= end; i += 8) {
            dst.putLong(i, 0L);
        }
        for (; i < end; i++) {
            dst.put(i, (byte) 0);
        }
        dst.position(end);
    }

    @Override
    public void write(long offset, ByteBuffer src) {
        src.position(src.limit());
    }

    @Override
    public void writeZeroes(long offset, long length) {
    }

    @Override
    public boolean deallocatedReadsZeroes() {
        return true;
    }

    @Override
    public void flush() {
    }

    @Override
    public String describe() {
        return "null:" + size;
    }

    @Override
    public void close() {
    }
}
