package io.nvmeof.target.backend;

import io.netty.util.concurrent.FastThreadLocalThread;
import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import jnr.ffi.Pointer;
import jnr.ffi.byref.PointerByReference;

/**
 * A Ceph RBD image as a namespace, through librbd: reads, writes, Write Zeroes, deallocate (RBD
 * discard), flush and resize are librbd's own calls. Its identity comes from the image's id, so
 * every gateway that serves the image gives hosts the same NGUID and UUID. The blocking calls
 * here serve the I/O threads.
 */
public final class RbdBackend extends AbstractBackend {
    private final RbdCluster cluster;
    private final String pool;
    private final String name;
    private final long image;
    private final boolean readOnly;
    private final UUID identity;
    private volatile boolean closed;
    /** Where {@link #watchStorageSize}'s callbacks run: librbd's thread only hands them over. */
    private static final Executor WATCHES = Executors.newSingleThreadExecutor(
            r -> {
                Thread t = new Thread(r, "rbd-watch");
                t.setDaemon(true);
                return t;
            });
    /** The update watch's callback (held here: librbd keeps only its address) and handle. */
    private Rbd.UpdateCallback watch;
    private long watchHandle;

    /** Asynchronous I/O for the event loops, made on first use (null: not yet, or refused); read per command. */
    private volatile RbdAio aio;
    private boolean aioRefused;

    private RbdBackend(RbdCluster cluster, String pool, String name, long image, int blockSize, boolean readOnly,
                       UUID identity, long size) {
        super("rbd", size, blockSize);
        this.cluster = cluster;
        this.pool = pool;
        this.name = name;
        this.image = image;
        this.readOnly = readOnly;
        this.identity = identity;
    }

    /** The cluster connection the image is open through. */
    public RbdCluster cluster() {
        return cluster;
    }

    /** The image's pool. */
    public String pool() {
        return pool;
    }

    /**
     * Opens image {@code name} of {@code pool} through {@code cluster} (this backend holds that
     * reference from now on, and gives it up on a failure too). {@code blockSize} 0 is 512, as
     * SPDK's bdev_rbd and Ceph's gateway have it.
     */
    public static RbdBackend open(RbdCluster cluster, String pool, String name, int blockSize, boolean readOnly)
            throws IOException {
        long image = 0;
        try {
            Rbd.LibRbd r = Rbd.rbd();
            long io = cluster.pool(pool);
            PointerByReference ref = new PointerByReference();
            int rc = r.rbd_open(io, name, ref, null);
            if (rc < 0) {
                throw Rbd.error("rbd:" + pool + "/" + name + " on " + cluster.describe(), rc);
            }
            image = Rbd.address(ref);
            int bs = blockSize == 0 ? 512 : blockSize;
            long[] sz = new long[1];
            rc = r.rbd_get_size(image, sz);
            if (rc < 0) {
                throw Rbd.error("rbd:" + pool + "/" + name + ": size", rc);
            }
            Pointer id = Rbd.memory(64);
            rc = r.rbd_get_id(image, id, 64);
            if (rc < 0) {
                throw Rbd.error("rbd:" + pool + "/" + name + ": id", rc);
            }
            String imageId = id.getString(0, 64, StandardCharsets.US_ASCII);
            // the pool by name and the image by id: the same namespace identity from every gateway
            UUID identity = UUID.nameUUIDFromBytes(("rbd:" + pool + "/" + imageId).getBytes(StandardCharsets.UTF_8));
            return new RbdBackend(cluster, pool, name, image, bs, readOnly, identity, sz[0] / bs * bs);
        } catch (IOException | RuntimeException e) {
            if (image != 0) {
                Rbd.rbd().rbd_close(image);
            }
            cluster.close();
            throw e;
        }
    }

    /**
     * The image's asynchronous I/O, made on first use: an eventfd librbd writes as completions
     * wait. Null where it cannot be had (then the I/O threads serve every command).
     */
    public RbdAio aio() {
        RbdAio a = aio;
        return a != null ? a : makeAio();
    }

    private synchronized RbdAio makeAio() {
        if (aio != null || aioRefused || closed) {
            return aio;
        }
        try {
            LinuxIo.LibC c = LinuxIo.libc();
            int fd = c.eventfd(0, LinuxIo.EFD_NONBLOCK | LinuxIo.EFD_CLOEXEC);
            if (fd < 0) {
                throw LinuxIo.error("eventfd");
            }
            try {
                aio = new RbdAio(Rbd.rbd(), image, fd);
            } catch (IOException | RuntimeException e) {
                c.close(fd);
                throw e;
            }
        } catch (IOException | RuntimeException | LinkageError e) {
            aioRefused = true;
            System.getLogger(RbdBackend.class.getName()).log(System.Logger.Level.WARNING,
                    "{0}: the I/O threads serve it: no asynchronous librbd I/O ({1})", describe(), e.getMessage());
        }
        return aio;
    }

    @Override
    public boolean blocking() {
        return true;
    }

    @Override
    public UUID identity() {
        return identity;
    }

    /** librbd's update watch: a header change (a resize among others) runs {@code changed} on a thread of ours. */
    @Override
    public synchronized void watchStorageSize(Runnable changed) throws IOException {
        if (watch != null || closed) {
            return;
        }
        Rbd.UpdateCallback cb = arg -> WATCHES.execute(changed);
        long[] handle = new long[1];
        int rc = Rbd.rbd().rbd_update_watch(image, handle, cb, 0);
        if (rc < 0) {
            throw Rbd.error(describe() + ": update watch", rc);
        }
        watch = cb;
        watchHandle = handle[0];
    }

    /**
     * Changes the image's size to {@code bytes}, leaving this backend's until a rescan finds it (as
     * {@code rbd resize} would): the management API's resize, after which the namespace is resized
     * in place and its hosts told.
     */
    public void resizeImage(long bytes) throws IOException {
        int rc = Rbd.rbd().rbd_resize(open(), bytes);
        if (rc < 0) {
            throw Rbd.error(describe() + ": resize to " + bytes, rc);
        }
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        int n = dst.remaining();
        if (!dst.isDirect()) {
            ByteBuffer d = ByteBuffer.allocateDirect(n);
            read(offset, d);
            dst.put(d.flip());
            return;
        }
        long rc = Rbd.rbd().rbd_read(open(), offset, n, PlatformDependent.directBufferAddress(dst) + dst.position());
        if (rc < 0) {
            throw Rbd.error(describe() + ": read at " + offset, rc);
        }
        if (rc < n) { // past the end of a shrunk image: zeroes
            fillZeros(dst, dst.position() + (int) rc, dst.limit());
        }
        dst.position(dst.limit());
    }

    @Override
    public void write(long offset, ByteBuffer src) throws IOException {
        int n = src.remaining();
        if (!src.isDirect()) {
            ByteBuffer d = ByteBuffer.allocateDirect(n).put(src.duplicate()).flip();
            write(offset, d);
            src.position(src.limit());
            return;
        }
        long rc = Rbd.rbd().rbd_write(open(), offset, n, PlatformDependent.directBufferAddress(src) + src.position());
        if (rc < 0) {
            throw Rbd.error(describe() + ": write at " + offset, rc);
        }
        if (rc != n) {
            throw new IOException(describe() + ": a write at " + offset + " moved " + rc + " of " + n + " bytes");
        }
        src.position(src.limit());
    }

    @Override
    public void writeZeroes(long offset, long length) throws IOException {
        long rc = Rbd.rbd().rbd_write_zeroes(open(), offset, length, 0, 0);
        if (rc < 0) {
            throw Rbd.error(describe() + ": write zeroes at " + offset, rc);
        }
    }

    @Override
    public void deallocate(long offset, long length) throws IOException {
        int rc = Rbd.rbd().rbd_discard(open(), offset, length);
        if (rc < 0) {
            throw Rbd.error(describe() + ": discard at " + offset, rc);
        }
    }

    @Override
    public void flush() throws IOException {
        int rc = Rbd.rbd().rbd_flush(open());
        if (rc < 0) {
            throw Rbd.error(describe() + ": flush", rc);
        }
    }

    @Override
    public long storageSize() throws IOException {
        long[] sz = new long[1];
        int rc = Rbd.rbd().rbd_get_size(open(), sz);
        if (rc < 0) {
            throw Rbd.error(describe() + ": size", rc);
        }
        return sz[0] / blockSize * blockSize;
    }

    @Override
    public void resize(long newSize) throws IOException {
        if (storageSize() != newSize) {
            resizeImage(newSize);
        }
        size = newSize;
    }

    private long open() throws IOException {
        if (closed) {
            throw new ClosedChannelException();
        }
        return image;
    }

    @Override
    public String describe() {
        return "rbd:" + pool + "/" + name;
    }

    /**
     * Closes the image. librbd's close talks to the cluster (it gives up the exclusive lock), so it
     * never runs on an event loop, where the last command's release may call this: there it is
     * handed to a thread of its own; elsewhere this waits for it. Where a loop watches the image's
     * eventfd, that loop first stops watching and polling, so no poll touches a closed image.
     */
    @Override
    public void close() throws IOException {
        RbdAio a;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            a = aio;
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        Runnable nativeClose = () -> {
            try {
                if (watch != null) {
                    Rbd.rbd().rbd_update_unwatch(image, watchHandle);
                }
                Rbd.rbd().rbd_close(image);
                if (a != null) {
                    a.close(); // after the image: librbd writes the eventfd no more
                }
                done.complete(null);
            } catch (IOException | RuntimeException e) {
                done.completeExceptionally(e);
            } finally {
                cluster.close();
            }
        };
        RbdAio.Watcher w = a == null ? null : a.watcher();
        if (w != null) {
            w.closing(() -> CLOSES.execute(nativeClose));
        } else {
            if (a != null) {
                a.stopPolling();
            }
            CLOSES.execute(nativeClose);
        }
        if (Thread.currentThread() instanceof FastThreadLocalThread) {
            return; // an event loop (or a thread like one): it does not wait
        }
        try {
            done.get(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException(describe() + ": close: " + e.getMessage(), e);
        }
    }

    /** Where images close: librbd's close and rados_shutdown block on the cluster. */
    private static final Executor CLOSES = Executors.newSingleThreadExecutor(
            r -> {
                Thread t = new Thread(r, "rbd-close");
                t.setDaemon(true);
                return t;
            });
}
