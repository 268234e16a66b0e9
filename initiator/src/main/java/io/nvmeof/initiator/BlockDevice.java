package io.nvmeof.initiator;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * A remote namespace as a block device. Offsets and lengths are in bytes and must be whole
 * logical blocks. A transfer moves {@code buffer.remaining()} bytes and advances the
 * buffer's position when it completes; until then the buffer belongs to the device.
 * Thread-safe: any number of threads may have commands in flight.
 */
public interface BlockDevice {
    /** Namespace ID on its controller. */
    int nsid();

    /** Capacity in bytes. */
    long size();

    /** Logical block size in bytes. */
    int blockSize();

    /** Reads {@code dst.remaining()} bytes at {@code offset}. */
    CompletableFuture<Void> readAsync(long offset, ByteBuffer dst);

    /** Writes {@code src.remaining()} bytes at {@code offset}. */
    CompletableFuture<Void> writeAsync(long offset, ByteBuffer src);

    /** Makes every completed write durable on the target. */
    CompletableFuture<Void> flushAsync();

    /** Synchronous {@link #readAsync}. */
    void read(long offset, ByteBuffer dst) throws IOException;

    /** Synchronous {@link #writeAsync}. */
    void write(long offset, ByteBuffer src) throws IOException;

    /** Synchronous {@link #flushAsync}. */
    void flush() throws IOException;
}
