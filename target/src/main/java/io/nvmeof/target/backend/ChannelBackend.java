package io.nvmeof.target.backend;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * What file and block-device backends share: positional I/O on a {@link FileChannel} (which
 * may move fewer bytes than asked, so it loops), fdatasync for Flush, and a raw descriptor
 * for the calls Java has no API for (-1 if none).
 */
abstract class ChannelBackend implements Backend {
    protected final FileChannel channel;
    protected final int fd;
    protected final long size;
    protected final int blockSize;
    protected final boolean readOnly;

    ChannelBackend(FileChannel channel, int fd, long size, int blockSize, boolean readOnly) {
        this.channel = channel;
        this.fd = fd;
        this.size = size;
        this.blockSize = blockSize;
        this.readOnly = readOnly;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    @Override
    public boolean blocking() {
        return true;
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        long at = offset;
        while (dst.hasRemaining()) {
            int n = channel.read(dst, at);
            if (n < 0) {
                // past the end of a sparse or shrunk file: reads as zeros
                while (dst.hasRemaining()) {
                    dst.put((byte) 0);
                }
                return;
            }
            at += n;
        }
    }

    @Override
    public void write(long offset, ByteBuffer src) throws IOException {
        long at = offset;
        while (src.hasRemaining()) {
            at += channel.write(src, at);
        }
    }

    /** The interface's zero-buffer fallback, for subclasses that try something faster first. */
    @Override
    public void writeZeroes(long offset, long length) throws IOException {
        Backend.super.writeZeroes(offset, length);
    }

    @Override
    public void flush() throws IOException {
        if (!readOnly) {
            channel.force(false);
        }
    }

    @Override
    public void close() throws IOException {
        try {
            channel.close();
        } finally {
            LinuxIo.close(fd);
        }
    }
}
