package io.nvmeof.target.backend;

import java.nio.ByteBuffer;

/** A namespace with no storage: reads return zeros, writes are dropped. For benchmarks of the fabric alone. */
public final class NullBackend extends MemoryBackend {

    public NullBackend(long size, int blockSize) {
        super("null", size, blockSize);
    }

    @Override
    public void read(long offset, ByteBuffer dst) {
        fillZeros(dst, dst.position(), dst.limit());
        dst.position(dst.limit());
    }

    @Override
    public void write(long offset, ByteBuffer src) {
        src.position(src.limit());
    }

    @Override
    public void copy(long from, long to, long length, ByteBuffer bounce) {
        // nothing is kept: nothing to copy
    }

    @Override
    public void writeZeroes(long offset, long length) {
    }

    /** Nothing to keep: only the size changes. */
    @Override
    public void resize(long newSize) {
        checkSize(newSize);
        size = newSize;
    }
}
