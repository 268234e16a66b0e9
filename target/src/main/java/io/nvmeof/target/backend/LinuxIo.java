package io.nvmeof.target.backend;

import java.io.IOException;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Platform;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.annotations.SaveError;
import jnr.ffi.byref.IntByReference;
import jnr.ffi.byref.LongLongByReference;

/**
 * The few Linux calls Java has no API for, through jnr-ffi (no native code to build): block
 * device ioctls (BLKGETSIZE64, BLKSSZGET, BLKDISCARD, BLKZEROOUT) and fallocate for hole
 * punching. Loaded on first use; a missing libc is reported once, clearly.
 */
final class LinuxIo {
    /** _IOR(0x12, 114, size_t): device size in bytes. */
    static final long BLKGETSIZE64 = 0x80081272L;
    /** _IO(0x12, 104): logical sector size. */
    static final long BLKSSZGET = 0x1268;
    /** _IO(0x12, 119): discard a byte range {start, length}. */
    static final long BLKDISCARD = 0x1277;
    /** _IO(0x12, 127): write zeroes to a byte range {start, length}. */
    static final long BLKZEROOUT = 0x127f;
    static final int O_RDONLY = 0;
    static final int O_RDWR = 2;
    static final int O_CLOEXEC = 0x80000;
    static final int FALLOC_FL_KEEP_SIZE = 0x01;
    static final int FALLOC_FL_PUNCH_HOLE = 0x02;
    static final int FALLOC_FL_ZERO_RANGE = 0x10;

    /** The libc functions used. */
    public interface LibC {
        @SaveError
        int open(String path, int flags);

        int close(int fd);

        @SaveError
        long read(int fd, @Out byte[] buf, long count);

        @SaveError
        int ioctl(int fd, long request, @Out LongLongByReference value);

        @SaveError
        int ioctl(int fd, long request, @Out IntByReference value);

        @SaveError
        int ioctl(int fd, long request, @In long[] range);

        @SaveError
        int fallocate(int fd, int mode, long offset, long length);

        @SaveError
        int ftruncate(int fd, long length);

        @SaveError
        long copy_file_range(int fdIn, LongLongByReference offIn, int fdOut, LongLongByReference offOut, long len, int flags);

        String strerror(int errno);

        /** syscall(2), for calls libc has no wrapper for (io_uring's, see {@link IoRing}). */
        @SaveError
        long syscall(long number, long a, long b, long c, long d, long e, long f);

        /**
         * The same with five arguments, for io_uring_enter's submissions on the data path: jnr-ffi
         * calls up to six numeric parameters without allocating, seven through a heap buffer. The
         * sixth (io_uring_enter's sigsz) is then undefined: only for calls that do not wait, which
         * read neither sig nor sigsz.
         */
        @SaveError
        long syscall(long number, long a, long b, long c, long d, long e);

        int madvise(long address, long length, int advice);

        @SaveError
        int eventfd(int initval, int flags);
    }

    static final int EFD_NONBLOCK = 0x800;
    static final int EFD_CLOEXEC = 0x80000;

    private static volatile LibC libc;

    private LinuxIo() {
    }

    static LibC libc() throws IOException {
        LibC l = libc;
        if (l == null) {
            synchronized (LinuxIo.class) {
                if (libc == null) {
                    try {
                        libc = LibraryLoader.create(LibC.class).load("c");
                    } catch (UnsatisfiedLinkError | RuntimeException e) {
                        throw new IOException("cannot load libc through jnr-ffi: " + e.getMessage(), e);
                    }
                }
                l = libc;
            }
        }
        return l;
    }

    static IOException error(String what) throws IOException {
        LibC l = libc();
        int errno = Runtime.getRuntime(l).getLastError();
        return new IOException(what + ": " + l.strerror(errno) + " (errno " + errno + ")");
    }

    static final int MADV_DONTNEED = 4;
    static final int MADV_HUGEPAGE = 14;

    /**
     * Asks for transparent huge pages behind {@code [address, address + length)}, best effort: the
     * 2 MiB-aligned part is marked MADV_HUGEPAGE and its (zero) 4 KiB pages dropped, so the next
     * touch faults in huge pages. The memory must be anonymous and hold nothing yet (it reads back
     * as zeroes). Returns the bytes advised, 0 if none (no libc, no THP, or too small).
     */
    static long adviseHugePages(long address, long length) {
        long huge = 2L << 20;
        long start = (address + huge - 1) & -huge;
        long end = (address + length) & -huge;
        if (end <= start) {
            return 0;
        }
        try {
            LibC l = libc();
            if (l.madvise(start, end - start, MADV_HUGEPAGE) != 0 || l.madvise(start, end - start, MADV_DONTNEED) != 0) {
                return 0;
            }
            return end - start;
        } catch (IOException | RuntimeException | LinkageError e) {
            return 0;
        }
    }

    static int open(String path, boolean write) throws IOException {
        return open(path, write, false);
    }

    /** O_DIRECT, which differs between architectures (asm-generic's value on arm64 and most others). */
    static final int O_DIRECT = Platform.getNativePlatform().getCPU() == Platform.CPU.X86_64
            || Platform.getNativePlatform().getCPU() == Platform.CPU.I386 ? 0x4000 : 0x10000;

    /** open(2), with O_DIRECT if {@code direct}; the fd must be closed with {@link #close}. */
    static int open(String path, boolean write, boolean direct) throws IOException {
        int fd = libc().open(path, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC | (direct ? O_DIRECT : 0));
        if (fd < 0) {
            throw error("open " + path);
        }
        return fd;
    }

    /** errno values for which copy_file_range is refused rather than failed: copy another way. */
    private static final int EXDEV = 18;
    private static final int EINVAL = 22;
    private static final int ENOSYS = 38;
    private static final int EOPNOTSUPP = 95;

    /**
     * copy_file_range(2) within one file, all of {@code length} bytes from {@code from} to {@code to}
     * (the kernel may move fewer per call: it loops). Returns the bytes copied before the kernel
     * refused the call (EINVAL, as for overlapping ranges in one file; EXDEV, ENOSYS, EOPNOTSUPP),
     * {@code length} when it copied everything; an I/O error is thrown.
     */
    static long copyFileRange(int fd, long from, long to, long length) throws IOException {
        LibC l = libc();
        LongLongByReference in = new LongLongByReference(from);
        LongLongByReference out = new LongLongByReference(to);
        long done = 0;
        while (done < length) {
            long n = l.copy_file_range(fd, in, fd, out, length - done, 0);
            if (n < 0) {
                int errno = Runtime.getRuntime(l).getLastError();
                if (errno == EINVAL || errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP) {
                    return done;
                }
                throw new IOException("copy_file_range: " + l.strerror(errno) + " (errno " + errno + ")");
            }
            if (n == 0) {
                return done; // end of file: the rest the other way
            }
            done += n;
        }
        return done;
    }

    /** ftruncate(2): the file's length becomes {@code length} (a hole where it grows). */
    static void ftruncate(int fd, long length, String path) throws IOException {
        if (libc().ftruncate(fd, length) != 0) {
            throw error("ftruncate " + path + " to " + length + " bytes");
        }
    }

    static void close(int fd) throws IOException {
        if (fd >= 0) {
            libc().close(fd);
        }
    }

    static long blockDeviceSize(int fd, String path) throws IOException {
        LongLongByReference v = new LongLongByReference();
        if (libc().ioctl(fd, BLKGETSIZE64, v) != 0) {
            throw error("BLKGETSIZE64 on " + path);
        }
        return v.longValue();
    }

    static int logicalBlockSize(int fd, String path) throws IOException {
        IntByReference v = new IntByReference();
        if (libc().ioctl(fd, BLKSSZGET, v) != 0) {
            throw error("BLKSSZGET on " + path);
        }
        return v.intValue();
    }

    static void blockRange(int fd, long request, long offset, long length, String what) throws IOException {
        if (libc().ioctl(fd, request, new long[] {offset, length}) != 0) {
            throw error(what);
        }
    }

    /** fallocate(2); returns false when the file system does not support {@code mode} (EOPNOTSUPP). */
    static boolean fallocate(int fd, int mode, long offset, long length, String path) throws IOException {
        if (libc().fallocate(fd, mode, offset, length) == 0) {
            return true;
        }
        int errno = Runtime.getRuntime(libc()).getLastError();
        if (errno == 95) { // EOPNOTSUPP
            return false;
        }
        throw error("fallocate on " + path);
    }
}
