package io.nvmeof.target.backend;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A block device as a namespace. Size and logical block size come from the device
 * (BLKGETSIZE64, BLKSSZGET); Deallocate is BLKDISCARD, Write Zeroes BLKZEROOUT; Flush is
 * fdatasync, which also flushes the device's volatile cache. With direct I/O (O_DIRECT) the page
 * cache is bypassed, as gateways sharing the device need: data buffers are then aligned to
 * 4 KiB, which covers every logical block size.
 */
public final class BlockBackend extends ChannelBackend {

    private BlockBackend(Path path, Path openAt, PinnedPath pin, FileChannel channel, int fd, long size, int blockSize,
            boolean readOnly, boolean direct) {
        super(path, openAt, pin, direct, channel, fd, size, blockSize, readOnly);
    }

    /** Opens a block device through the page cache; {@code blockSize} 0 takes the device's logical block size. */
    public static BlockBackend open(Path path, int blockSize, boolean readOnly) throws IOException {
        return open(path, blockSize, readOnly, false);
    }

    /** Opens a block device, with O_DIRECT if {@code direct}; {@code blockSize} 0 takes the device's logical block size. */
    public static BlockBackend open(Path path, int blockSize, boolean readOnly, boolean direct) throws IOException {
        return open(path, path, null, blockSize, readOnly, direct);
    }

    /**
     * Opens the device {@code pin} holds, every open through its handle; the backend owns {@code
     * pin} from then on, and closes it, on a failure too.
     */
    public static BlockBackend open(PinnedPath pin, int blockSize, boolean readOnly, boolean direct) throws IOException {
        try {
            return open(pin.path(), pin.handle(), pin, blockSize, readOnly, direct);
        } catch (IOException | RuntimeException e) {
            pin.close();
            throw e;
        }
    }

    /** {@code path} names the device in messages; {@code at} is where it is opened. */
    private static BlockBackend open(Path path, Path at, PinnedPath pin, int blockSize, boolean readOnly, boolean direct)
            throws IOException {
        if (!Files.exists(at)) {
            throw new IOException(path + " does not exist");
        }
        int fd = LinuxIo.open(at.toString(), !readOnly);
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
            List<OpenOption> options = new ArrayList<>(List.of(StandardOpenOption.READ));
            if (!readOnly) {
                options.add(StandardOpenOption.WRITE);
            }
            if (direct) {
                options.add(ExtendedOpenOption.DIRECT);
            }
            ch = FileChannel.open(at, options.toArray(new OpenOption[0]));
            return new BlockBackend(path, at, pin, ch, fd, size - size % bs, bs, readOnly, direct);
        } catch (IOException | RuntimeException e) {
            if (ch != null) {
                ch.close();
            }
            LinuxIo.close(fd);
            throw e;
        }
    }

    @Override
    public int bufferAlignment() {
        return direct ? FileBackend.DIRECT_ALIGNMENT : 1;
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

    /** The device's capacity now (BLKGETSIZE64), in whole blocks. */
    @Override
    public long storageSize() throws IOException {
        return LinuxIo.blockDeviceSize(fd, path.toString()) / blockSize() * blockSize();
    }

    /**
     * A block device's size is its own: the namespace takes it when the device was resized (a
     * rescan); any other size is refused.
     */
    @Override
    public void resize(long newSize) throws IOException {
        long device = storageSize();
        if (newSize != device) {
            throw new UnsupportedOperationException("a block namespace has its device's size (" + device + " bytes of "
                    + path + "): resize the device, then rescan");
        }
        size = newSize;
    }

    @Override
    public String describe() {
        return "block:" + path + (direct ? ",direct" : "");
    }

}
