package io.nvmeof.target.backend;

import java.io.IOException;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.Delegate;
import jnr.ffi.byref.IntByReference;
import jnr.ffi.byref.NumberByReference;
import jnr.ffi.byref.PointerByReference;

/**
 * Ceph's C libraries, librados and librbd (Debian's {@code librados2} and {@code librbd1}),
 * through jnr-ffi: no native code to build, and nothing needed until an RBD namespace is opened.
 * Handles ({@code rados_t}, {@code rados_ioctx_t}, {@code rbd_image_t}, {@code
 * rbd_completion_t}) are passed as addresses ({@code long}), and the data path's calls take only
 * numbers, which jnr-ffi calls without allocating (up to six of them). A missing library is an
 * {@link IOException} that says which package to install.
 */
public final class Rbd {
    /** librados' functions used. */
    public interface LibRados {
        int rados_create2(PointerByReference cluster, String clusterName, String name, long flags);

        int rados_conf_read_file(long cluster, String path);

        int rados_conf_set(long cluster, String option, String value);

        int rados_connect(long cluster);

        void rados_shutdown(long cluster);

        int rados_ioctx_create(long cluster, String pool, PointerByReference ioctx);

        void rados_ioctx_destroy(long ioctx);

        /**
         * Takes (or, with {@link #LOCK_FLAG_MAY_RENEW}, renews) the exclusive lock {@code name} of
         * object {@code oid} as {@code cookie} for the {@code struct timeval} at {@code duration}
         * (0 s: no expiry); -EBUSY while another holds it.
         */
        int rados_lock_exclusive(long ioctx, String oid, String name, String cookie, String desc, Pointer duration,
                                 byte flags);

        int rados_unlock(long ioctx, String oid, String name, String cookie);

        /** Blocklists a client by its address ({@code 127.0.0.1:0/123}) for {@code expireSeconds} (0: the cluster's default). */
        int rados_blocklist_add(long cluster, String address, int expireSeconds);

        /** This client's addresses, as a string librados allocates ({@link #rados_buffer_free}). */
        int rados_getaddrs(long cluster, PointerByReference addrs);

        void rados_buffer_free(Pointer buffer);

        /** This client's global id in the cluster ({@code client.ID}): what a notify's reply names watchers by. */
        long rados_get_instance_id(long cluster);

        int rados_rmxattr(long ioctx, String oid, String name);

        /** Waits until this client has the cluster's newest OSD map (after a blocklist, every OSD refuses the fenced client's operations from this one's next op on). */
        int rados_wait_for_latest_osdmap(long cluster);

        int rados_setxattr(long ioctx, String oid, String name, byte[] value, long length);

        /** The attribute's length, or a negated errno (-ENODATA, 61, where it is not set; -ENOENT where the object is not). */
        int rados_getxattr(long ioctx, String oid, String name, byte[] value, long length);

        /** Bytes read, or a negated errno (-ENOENT where the object is not). */
        int rados_read(long ioctx, String oid, byte[] buffer, long length, long offset);

        long rados_create_write_op();

        void rados_release_write_op(long op);

        /** exclusive 1: the operation fails with -EEXIST if the object is there. */
        void rados_write_op_create(long op, int exclusive, String category);

        /**
         * The object's bytes from {@code offset} must equal {@code buffer}, or the operation fails
         * (rc below -4095). The operation keeps the pointers until it runs: native memory only.
         */
        void rados_write_op_cmpext(long op, Pointer buffer, long length, long offset, Pointer prval);

        /** The operation keeps the pointer until it runs: native memory only. */
        void rados_write_op_write_full(long op, Pointer buffer, long length);

        int rados_write_op_operate(long op, long ioctx, String oid, Pointer mtime, int flags);

        /** Watches {@code oid}: {@code callback} on every notify (on a librados thread), {@code error} when the watch breaks. */
        int rados_watch2(long ioctx, String oid, long[] cookie, WatchCallback callback, WatchErrorCallback error, long arg);

        int rados_unwatch2(long ioctx, long cookie);

        int rados_notify_ack(long ioctx, String oid, long notifyId, long cookie, byte[] buffer, int length);

        /** Notifies every watcher of {@code oid}, waiting up to {@code timeoutMs} for their acks; the replies librados allocates. */
        int rados_notify2(long ioctx, String oid, byte[] buffer, int length, long timeoutMs, PointerByReference replies,
                NumberByReference repliesLength);

        /** Waits until every watch callback already queued has run. */
        int rados_watch_flush(long cluster);
    }

    /** rados_watchcb2_t: {@code void (*)(void *arg, uint64_t notify_id, uint64_t handle, uint64_t notifier_id, void *data, size_t data_len)}. */
    public interface WatchCallback {
        @Delegate
        void notified(long arg, long notifyId, long cookie, long notifierId, Pointer data, long length);
    }

    /** rados_watcherrcb_t: {@code void (*)(void *pre, uint64_t cookie, int err)}. */
    public interface WatchErrorCallback {
        @Delegate
        void broken(long arg, long cookie, int err);
    }

    /** {@code LIBRADOS_LOCK_FLAG_MAY_RENEW}: taking a lock this cookie holds renews it. */
    public static final byte LOCK_FLAG_MAY_RENEW = 1;
    /** EBUSY: a lock another holds. */
    public static final int EBUSY = 16;
    /** ENODATA: no such attribute. */
    public static final int ENODATA = 61;

    /** librbd's functions used. */
    public interface LibRbd {
        int rbd_open(long ioctx, String name, PointerByReference image, String snapName);

        int rbd_close(long image);

        int rbd_create(long ioctx, String name, long size, IntByReference order);

        int rbd_get_size(long image, long[] size);

        int rbd_get_id(long image, Pointer id, long length);

        int rbd_resize(long image, long size);

        long rbd_read(long image, long offset, long length, long buffer);

        long rbd_write(long image, long offset, long length, long buffer);

        long rbd_write2(long image, long offset, long length, long buffer, int opFlags);

        int rbd_discard(long image, long offset, long length);

        long rbd_write_zeroes(long image, long offset, long length, int zeroFlags, int opFlags);

        int rbd_flush(long image);

        /** {@code type} 2: an eventfd, written when completions of aio calls wait for {@link #rbd_poll_io_events}. */
        int rbd_set_image_notification(long image, int fd, int type);

        /** Polled completions into the array at {@code completions}; how many. */
        int rbd_poll_io_events(long image, long completions, int max);

        /** A completion whose argument is {@code arg}, with no callback: its end is polled. Written to {@code out}. */
        int rbd_aio_create_completion(long arg, long callback, long out);

        long rbd_aio_get_return_value(long completion);

        long rbd_aio_get_arg(long completion);

        void rbd_aio_release(long completion);

        int rbd_aio_read2(long image, long offset, long length, long buffer, long completion, int opFlags);

        int rbd_aio_write2(long image, long offset, long length, long buffer, long completion, int opFlags);

        int rbd_aio_discard(long image, long offset, long length, long completion);

        int rbd_aio_write_zeroes(long image, long offset, long length, long completion, int zeroFlags, int opFlags);

        int rbd_aio_flush(long image, long completion);

        /** Calls {@code callback} (on a librbd thread) when the image's header changes: a resize among others. */
        int rbd_update_watch(long image, long[] handle, UpdateCallback callback, long arg);

        int rbd_update_unwatch(long image, long handle);
    }

    /** rbd_update_callback_t: {@code void (*)(void *arg)}. */
    public interface UpdateCallback {
        @Delegate
        void updated(long arg);
    }

    /** EVENT_TYPE_EVENTFD of librbd.h. */
    public static final int EVENT_TYPE_EVENTFD = 2;
    /** LIBRADOS_OP_FLAG_FADVISE_FUA: the write is durable before it completes (RADOS writes are anyway). */
    public static final int OP_FLAG_FADVISE_FUA = 0x80;
    /** ETIMEDOUT, as librados gives up on an operation (rados_osd_op_timeout) or on mounting. */
    public static final int ETIMEDOUT = 110;
    /**
     * EBLOCKLISTED (Linux's ESHUTDOWN), as librados fails every operation of a client that the
     * cluster has blocklisted: fenced, as another gateway's break of the image's lock does.
     */
    public static final int EBLOCKLISTED = 108;
    /** ENOENT: no such pool or image. */
    public static final int ENOENT = 2;

    private static volatile LibRados rados;
    private static volatile LibRbd rbd;

    private Rbd() {
    }

    /** librados, loaded on first use. */
    public static LibRados rados() throws IOException {
        if (rados == null) {
            load();
        }
        return rados;
    }

    /** librbd, loaded on first use. */
    public static LibRbd rbd() throws IOException {
        if (rbd == null) {
            load();
        }
        return rbd;
    }

    private static synchronized void load() throws IOException {
        if (rados != null && rbd != null) {
            return;
        }
        try {
            rados = LibraryLoader.create(LibRados.class).load("rados");
            rbd = LibraryLoader.create(LibRbd.class).load("rbd");
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            throw new IOException("cannot load Ceph's librados and librbd (install librbd1): " + e.getMessage(), e);
        }
    }

    /** Whether the libraries load here (tests that need a cluster say so when they do not). */
    public static boolean available() {
        try {
            rbd();
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** A negated errno from librados or librbd, in words. */
    static String describe(long result) {
        int errno = (int) -result;
        try {
            return LinuxIo.libc().strerror(errno) + " (errno " + errno + ")";
        } catch (IOException e) {
            return "errno " + errno;
        }
    }

    /**
     * An {@link IOException} for {@code result}, a negated errno: one the cluster may recover from
     * is {@link Unavailable}, a blocklisted client's {@link Fenced}.
     */
    public static IOException error(String what, long result) {
        String text = what + ": " + describe(result);
        return -result == ETIMEDOUT ? new Unavailable(text)
                : -result == EBLOCKLISTED ? new Fenced(text + ": this gateway's client is blocklisted by the cluster")
                : new IOException(text);
    }

    /** The address a {@link PointerByReference} was given, 0 if none. */
    static long address(PointerByReference ref) {
        Pointer p = ref.getValue();
        return p == null ? 0 : p.address();
    }

    /** Native memory of {@code bytes} bytes, zeroed, freed when unreachable. */
    static Pointer memory(int bytes) {
        return Memory.allocateDirect(Runtime.getSystemRuntime(), bytes, true);
    }

    /**
     * Storage that cannot be reached now and may be later (the cluster's operation timed out):
     * hosts get Namespace Not Ready without Do Not Retry, and retry.
     */
    public static final class Unavailable extends IOException {
        public Unavailable(String message) {
            super(message);
        }
    }

    /**
     * Storage this process may no longer write: the cluster blocklisted its client (fenced).
     * Nothing through this connection lands again; hosts get a path error without Do Not Retry
     * and retry through another path.
     */
    public static final class Fenced extends IOException {
        public Fenced(String message) {
            super(message);
        }
    }
}
