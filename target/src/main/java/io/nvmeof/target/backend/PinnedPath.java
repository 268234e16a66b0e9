package io.nvmeof.target.backend;

import java.io.IOException;
import java.lang.ref.Reference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;

/**
 * A file or block device found beneath a directory with no symbolic link anywhere on the way,
 * and held: {@code openat2(2)} with {@code RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS} from a
 * descriptor of the directory, so that a component swapped for a link after a path was checked
 * makes the open fail instead of leading elsewhere. The descriptor stays open while this lives,
 * and {@link #handle()} ({@code /proc/self/fd/N}) names that very inode: every later open of the
 * storage (its size, growing it, the descriptors for fallocate and io_uring) goes through it, as
 * Java cannot wrap a raw descriptor in a {@code FileChannel}.
 */
public final class PinnedPath implements AutoCloseable {
    /** openat2(2)'s number, the same on x86-64 and the generic table (arm64 and the rest). */
    private static final long SYS_OPENAT2 = 437;
    private static final int O_WRONLY = 1;
    private static final int O_CREAT = 0x40;
    private static final int O_EXCL = 0x80;
    private static final int O_DIRECTORY = 0x10000;
    private static final int O_PATH = 0x200000;
    private static final long RESOLVE_NO_MAGICLINKS = 0x02;
    private static final long RESOLVE_NO_SYMLINKS = 0x04;
    private static final long RESOLVE_BENEATH = 0x08;
    private static final int ENOENT = 2;

    private final Path path;
    private final boolean created;
    private int fd;

    private PinnedPath(Path path, int fd, boolean created) {
        this.path = path;
        this.fd = fd;
        this.created = created;
    }

    /**
     * Holds {@code root.resolve(relative)}, found from {@code root} without following a link
     * and without leaving it. If it does not exist and {@code create}, it is created empty
     * (mode 0600, O_EXCL), and {@link #created()} says so; else a missing file is an error.
     */
    public static PinnedPath beneath(Path root, Path relative, boolean create) throws IOException {
        if (relative.isAbsolute() || relative.toString().isEmpty()) {
            throw new IllegalArgumentException("not a relative path: " + relative);
        }
        Path full = root.resolve(relative);
        LinuxIo.LibC libc = LinuxIo.libc();
        int dir = libc.open(root.toString(), O_PATH | O_DIRECTORY | LinuxIo.O_CLOEXEC);
        if (dir < 0) {
            throw LinuxIo.error("open " + root);
        }
        try {
            long resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
            int fd = openat2(libc, dir, relative.toString(), O_PATH | LinuxIo.O_CLOEXEC, 0, resolve);
            if (fd >= 0) {
                return new PinnedPath(full, fd, false);
            }
            int errno = Runtime.getRuntime(libc).getLastError();
            if (errno != ENOENT || !create) {
                throw new IOException("open " + full + " (no symbolic link followed): " + libc.strerror(errno)
                        + " (errno " + errno + ")");
            }
            fd = openat2(libc, dir, relative.toString(), O_WRONLY | O_CREAT | O_EXCL | LinuxIo.O_CLOEXEC, 0600, resolve);
            if (fd < 0) {
                throw LinuxIo.error("create " + full + " (no symbolic link followed)");
            }
            return new PinnedPath(full, fd, true);
        } finally {
            libc.close(dir);
        }
    }

    private static int openat2(LinuxIo.LibC libc, int dir, String path, long flags, long mode, long resolve) {
        Runtime rt = Runtime.getRuntime(libc);
        byte[] name = path.getBytes(StandardCharsets.UTF_8);
        Pointer p = Memory.allocateDirect(rt, name.length + 1, true);
        p.put(0, name, 0, name.length);
        Pointer how = Memory.allocateDirect(rt, 24, true); // struct open_how {u64 flags, mode, resolve}
        how.putLong(0, flags);
        how.putLong(8, mode);
        how.putLong(16, resolve);
        int fd = (int) libc.syscall(SYS_OPENAT2, dir, p.address(), how.address(), 24, 0);
        Reference.reachabilityFence(p); // the call took raw addresses: keep the memory until it returned
        Reference.reachabilityFence(how);
        return fd;
    }

    /** The path it was found at, for messages and the configuration. */
    public Path path() {
        return path;
    }

    /** {@code /proc/self/fd/N}: opens of this path open the held file itself, whatever its path names now. */
    public Path handle() {
        if (fd < 0) {
            throw new IllegalStateException(path + ": closed");
        }
        return Path.of("/proc/self/fd/" + fd);
    }

    /** Whether it is a block device ({@code true}) or a regular file ({@code false}); anything else is refused. */
    public boolean blockDevice() throws IOException {
        int type = (Integer) Files.getAttribute(handle(), "unix:mode") & 0170000;
        if (type != 0060000 && type != 0100000) {
            throw new IOException(path + " is neither a regular file nor a block device");
        }
        return type == 0060000;
    }

    /** Whether {@link #beneath} created the file (empty). */
    public boolean created() {
        return created;
    }

    @Override
    public synchronized void close() throws IOException {
        int f = fd;
        fd = -1;
        LinuxIo.close(f);
    }
}
