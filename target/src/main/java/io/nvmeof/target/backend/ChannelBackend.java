package io.nvmeof.target.backend;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * What file and block-device backends share: positional I/O on a {@link FileChannel} (which
 * may move fewer bytes than asked, so it loops), fdatasync for Flush, a raw descriptor
 * for the calls Java has no API for (-1 if none), and one for io_uring, opened on first use.
 */
abstract class ChannelBackend extends AbstractBackend {
    protected final FileChannel channel;
    protected final int fd;
    protected final boolean readOnly;
    /** Its path, for messages. */
    protected final Path path;
    /** The path it is reopened at (its own path, or the {@link PinnedPath} handle that names that very inode). */
    private final Path openAt;
    /** What holds the file's handle open while the backend lives (null: nothing). */
    private final PinnedPath pin;
    /** Opened with O_DIRECT: data buffers and offsets aligned to {@link #bufferAlignment()}. */
    protected final boolean direct;
    /** The descriptor {@link #ringFd()} opened, -1 before; -2 once closed. Read per command without a lock. */
    private volatile int ringFd = -1;

    ChannelBackend(Path path, Path openAt, PinnedPath pin, boolean direct, FileChannel channel, int fd, long size,
                   int blockSize, boolean readOnly) {
        super("usable", size, blockSize);
        this.path = path;
        this.openAt = openAt;
        this.pin = pin;
        this.direct = direct;
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
    public boolean ringDirect() {
        return direct;
    }

    @Override
    public int ringFd() throws IOException {
        int f = ringFd;
        if (f == -1) {
            synchronized (this) {
                if (ringFd == -1) {
                    ringFd = LinuxIo.open(openAt.toString(), !readOnly, direct);
                }
                f = ringFd;
            }
        }
        if (f < 0) {
            throw new ClosedChannelException();
        }
        return f;
    }

    @Override
    public void close() throws IOException {
        int ring;
        synchronized (this) {
            ring = ringFd;
            ringFd = -2;
        }
        try {
            channel.close();
        } finally {
            try {
                LinuxIo.close(fd);
            } finally {
                try {
                    LinuxIo.close(ring);
                } finally {
                    if (pin != null) {
                        pin.close();
                    }
                }
            }
        }
    }
}
