package io.nvmeof.target.backend;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.function.BiConsumer;
import java.util.function.IntConsumer;
import jnr.ffi.Pointer;
import jnr.ffi.TypeAlias;
import jnr.ffi.byref.NumberByReference;
import jnr.ffi.byref.PointerByReference;

/**
 * One small RADOS object that gateways share and change by compare-and-swap, and hear of each
 * other's changes through: its bytes are an 8-byte version (big-endian) followed by the data. A
 * change writes the next version only if the object still holds the version it was read at (a
 * comparison of its first 8 bytes and the write in one operation, so two gateways never both
 * win), or creates the object at version 1 where it is not there yet. {@link #watch} hears of
 * changes that the changer announces by {@link #notify}. Every call blocks on the cluster (up to
 * librados' op timeout): never on an event loop.
 */
public final class RadosObject {
    /** EEXIST: the object is there (an exclusive create). */
    private static final int EEXIST = 17;
    /** librados' MAX_ERRNO: a failed comparison returns -(MAX_ERRNO + the offset of the first difference) or less. */
    private static final int MAX_ERRNO = 4095;
    private static final int HEADER = Long.BYTES;

    /** What the object held when read: its version (0: not there) and data. */
    public record Versioned(long version, byte[] data) {
    }

    private final RbdCluster cluster;
    private final long io;
    private final String oid;

    /** Object {@code oid} of {@code pool}, through {@code cluster} (whose reference the caller keeps). */
    public RadosObject(RbdCluster cluster, String pool, String oid) throws IOException {
        this.cluster = cluster;
        this.io = cluster.pool(pool);
        this.oid = oid;
    }

    public String oid() {
        return oid;
    }

    /** The object's version and data; version 0 and no data where it is not there. */
    public Versioned read() throws IOException {
        byte[] buf = new byte[4096];
        while (true) {
            int rc = Rbd.rados().rados_read(io, oid, buf, buf.length, 0);
            if (rc == -Rbd.ENOENT) {
                return new Versioned(0, new byte[0]);
            }
            if (rc < 0) {
                throw Rbd.error(oid + ": reading", rc);
            }
            if (rc == buf.length) { // there may be more: read it all again, in one read
                buf = new byte[buf.length * 4];
                continue;
            }
            if (rc < HEADER) {
                throw new IOException(oid + ": " + rc + " bytes, not a versioned object (8 bytes of version first)");
            }
            return new Versioned(ByteBuffer.wrap(buf).getLong(0), Arrays.copyOfRange(buf, HEADER, rc));
        }
    }

    /**
     * Writes {@code data} as version {@code expected + 1} if the object is still at version {@code
     * expected} (0: not there yet); false, changing nothing, if another changed it first.
     */
    public boolean compareAndSet(long expected, byte[] data) throws IOException {
        byte[] bytes = ByteBuffer.allocate(HEADER + data.length).putLong(expected + 1).put(data).array();
        // a write operation keeps its buffers' addresses until it runs: native memory that lives
        // past that, not the copies jnr-ffi makes of arrays for the length of one call
        Pointer next = Rbd.memory(bytes.length);
        next.put(0, bytes, 0, bytes.length);
        Pointer was = Rbd.memory(HEADER + Integer.BYTES);
        was.put(0, ByteBuffer.allocate(HEADER).putLong(expected).array(), 0, HEADER); // big-endian, as the object has it
        Rbd.LibRados r = Rbd.rados();
        long op = r.rados_create_write_op();
        if (op == 0) {
            throw new IOException(oid + ": librados made no write operation");
        }
        try {
            if (expected == 0) {
                r.rados_write_op_create(op, 1, null);
            } else {
                r.rados_write_op_cmpext(op, was, HEADER, 0, was.slice(HEADER)); // the last 4 bytes: its result
            }
            r.rados_write_op_write_full(op, next, bytes.length);
            int rc = r.rados_write_op_operate(op, io, oid, null, 0);
            if (rc == 0) {
                return true;
            }
            if (rc == -EEXIST || rc == -Rbd.ENOENT || rc <= -MAX_ERRNO) {
                return false; // created meanwhile, removed meanwhile, or at another version
            }
            throw Rbd.error(oid + ": writing version " + (expected + 1), rc);
        } finally {
            r.rados_release_write_op(op);
        }
    }

    /**
     * Tells every watcher of the object {@code payload}, waiting up to {@code timeoutMs} for them
     * to take it; returns the negated errno librados gave (0: every watcher acknowledged;
     * -ETIMEDOUT: one did not in time, which a watcher that is gone does until its watch lapses).
     */
    public int notify(byte[] payload, long timeoutMs) throws IOException {
        Rbd.LibRados r = Rbd.rados();
        PointerByReference replies = new PointerByReference();
        NumberByReference length = new NumberByReference(TypeAlias.size_t);
        int rc = r.rados_notify2(io, oid, payload, payload.length, timeoutMs, replies, length);
        Pointer p = replies.getValue();
        if (p != null && p.address() != 0) {
            r.rados_buffer_free(p);
        }
        if (rc < 0 && rc != -Rbd.ETIMEDOUT) {
            throw Rbd.error(oid + ": notifying its watchers", rc);
        }
        return rc;
    }

    /**
     * Calls {@code listener} with the payload of every notify and the acknowledgement to run once
     * it has taken it (exactly once, from any thread: the notifier waits for it), on a librados
     * thread that it must not block; {@code broken} with the negated errno when the watch breaks
     * (the client was cut off or fenced; watch again). The object must be there. Closing the
     * watch ends it.
     */
    public Watch watch(BiConsumer<byte[], Runnable> listener, IntConsumer broken) throws IOException {
        return new Watch(listener, broken);
    }

    /** A watch on the object; holds the callbacks librados calls, so that they stay reachable. */
    public final class Watch implements AutoCloseable {
        private final Rbd.WatchCallback callback;
        private final Rbd.WatchErrorCallback error;
        private final long cookie;
        private boolean closed;

        private Watch(BiConsumer<byte[], Runnable> listener, IntConsumer broken) throws IOException {
            Rbd.LibRados r = Rbd.rados();
            this.callback = (arg, notifyId, handle, notifierId, data, length) -> {
                byte[] payload = new byte[(int) Math.max(0, Math.min(length, Integer.MAX_VALUE))];
                if (payload.length > 0 && data != null) {
                    data.get(0, payload, 0, payload.length);
                }
                listener.accept(payload, () -> r.rados_notify_ack(io, oid, notifyId, handle, null, 0));
            };
            this.error = (arg, handle, err) -> broken.accept(err);
            long[] c = new long[1];
            int rc = r.rados_watch2(io, oid, c, callback, error, 0);
            if (rc < 0) {
                throw Rbd.error(oid + ": watching", rc);
            }
            this.cookie = c[0];
        }

        /** Ends the watch, and waits until no callback of it runs. */
        @Override
        public synchronized void close() throws IOException {
            if (closed) {
                return;
            }
            closed = true;
            Rbd.LibRados r = Rbd.rados();
            int rc = r.rados_unwatch2(io, cookie);
            r.rados_watch_flush(cluster.handle());
            if (rc < 0 && rc != -Rbd.ENOENT && rc != -Rbd.EBLOCKLISTED) {
                throw Rbd.error(oid + ": ending the watch", rc);
            }
        }
    }
}
