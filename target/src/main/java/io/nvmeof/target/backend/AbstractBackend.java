package io.nvmeof.target.backend;

import java.nio.ByteBuffer;

/** Size and block size, checked once, for every backend; and the zero fill several of them need. */
abstract class AbstractBackend implements Backend {
    /** The capacity: changed only by {@link #resize} (a plain load on the data path, as a final field is). */
    protected volatile long size;
    protected final int blockSize;
    private final String kind;

    AbstractBackend(String kind, long size, int blockSize) {
        this.kind = kind;
        this.blockSize = blockSize;
        checkSize(size);
        this.size = size;
    }

    /** A size this backend can have: positive and whole blocks. */
    protected final void checkSize(long size) {
        if (size <= 0 || size % blockSize != 0) {
            throw new IllegalArgumentException(kind + " size must be a positive multiple of " + blockSize + ": " + size);
        }
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
