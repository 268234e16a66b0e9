package io.nvmeof.initiator;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
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

    /** Capacity in bytes, kept current: a namespace attribute notice from the controller updates it. */
    long size();

    /**
     * Whether the namespace is write protected (Identify Namespace NSATTR bit 0), kept current like
     * {@link #size()}. Writes to it fail with Namespace is Write Protected.
     */
    default boolean readOnly() {
        return false;
    }

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

    /** Deallocates (trims) a range (Dataset Management); it then reads back as zeroes if the target says so. */
    CompletableFuture<Void> discardAsync(long offset, long length);

    void discard(long offset, long length) throws IOException;

    /** Writes zeroes to a range (Write Zeroes): no data crosses the wire. */
    CompletableFuture<Void> writeZeroesAsync(long offset, long length);

    void writeZeroes(long offset, long length) throws IOException;

    /** Scatter: fills the buffers in order from consecutive bytes at {@code offset}. */
    CompletableFuture<Void> readAsync(long offset, ByteBuffer... dsts);

    /** Gather: writes the buffers in order to consecutive bytes at {@code offset}. */
    CompletableFuture<Void> writeAsync(long offset, ByteBuffer... srcs);

    /** The largest transfer of one command (MDTS); larger transfers are split. */
    int maxTransferSize();

    /**
     * Copies {@code length} bytes from {@code from} to {@code to} within the namespace (the NVMe
     * Copy command: the data does not cross the network; as a memmove where the ranges overlap).
     * Where the namespace offers no Copy, the host reads and writes the data itself.
     */
    default CompletableFuture<Void> copyAsync(long from, long to, long length) {
        throw new UnsupportedOperationException("copy is not available on " + this);
    }

    /** Synchronous {@link #copyAsync}. */
    default void copy(long from, long to, long length) throws IOException {
        throw new UnsupportedOperationException("copy is not available on " + this);
    }

    /**
     * The namespace's persistent reservation (register, acquire, release, report), for software
     * that fences hosts through it; through every path of a multipath device.
     */
    default Reservations reservations() {
        throw new UnsupportedOperationException("reservations are not available on " + this);
    }

    /** A reusable request for the allocation-free callback form. */
    IoRequest newRequest();

    /** The device as a {@link java.nio.channels.SeekableByteChannel}, at any byte position. */
    default BlockDeviceChannel channel() {
        return new BlockDeviceChannel(this);
    }

    /** Bytes from {@code offset} to the end of the device, as a stream. */
    default InputStream inputStream(long offset) throws IOException {
        BlockDeviceChannel c = channel();
        c.position(offset);
        return Channels.newInputStream(c);
    }

    /** Writes from {@code offset} on; closing the stream flushes the device. */
    default OutputStream outputStream(long offset) throws IOException {
        BlockDeviceChannel c = channel();
        c.position(offset);
        return Channels.newOutputStream(c);
    }
}
