package io.nvmeof.target.backend;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A backend for tests whose writes succeed (and are dropped) and whose every read throws what
 * {@code failure} makes: a bad medium's {@link IOException}, or an {@link Error} no status
 * can describe. {@code blocking} chooses where the target runs it: its I/O threads or an
 * event loop.
 */
public final class FailingReads implements Backend {
    /** What a read throws. */
    public interface Failure {
        Throwable make();
    }

    private final long size;
    private final boolean blocking;
    private final Failure failure;

    public FailingReads(long size, boolean blocking, Failure failure) {
        this.size = size;
        this.blocking = blocking;
        this.failure = failure;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public int blockSize() {
        return 4096;
    }

    @Override
    public boolean blocking() {
        return blocking;
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        Throwable t = failure.make();
        if (t instanceof IOException e) {
            throw e;
        }
        if (t instanceof RuntimeException e) {
            throw e;
        }
        throw (Error) t;
    }

    @Override
    public void write(long offset, ByteBuffer src) {
    }

    @Override
    public void flush() {
    }

    @Override
    public String describe() {
        return "failing reads";
    }

    @Override
    public void close() {
    }
}
