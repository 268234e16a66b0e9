package io.nvmeof.fabric.rdma.verbs;

/**
 * A block of native memory with one owner and one free. Every access goes through
 * {@link #at}, which checks the range and that the block is still live: a use after
 * {@link #free} throws {@link IllegalStateException} instead of reading or writing memory
 * that malloc may have handed to someone else (the JVM's own structures, say).
 */
final class NativeBlock {
    private final String owner;
    private final int size;
    private volatile long address;

    NativeBlock(String owner, int size) {
        this.owner = owner;
        this.size = size;
        this.address = Native.calloc(size);
    }

    /** The address of {@code length} bytes at {@code offset}. */
    long at(int offset, int length) {
        long a = address;
        if (a == 0) {
            throw new IllegalStateException("native memory of " + owner + " used after it was freed");
        }
        if (offset < 0 || length < 0 || offset > size - length) {
            throw new IndexOutOfBoundsException(offset + "+" + length + " outside the " + size + "-byte block of " + owner);
        }
        return a + offset;
    }

    boolean live() {
        return address != 0;
    }

    /** Frees the block once; later calls do nothing, later accesses throw. */
    synchronized void free() {
        long a = address;
        if (a != 0) {
            address = 0;
            Native.free(a);
        }
    }

    @Override
    public String toString() {
        return "native block of " + owner + " (" + size + " bytes" + (live() ? ")" : ", freed)");
    }
}
