package io.nvmeof.target.backend;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
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
     * What a notify came to: librados' result (0: every watcher acknowledged; -ETIMEDOUT: some
     * did not in time, which a watcher that is gone does until its watch lapses) and the global
     * ids of the clients whose watches did not acknowledge.
     */
    public record Notified(int rc, List<Long> missed) {
        public Notified {
            missed = List.copyOf(missed);
        }
    }

    /** Tells every watcher of the object {@code payload}, waiting up to {@code timeoutMs} for them to take it. */
    public Notified notify(byte[] payload, long timeoutMs) throws IOException {
        Rbd.LibRados r = Rbd.rados();
        PointerByReference replies = new PointerByReference();
        NumberByReference length = new NumberByReference(TypeAlias.size_t);
        int rc = r.rados_notify2(io, oid, payload, payload.length, timeoutMs, replies, length);
        Pointer p = replies.getValue();
        List<Long> missed = List.of();
        if (p != null && p.address() != 0) {
            try {
                long n = length.longValue();
                byte[] b = new byte[(int) Math.max(0, Math.min(n, 1 << 20))];
                p.get(0, b, 0, b.length);
                missed = missed(b);
            } finally {
                r.rados_buffer_free(p);
            }
        }
        if (rc < 0 && rc != -Rbd.ETIMEDOUT) {
            throw Rbd.error(oid + ": notifying its watchers", rc);
        }
        return new Notified(rc, missed);
    }

    /**
     * The watchers a notify's reply names as not having acknowledged. The reply is the OSD's
     * encoding (little-endian): the acknowledgements, a map from (global id, cookie) to the
     * watcher's reply bytes (a 32-bit count, then per entry two 64-bit ids and a 32-bit length
     * and the bytes); then the ones missed, a list of (global id, cookie).
     */
    static List<Long> missed(byte[] reply) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(reply).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        try {
            for (long acks = Integer.toUnsignedLong(b.getInt()); acks > 0; acks--) {
                b.getLong();
                b.getLong();
                int len = b.getInt();
                if (len < 0 || len > b.remaining()) {
                    throw new IOException("a notify reply whose acknowledgement claims " + Integer.toUnsignedString(len)
                            + " bytes, past its end");
                }
                b.position(b.position() + len);
            }
            long n = Integer.toUnsignedLong(b.getInt());
            if (n > b.remaining() / 16) {
                throw new IOException("a notify reply that claims " + n + " missed watchers, past its end");
            }
            List<Long> missed = new ArrayList<>();
            for (long i = 0; i < n; i++) {
                missed.add(b.getLong());
                b.getLong();
            }
            return missed;
        } catch (java.nio.BufferUnderflowException e) {
            throw new IOException("a notify reply of " + reply.length + " bytes that ends early", e);
        }
    }

    /**
     * Fences the clients {@code ids} that watch this object (found by the addresses their watches
     * published): a blocklist entry for each, then the newest OSD map, so that none of them
     * changes anything in the cluster from now on. Returns the addresses fenced.
     *
     * @throws IOException if a client's address is not published here, or the blocklist failed
     */
    public List<String> fence(List<Long> ids) throws IOException {
        List<String> fenced = new ArrayList<>();
        for (long id : ids) {
            byte[] b = new byte[256];
            int rc = Rbd.rados().rados_getxattr(io, oid, WATCHER + Long.toUnsignedString(id), b, b.length);
            if (rc < 0) {
                throw Rbd.error(oid + ": the address of watcher client." + Long.toUnsignedString(id), rc);
            }
            String address = new String(b, 0, rc, java.nio.charset.StandardCharsets.UTF_8);
            cluster.blocklist(address, 0);
            Rbd.rados().rados_rmxattr(io, oid, WATCHER + Long.toUnsignedString(id)); // gone for good
            fenced.add(address);
        }
        return fenced;
    }

    /** The attribute under which a watching client publishes its address, by its global id. */
    private static final String WATCHER = "watcher.";

    /**
     * Calls {@code listener} with the payload of every notify of another client (this client's
     * own are acknowledged at once, unheard) and the acknowledgement to run once
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
            long self = cluster.instanceId();
            this.callback = (arg, notifyId, handle, notifierId, data, length) -> {
                if (notifierId == self) { // this client's own notify: it knows
                    r.rados_notify_ack(io, oid, notifyId, handle, null, 0);
                    return;
                }
                byte[] payload = new byte[(int) Math.max(0, Math.min(length, Integer.MAX_VALUE))];
                if (payload.length > 0 && data != null) {
                    data.get(0, payload, 0, payload.length);
                }
                listener.accept(payload, () -> r.rados_notify_ack(io, oid, notifyId, handle, null, 0));
            };
            this.error = (arg, handle, err) -> broken.accept(err);
            // who watches, for a notifier that must fence a watcher that does not answer
            byte[] address = cluster.address().getBytes(java.nio.charset.StandardCharsets.UTF_8);
            int rc = r.rados_setxattr(io, oid, WATCHER + Long.toUnsignedString(cluster.instanceId()), address,
                    address.length);
            if (rc < 0) {
                throw Rbd.error(oid + ": publishing this watcher's address", rc);
            }
            long[] c = new long[1];
            rc = r.rados_watch2(io, oid, c, callback, error, 0);
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
            // its published address stays: another watch of this client (a namespace object that
            // replaced this one) may still use it
            if (rc < 0 && rc != -Rbd.ENOENT && rc != -Rbd.EBLOCKLISTED) {
                throw Rbd.error(oid + ": ending the watch", rc);
            }
        }
    }
}
