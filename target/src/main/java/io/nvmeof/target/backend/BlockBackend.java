package io.nvmeof.target.backend;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A block device as a namespace. Size and logical block size come from the device
 * (BLKGETSIZE64, BLKSSZGET); Deallocate is BLKDISCARD, Write Zeroes BLKZEROOUT; Flush is
 * fdatasync, which also flushes the device's volatile cache.
 */
public final class BlockBackend extends ChannelBackend {
    private final Path path;

    private BlockBackend(Path path, FileChannel channel, int fd, long size, int blockSize, boolean readOnly) {
        super(channel, fd, size, blockSize, readOnly);
        this.path = path;
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
    public String describe() {
        return "block:" + path;
    }

}
