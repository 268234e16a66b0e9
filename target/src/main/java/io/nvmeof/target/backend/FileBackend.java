package io.nvmeof.target.backend;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A regular file as a namespace, with positional reads and writes. A missing file is created
 * at the requested size; an existing one keeps its contents and its size (rounded down to
 * whole blocks) unless a larger size is asked for, when it grows. Flush forces data to the
 * device ({@code fdatasync}); Deallocate punches holes and Write Zeroes zeroes ranges with
 * {@code fallocate}. With direct I/O the page cache is bypassed (O_DIRECT) and data buffers
 * must be aligned to 4 KiB.
 */
public final class FileBackend extends ChannelBackend {
    /** Buffer and offset alignment for O_DIRECT that suits every common file system. */
    static final int DIRECT_ALIGNMENT = 4096;
    private volatile boolean punchSupported = true;

    /** {@code fd}: a second descriptor for fallocate (FileChannel hides its own); -1 when read-only. */
    private FileBackend(Path path, Path openAt, PinnedPath pin, FileChannel channel, long size, int blockSize,
                        boolean readOnly, boolean direct, int fd) {
        super(path, openAt, pin, direct, channel, fd, size, blockSize, readOnly);
    }

    /**
     * Opens {@code path}; {@code size <= 0} means "use the file's size" and requires the
     * file to exist.
     */
    public static FileBackend open(Path path, long size, int blockSize, boolean readOnly) throws IOException {
        return open(path, size, blockSize, readOnly, false);
    }

    public static FileBackend open(Path path, long size, int blockSize, boolean readOnly, boolean direct)
            throws IOException {
        return open(path, path, null, size, blockSize, readOnly, direct);
    }

    /**
     * Opens the file {@code pin} holds (a file it created is sized here), every open through its
     * handle; the backend owns {@code pin} from then on, and closes it, on a failure too.
     */
    public static FileBackend open(PinnedPath pin, long size, int blockSize, boolean readOnly, boolean direct)
            throws IOException {
        try {
            return open(pin.path(), pin.handle(), pin, size, blockSize, readOnly, direct);
        } catch (IOException | RuntimeException e) {
            pin.close();
            throw e;
        }
    }

    /** {@code path} names the file in messages; {@code at} is where it is opened. */
    private static FileBackend open(Path path, Path at, PinnedPath pin, long size, int blockSize, boolean readOnly,
                                    boolean direct) throws IOException {
        boolean exists = Files.exists(at) && !(pin != null && pin.created());
        if (!exists && size <= 0) {
            throw new IOException(path + " does not exist; give a size to create it");
        }
        if (exists && !Files.isRegularFile(at)) {
            throw new IOException(path + " is not a regular file");
        }
        if (direct && blockSize % DIRECT_ALIGNMENT != 0) {
            throw new IOException("direct I/O on " + path + " needs 4096-byte blocks");
        }
        if (!exists) {
            // create and size it without O_DIRECT, then reopen (a pinned file is there, empty)
            try (FileChannel c = pin != null ? FileChannel.open(at, StandardOpenOption.WRITE)
                    : FileChannel.open(at, StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW)) {
                c.write(ByteBuffer.wrap(new byte[1]), size - 1);
                c.force(true);
            }
        }
        List<OpenOption> options = new ArrayList<>(List.of(StandardOpenOption.READ));
        if (!readOnly) {
            options.add(StandardOpenOption.WRITE);
        }
        if (direct) {
            options.add(ExtendedOpenOption.DIRECT);
        }
        FileChannel ch = FileChannel.open(at, options.toArray(new OpenOption[0]));
        int fd = -1;
        try {
            long current = ch.size();
            long want = size > 0 ? size : current;
            if (want > current) {
                if (readOnly) {
                    throw new IOException(path + " is " + current + " bytes, smaller than the " + want + " asked for");
                }
                try (FileChannel grow = FileChannel.open(at, StandardOpenOption.WRITE)) {
                    grow.write(ByteBuffer.wrap(new byte[1]), want - 1); // sparse extension
                    grow.force(true);
                }
            }
            long usable = want - want % blockSize;
            if (usable <= 0) {
                throw new IOException(path + " is smaller than one " + blockSize + "-byte block");
            }
            if (!readOnly) {
                fd = LinuxIo.open(at.toString(), true);
            }
            return new FileBackend(path, at, pin, ch, usable, blockSize, readOnly, direct, fd);
        } catch (IOException | RuntimeException e) {
            ch.close();
            LinuxIo.close(fd);
            throw e;
        }
    }

    @Override
    public int bufferAlignment() {
        return direct ? DIRECT_ALIGNMENT : 1;
    }

    @Override
    public void deallocate(long offset, long length) throws IOException {
        if (fd >= 0 && punchSupported && !LinuxIo.fallocate(fd, LinuxIo.FALLOC_FL_PUNCH_HOLE | LinuxIo.FALLOC_FL_KEEP_SIZE,
                offset, length, path.toString())) {
            punchSupported = false; // the file system cannot; deallocate stays advisory
        }
    }

    @Override
    public boolean deallocatedReadsZeroes() {
        return punchSupported;
    }

    @Override
    public void writeZeroes(long offset, long length) throws IOException {
        if (fd >= 0 && LinuxIo.fallocate(fd, LinuxIo.FALLOC_FL_ZERO_RANGE | LinuxIo.FALLOC_FL_KEEP_SIZE, offset, length,
                path.toString())) {
            return;
        }
        super.writeZeroes(offset, length);
    }

    /**
     * Copy by copy_file_range(2): the kernel moves the data (or the file system shares the
     * extents), none of it through the JVM. Where the kernel refuses (overlapping ranges in one
     * file give EINVAL; some file systems), the rest goes through {@code bounce}.
     */
    @Override
    public void copy(long from, long to, long length, ByteBuffer bounce) throws IOException {
        long done = 0;
        if (fd >= 0 && copyFileRange) {
            done = LinuxIo.copyFileRange(fd, from, to, length);
            boolean overlap = from < to + length && to < from + length;
            if (done < length && !overlap) {
                copyFileRange = false; // refused for no reason of these ranges: this file system cannot
            }
        }
        if (done < length) {
            super.copy(from + done, to + done, length - done, bounce);
        }
    }

    /**
     * Sets the file's length (a hole where it grows). The caller keeps writers out
     * ({@code Namespace.resize}); a file opened read-only cannot change.
     */
    @Override
    public void resize(long newSize) throws IOException {
        checkSize(newSize);
        if (fd < 0) {
            throw new UnsupportedOperationException("a read-only file namespace cannot change size: " + path);
        }
        LinuxIo.ftruncate(fd, newSize, path.toString());
        size = newSize;
    }

    /** The file's length now, in whole blocks: what a rescan after the file grew outside finds. */
    @Override
    public long storageSize() throws IOException {
        return channel.size() / blockSize() * blockSize();
    }

    /** Whether copy_file_range may work here; false once the file system refused it. */
    private volatile boolean copyFileRange = true;

    @Override
    public String describe() {
        return "file:" + path + (direct ? ",direct" : "");
    }

}
