package io.nvmeof.target.backend;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.UUID;

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

    /** Writes zeroes to a range; backends with a faster way than writing a zero buffer override it. */
    default void writeZeroes(long offset, long length) throws IOException {
        int align = Math.max(bufferAlignment(), 1);
        ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(length, 1 << 20) + align).alignedSlice(align);
        long done = 0;
        while (done < length) {
            int n = (int) Math.min(zeros.capacity(), length - done);
            zeros.clear().limit(n);
            write(offset + done, zeros);
            done += n;
        }
    }

    /**
     * Copies {@code length} bytes from {@code from} to {@code to} within the backend (the Copy
     * command), as a memmove would where the ranges overlap. The default reads and writes through
     * {@code bounce} (a direct buffer of whole blocks, aligned for the backend), backward when the
     * destination lies after an overlapping source; backends with a better way override it.
     */
    default void copy(long from, long to, long length, ByteBuffer bounce) throws IOException {
        int chunk = bounce.capacity();
        boolean backward = to > from && to < from + length;
        long done = 0;
        while (done < length) {
            int n = (int) Math.min(chunk, length - done);
            long at = backward ? length - done - n : done;
            bounce.clear().limit(n);
            read(from + at, bounce);
            bounce.flip();
            write(to + at, bounce);
            done += n;
        }
    }

    /**
     * The size the storage itself has now (a file's length, a device's capacity), in whole blocks:
     * what a rescan compares with {@link #size()} after the storage grew outside the target. The
     * default: {@link #size()}, for storage that has no size of its own (RAM, null).
     */
    default long storageSize() throws IOException {
        return size();
    }

    /**
     * The namespace identity the storage itself gives (an RBD image's id), so that every target
     * serving it gives hosts the same NGUID and UUID; null where it has none (the namespace's is
     * then derived from its subsystem and NSID, unless configured).
     */
    default UUID identity() {
        return null;
    }

    /**
     * For storage that others can resize while it is served (an RBD image, by {@code rbd resize}):
     * runs {@code changed}, on a thread of the backend's, whenever its size may have changed, until
     * the backend closes. The default: nothing watches (a file's or device's new size is found at
     * the next reload or change).
     */
    default void watchStorageSize(Runnable changed) throws IOException {
    }

    /** Deallocates a range (Dataset Management, deallocate). Advisory: the default does nothing. */
    default void deallocate(long offset, long length) throws IOException {
    }

    /** Whether deallocated blocks read back as zeroes (reported in DLFEAT). */
    default boolean deallocatedReadsZeroes() {
        return false;
    }

    /**
     * A descriptor of the storage for reads, writes and fdatasync submitted to io_uring, opened
     * as the backend's own I/O is (O_DIRECT or not) and closed with the backend; -1 when the
     * backend has none (memory backends). Thrown once the backend is closed.
     */
    default int ringFd() throws IOException {
        return -1;
    }

    /** Whether {@link #ringFd()} is opened with O_DIRECT: then Linux AIO can take its I/O without blocking. */
    default boolean ringDirect() {
        return false;
    }

    /** Alignment, in bytes, that data buffers need (O_DIRECT); 1 if none. */
    default int bufferAlignment() {
        return 1;
    }

    /**
     * For a read sent without a copy: a read-only buffer over the backend's own memory holding the
     * {@code length} bytes at {@code offset} (readable bytes exactly those), which the caller
     * sends and releases; null when the data is not in this process's memory in one piece (the
     * caller then reads into a buffer of its own). Non-blocking backends only; on the event loop.
     */
    default ByteBuf readView(long offset, int length) {
        return null;
    }

    /**
     * Changes the capacity to {@code newSize} bytes (a positive multiple of the block size) in
     * place: the first {@code min(old, new)} bytes keep their data, bytes added read as zeroes.
     * The caller keeps writers out while it runs ({@code Namespace.resize}). Backends that cannot
     * say so.
     */
    default void resize(long newSize) throws IOException {
        throw new UnsupportedOperationException(describe() + " cannot change size in place");
    }

    /** Makes every completed write durable: it survives a crash of this process and of the machine. */
    void flush() throws IOException;

    /** A short description for logs and listings, e.g. {@code file:/srv/disk.img}. */
    String describe();

    @Override
    void close() throws IOException;
}
