package io.nvmeof.target.backend;

/**
 * A backend held in this process (RAM) or nowhere (null): its I/O never blocks, so it runs on the
 * event loop; nothing needs flushing or closing; deallocated blocks read back as zeroes.
 */
abstract class MemoryBackend extends AbstractBackend {
    private final String scheme;

    /** {@code scheme}: how the namespace spec names it ({@code ram}, {@code null}). */
    MemoryBackend(String scheme, long size, int blockSize) {
        super(scheme, size, blockSize);
        this.scheme = scheme;
    }

    @Override
    public final boolean blocking() {
        return false;
    }

    @Override
    public final boolean deallocatedReadsZeroes() {
        return true;
    }

    /** Nothing: there is no storage below the memory; a RAM namespace does not outlive the process, flushed or not. */
    @Override
    public final void flush() {
    }

    @Override
    public final String describe() {
        return scheme + ":" + size;
    }

    /** Nothing: direct buffers are freed with the object. */
    @Override
    public void close() {
    }
}
