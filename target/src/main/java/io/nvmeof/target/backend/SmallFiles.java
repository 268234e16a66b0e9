package io.nvmeof.target.backend;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;
import jnr.ffi.Runtime;

/**
 * Reads a small regular file (a key, a password) and nothing else: opened non-blocking, so a FIFO
 * or a device named in its place neither hangs the reader nor is read; its type checked on the
 * descriptor opened, so a swap after a check cannot slip another file in; at most {@code max}
 * bytes, so a large file named by mistake or malice costs nothing.
 */
public final class SmallFiles {
    private static final int O_NONBLOCK = 0x800;
    private static final int O_NOCTTY = 0x100;
    private static final int EAGAIN = 11;
    private static final int EINTR = 4;

    private SmallFiles() {
    }

    /** A regular file's bytes, if at most {@code max}; else an IOException that says what it is. */
    public static byte[] read(Path path, int max) throws IOException {
        if (!Files.isRegularFile(path)) {
            throw new IOException(path + " is not a regular file"); // a device is never opened (some act on open)
        }
        LinuxIo.LibC libc = LinuxIo.libc();
        int fd = libc.open(path.toString(), LinuxIo.O_RDONLY | O_NONBLOCK | O_NOCTTY | LinuxIo.O_CLOEXEC);
        if (fd < 0) {
            throw LinuxIo.error("open " + path);
        }
        try {
            BasicFileAttributes a = Files.readAttributes(Path.of("/proc/self/fd/" + fd), BasicFileAttributes.class);
            if (!a.isRegularFile()) {
                throw new IOException(path + " is not a regular file");
            }
            if (a.size() > max) {
                throw new IOException(path + " is " + a.size() + " bytes, more than the " + max + " a key file may hold");
            }
            byte[] buf = new byte[max + 1];
            int n = 0;
            while (n < buf.length) {
                byte[] chunk = new byte[buf.length - n];
                long r = libc.read(fd, chunk, chunk.length);
                if (r < 0) {
                    int errno = Runtime.getRuntime(libc).getLastError();
                    if (errno == EINTR) {
                        continue;
                    }
                    throw new IOException("read " + path + ": " + libc.strerror(errno) + " (errno " + errno + ")"
                            + (errno == EAGAIN ? ", it would block" : ""));
                }
                if (r == 0) {
                    break;
                }
                System.arraycopy(chunk, 0, buf, n, (int) r);
                n += (int) r;
            }
            if (n > max) {
                throw new IOException(path + " holds more than the " + max + " bytes a key file may hold");
            }
            return Arrays.copyOf(buf, n);
        } finally {
            libc.close(fd);
        }
    }
}
