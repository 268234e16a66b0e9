package io.nvmeof.target.backend;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A block device as a namespace. Size and logical block size come from the device
 * (BLKGETSIZE64, BLKSSZGET); Deallocate is BLKDISCARD, Write Zeroes BLKZEROOUT; Flush is
 * fdatasync, which also flushes the device's volatile cache.
 */
public final class BlockBackend implements Backend {
    private final Path path;
    private final FileChannel channel;
    private final int fd;
    private final long size;
    private final int blockSize;
    private final boolean readOnly;

    private BlockBackend(Path path, FileChannel channel, int fd, long size, int blockSize, boolean readOnly) {
        this.path = path;
        this.channel = channel;
        this.fd = fd;
        this.size = size;
        this.blockSize = blockSize;
        this.readOnly = readOnly;
    }

    /** Opens a block device; {@code blockSize} 0 takes the device's logical block size. */
    public static BlockBackend open(Path path, int blockSize, boolean readOnly) throws IOException {
        if (!Files.exists(path)) {
            throw new IOException(path + " does not exist");
        }
        int fd = LinuxIo.open(path.toString(), !readOnly);
        FileChannel ch = null;
        try {
            long size = LinuxIo.blockDeviceSize(fd, path.toString());
            int lbs = LinuxIo.logicalBlockSize(fd, path.toString());
            int bs = blockSize == 0 ? lbs : blockSize;
            if (bs < lbs || bs % lbs != 0) {
                throw new IOException(path + " has " + lbs + "-byte logical blocks; a " + bs + "-byte namespace block cannot map onto them");
            }
            if (size < bs) {
                throw new IOException(path + " is smaller than one block");
            }
            ch = readOnly ? FileChannel.open(path, StandardOpenOption.READ)
                    : FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
            return new BlockBackend(path, ch, fd, size - size % bs, bs, readOnly);
        } catch (IOException | RuntimeException e) {
            if (ch != null) {
                ch.close();
            }
            LinuxIo.close(fd);
            throw e;
        }
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
                throw new IOException("short read at " + at + " of " + path);
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
    public void deallocate(long offset, long length) throws IOException {
        if (!readOnly) {
            LinuxIo.blockRange(fd, LinuxIo.BLKDISCARD, offset, length, "BLKDISCARD on " + path);
        }
    }

    @Override
    public void writeZeroes(long offset, long length) throws IOException {
        LinuxIo.blockRange(fd, LinuxIo.BLKZEROOUT, offset, length, "BLKZEROOUT on " + path);
    }

    @Override
    public void flush() throws IOException {
        if (!readOnly) {
            channel.force(false);
        }
    }

    @Override
    public String describe() {
        return "block:" + path;
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
