package io.nvmeof.target.backend;

import java.nio.ByteBuffer;

/** Size and block size, checked once, for every backend; and the zero fill several of them need. */
abstract class AbstractBackend implements Backend {
    protected final long size;
    protected final int blockSize;

    AbstractBackend(String kind, long size, int blockSize) {
        if (size <= 0 || size % blockSize != 0) {
            throw new IllegalArgumentException(kind + " size must be a positive multiple of " + blockSize + ": " + size);
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

    /** Zeroes bytes {@code from} (inclusive) to {@code to} (exclusive) of {@code b}, eight at a time. */
    static void fillZeros(ByteBuffer b, int from, int to) {
        int i = from;
        for (; i + 8 <= to; i += 8) {
            b.putLong(i, 0L);
        }
        for (; i < to; i++) {
            b.put(i, (byte) 0);
        }
    }
}
