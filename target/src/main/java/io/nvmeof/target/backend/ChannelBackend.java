package io.nvmeof.target.backend;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * What file and block-device backends share: positional I/O on a {@link FileChannel} (which
 * may move fewer bytes than asked, so it loops), fdatasync for Flush, and a raw descriptor
 * for the calls Java has no API for (-1 if none).
 */
abstract class ChannelBackend extends AbstractBackend {
    protected final FileChannel channel;
    protected final int fd;
    protected final boolean readOnly;

    ChannelBackend(FileChannel channel, int fd, long size, int blockSize, boolean readOnly) {
        super("usable", size, blockSize);
        this.channel = channel;
        this.fd = fd;
        this.readOnly = readOnly;
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
                fillZeros(dst, dst.position(), dst.limit());
                dst.position(dst.limit());
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
