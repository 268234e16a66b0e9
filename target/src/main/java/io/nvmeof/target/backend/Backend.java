package io.nvmeof.target.backend;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Storage behind a namespace. Offsets and lengths are in bytes and always whole logical
 * blocks; the controller checks ranges before it calls in. Methods may block when
 * {@link #blocking()} says so, and the target then calls them off its event loops.
 * Exceptions are mapped to NVMe status in one place ({@link io.nvmeof.target.StorageErrors}).
 */
public interface Backend extends AutoCloseable {
    /** Capacity in bytes, a multiple of {@link #blockSize()}. */
    long size();

    /** Logical block size in bytes: 512 or 4096. */
    int blockSize();

    /** True when I/O may block the calling thread (files and devices). */
    boolean blocking();

    /** Fills {@code dst} (its remaining bytes) from {@code offset}. */
    void read(long offset, ByteBuffer dst) throws IOException;

    /** Writes the remaining bytes of {@code src} at {@code offset}. */
    void write(long offset, ByteBuffer src) throws IOException;

    /** Makes every completed write durable: it survives a crash of this process and of the machine. */
    void flush() throws IOException;

    /** A short description for logs and listings, e.g. {@code file:/srv/disk.img}. */
    String describe();

    @Override
    void close() throws IOException;
}
