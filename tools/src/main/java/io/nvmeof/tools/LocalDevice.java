package io.nvmeof.tools;

import com.sun.nio.file.ExtendedOpenOption;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.IoRequest;
import io.nvmeof.target.backend.BlockBackend;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A local disk or file as a {@link BlockDevice}, so that {@code nvmeof bench} measures it the
 * way it measures a remote namespace: positional reads and writes (fio's {@code psync}), one
 * thread per slot of the queue depth, with O_DIRECT when asked ({@code --direct=1}, buffers
 * aligned to 4 KiB). A block device's size and logical block size come from the kernel
 * (BLKGETSIZE64, BLKSSZGET); a file that does not exist is created, sparse, with {@code --size}.
 */
public final class LocalDevice implements BlockDevice, AutoCloseable {
    private final Path path;
    private final FileChannel channel;
    private final long size;
    private final int blockSize;
    private final ExecutorService threads;

    private LocalDevice(Path path, FileChannel channel, long size, int blockSize, int threads) {
        this.path = path;
        this.channel = channel;
        this.size = size;
        this.blockSize = blockSize;
        AtomicInteger n = new AtomicInteger();
        this.threads = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "bench-psync-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** Whether the bench's target names a local path rather than an nvme+tcp:// or nvme+rdma:// URI. */
    public static boolean isLocal(String target) {
        return !target.contains("://");
    }

    /**
     * Opens {@code path} for the bench: a block device or file, read-write when {@code write},
     * O_DIRECT when {@code direct}; a missing file is created with {@code createSize} bytes.
     */
    public static LocalDevice open(Path path, long createSize, boolean direct, boolean write, int threads) throws IOException {
        boolean exists = Files.exists(path);
        long size;
        int bs;
        if (exists && Files.isDirectory(path)) {
            throw new IOException(path + " is a directory");
        }
        if (exists && !Files.isRegularFile(path)) {
            try (BlockBackend b = BlockBackend.open(path, 0, !write)) {
                size = b.size();
                bs = b.blockSize();
            }
        } else {
            if (!exists) {
                if (createSize <= 0) {
                    throw new IOException(path + " does not exist; give --size to create it");
                }
                try (FileChannel c = FileChannel.open(path, StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW)) {
                    c.write(ByteBuffer.wrap(new byte[1]), createSize - 1);
                }
            }
            size = Files.size(path);
            bs = direct ? 4096 : 512;
            size -= size % bs;
            if (size < bs) {
                throw new IOException(path + " is smaller than one " + bs + "-byte block");
            }
        }
        List<OpenOption> options = new ArrayList<>(List.of(StandardOpenOption.READ));
        if (write) {
            options.add(StandardOpenOption.WRITE);
        }
        if (direct) {
            options.add(ExtendedOpenOption.DIRECT);
        }
        return new LocalDevice(path, FileChannel.open(path, options.toArray(new OpenOption[0])), size, bs, threads);
    }

    @Override
    public int nsid() {
        return 1;
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
    public int maxTransferSize() {
        return Integer.MAX_VALUE;
    }

    @Override
    public CompletableFuture<Void> readAsync(long offset, ByteBuffer dst) {
        return CompletableFuture.runAsync(() -> unchecked(() -> read(offset, dst)), threads);
    }

    @Override
    public CompletableFuture<Void> writeAsync(long offset, ByteBuffer src) {
        return CompletableFuture.runAsync(() -> unchecked(() -> write(offset, src)), threads);
    }

    @Override
    public CompletableFuture<Void> flushAsync() {
        return CompletableFuture.runAsync(() -> unchecked(this::flush), threads);
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        check(offset, dst.remaining());
        long at = offset;
        while (dst.hasRemaining()) {
            int n = channel.read(dst, at);
            if (n < 0) {
                throw new IOException("unexpected end of " + path + " at " + at);
            }
            at += n;
        }
    }

    @Override
    public void write(long offset, ByteBuffer src) throws IOException {
        check(offset, src.remaining());
        long at = offset;
        while (src.hasRemaining()) {
            at += channel.write(src, at);
        }
    }

    @Override
    public void flush() throws IOException {
        channel.force(false);
    }

    /** What a local device does not do (the bench needs none of it): discard, write zeroes, vectored I/O. */
    private static UnsupportedOperationException notHere(String what) {
        return new UnsupportedOperationException(what + " of a local device");
    }

    @Override
    public CompletableFuture<Void> discardAsync(long offset, long length) {
        return CompletableFuture.failedFuture(notHere("discard"));
    }

    @Override
    public void discard(long offset, long length) {
        throw notHere("discard");
    }

    @Override
    public CompletableFuture<Void> writeZeroesAsync(long offset, long length) {
        return CompletableFuture.failedFuture(notHere("write zeroes"));
    }

    @Override
    public void writeZeroes(long offset, long length) {
        throw notHere("write zeroes");
    }

    @Override
    public CompletableFuture<Void> readAsync(long offset, ByteBuffer... dsts) {
        return CompletableFuture.failedFuture(notHere("scattered reads"));
    }

    @Override
    public CompletableFuture<Void> writeAsync(long offset, ByteBuffer... srcs) {
        return CompletableFuture.failedFuture(notHere("gathered writes"));
    }

    /** Not one: the bench drives a local device through {@link #readAsync} and {@link #writeAsync}. */
    @Override
    public IoRequest newRequest() {
        throw notHere("NVMe requests");
    }

    private void check(long offset, int length) throws IOException {
        if (offset < 0 || offset + length > size || offset % blockSize != 0 || length % blockSize != 0) {
            throw new IOException("I/O of " + length + " bytes at " + offset + " is outside " + path + " or not in "
                    + blockSize + "-byte blocks");
        }
    }

    private interface IoAction {
        void run() throws IOException;
    }

    private static void unchecked(IoAction a) {
        try {
            a.run();
        } catch (IOException e) {
            throw new CompletionException(e);
        }
    }

    @Override
    public String toString() {
        return path.toString();
    }

    @Override
    public void close() throws IOException {
        threads.shutdownNow();
        channel.close();
    }
}
