package io.nvmeof.target.backend;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import jnr.ffi.Pointer;
import jnr.ffi.byref.PointerByReference;

/**
 * A connection to a Ceph cluster (a {@code rados_t}), shared by every RBD namespace that names
 * the same configuration file and client, and its pools' I/O contexts. {@link #connect} gives a
 * counted reference: the connection ends when the last namespace that uses it closes.
 */
public final class RbdCluster implements AutoCloseable {
    /** What names a connection: the configuration file (null: librados' default search) and the client id. */
    public record Key(String conf, String id) {
    }

    private static final Map<Key, RbdCluster> OPEN = new HashMap<>();
    /**
     * The timeouts new connections get: the target's settings {@code rbd_connect_timeout_ms} and
     * {@code rbd_op_timeout_ms} (librados' are per connection, and a connection is per process).
     */
    static volatile long connectTimeoutMs = 30_000;
    static volatile long opTimeoutMs = 20_000;

    /** Sets the timeouts of connections made from now on. */
    public static void timeouts(long connectMs, long opMs) {
        connectTimeoutMs = connectMs;
        opTimeoutMs = opMs;
    }

    private final Key key;
    private final long handle;
    private final Map<String, Long> pools = new HashMap<>();
    /** References, guarded by {@code RbdCluster.class}. */
    private int references;

    private RbdCluster(Key key, long handle) {
        this.key = key;
        this.handle = handle;
    }

    /**
     * The connection for {@code key}, made now if there is none: its configuration file read, the
     * timeouts set (milliseconds, whole seconds as librados takes them), and connected, which
     * takes at most {@code connectTimeoutMs}. Blocks: never on an event loop.
     */
    public static RbdCluster connect(Key key, long connectTimeoutMs, long opTimeoutMs) throws IOException {
        synchronized (RbdCluster.class) {
            RbdCluster c = OPEN.get(key);
            if (c != null) {
                c.references++;
                return c;
            }
        }
        // connecting may take up to the timeout: outside the lock, so another cluster is not held up
        RbdCluster made = open(key, connectTimeoutMs, opTimeoutMs);
        RbdCluster other;
        synchronized (RbdCluster.class) {
            other = OPEN.get(key);
            if (other == null) {
                made.references = 1;
                OPEN.put(key, made);
                return made;
            }
            other.references++;
        }
        made.shutdown(); // another connected meanwhile: that one serves, and this one ends outside the lock
        return other;
    }

    private static RbdCluster open(Key key, long connectTimeoutMs, long opTimeoutMs) throws IOException {
        Rbd.LibRados r = Rbd.rados();
        PointerByReference ref = new PointerByReference();
        String who = "Ceph cluster " + (key.conf() == null ? "(default configuration)" : key.conf()) + " as client."
                + (key.id() == null ? "admin" : key.id());
        int rc = r.rados_create2(ref, "ceph", "client." + (key.id() == null ? "admin" : key.id()), 0);
        if (rc < 0) {
            throw Rbd.error(who + ": rados_create2", rc);
        }
        long h = Rbd.address(ref);
        RbdCluster c = new RbdCluster(key, h);
        try {
            rc = r.rados_conf_read_file(h, key.conf());
            if (rc < 0) {
                throw Rbd.error(who + ": reading " + (key.conf() == null ? "the default configuration" : key.conf()), rc);
            }
            set(r, h, who, "client_mount_timeout", seconds(connectTimeoutMs));
            set(r, h, who, "rados_mon_op_timeout", seconds(opTimeoutMs));
            set(r, h, who, "rados_osd_op_timeout", seconds(opTimeoutMs));
            // no client-side cache: a write is on the cluster when it completes, so another gateway
            // serving the image reads it, and a crash of this process loses nothing acknowledged
            set(r, h, who, "rbd_cache", "false");
            // librados logs to stderr and files only where the operator's configuration says
            rc = r.rados_connect(h);
            if (rc < 0) {
                throw Rbd.error(who + ": cannot connect within " + seconds(connectTimeoutMs) + " s", rc);
            }
            return c;
        } catch (IOException | RuntimeException e) {
            c.shutdown();
            throw e;
        }
    }

    private static String seconds(long ms) {
        return Long.toString(Math.max(1, (ms + 999) / 1000));
    }

    private static void set(Rbd.LibRados r, long h, String who, String option, String value) throws IOException {
        int rc = r.rados_conf_set(h, option, value);
        if (rc < 0) {
            throw Rbd.error(who + ": setting " + option, rc);
        }
    }

    public Key key() {
        return key;
    }

    /** The I/O context of {@code pool}, made on first use and kept while the connection lasts. */
    public synchronized long pool(String pool) throws IOException {
        Long io = pools.get(pool);
        if (io != null) {
            return io;
        }
        PointerByReference ref = new PointerByReference();
        int rc = Rbd.rados().rados_ioctx_create(handle, pool, ref);
        if (rc < 0) {
            throw Rbd.error("pool " + pool + " of " + describe(), rc);
        }
        long h = Rbd.address(ref);
        pools.put(pool, h);
        return h;
    }

    /**
     * This client's address as the cluster knows it ({@code 127.0.0.1:0/NONCE}): what a
     * blocklist entry that fences it names.
     */
    public String address() throws IOException {
        PointerByReference ref = new PointerByReference();
        Rbd.LibRados r = Rbd.rados();
        int rc = r.rados_getaddrs(handle, ref);
        if (rc < 0) {
            throw Rbd.error(describe() + ": its address", rc);
        }
        Pointer p = ref.getValue();
        try {
            return firstAddress(p.getString(0));
        } finally {
            r.rados_buffer_free(p);
        }
    }

    /**
     * The first address of librados' list ({@code [v2:127.0.0.1:0/123,v1:...]} or one bare), without
     * its protocol: the form {@code ceph osd blocklist} shows and takes.
     */
    static String firstAddress(String addrs) {
        String a = addrs.trim();
        if (a.startsWith("[")) {
            a = a.substring(1, a.endsWith("]") ? a.length() - 1 : a.length());
        }
        int comma = a.indexOf(',');
        if (comma >= 0) {
            a = a.substring(0, comma);
        }
        int colon = a.indexOf(':');
        if (colon > 0 && (a.startsWith("v1:") || a.startsWith("v2:") || a.startsWith("any:"))) {
            a = a.substring(colon + 1);
        }
        return a;
    }

    /**
     * Fences the client at {@code address} (a blocklist entry for {@code expireSeconds}), then
     * waits until this client has the OSD map with it: from this client's next operation on, no
     * OSD takes one of the fenced client's.
     */
    public void blocklist(String address, int expireSeconds) throws IOException {
        Rbd.LibRados r = Rbd.rados();
        int rc = r.rados_blocklist_add(handle, address, expireSeconds);
        if (rc < 0) {
            throw Rbd.error(describe() + ": blocklisting " + address, rc);
        }
        rc = r.rados_wait_for_latest_osdmap(handle);
        if (rc < 0) {
            throw Rbd.error(describe() + ": the OSD map after blocklisting " + address, rc);
        }
    }

    /** This client's global id in the cluster (its name is {@code client.ID}). */
    public long instanceId() throws IOException {
        return Rbd.rados().rados_get_instance_id(handle);
    }

    /** The librados handle ({@code rados_t}), for calls of this package's neighbours. */
    long handle() {
        return handle;
    }

    /**
     * This connection is no longer handed out (the cluster fenced it): the next {@link #connect}
     * of its key makes a new client. Those holding it keep their references until they close.
     */
    public void retire() {
        synchronized (RbdCluster.class) {
            OPEN.remove(key, this);
        }
    }

    /** For messages: the configuration file and client. */
    public String describe() {
        return (key.conf() == null ? "the default Ceph configuration" : key.conf()) + " (client."
                + (key.id() == null ? "admin" : key.id()) + ")";
    }

    /** Gives up this reference; the last one ends the connection. */
    @Override
    public void close() {
        synchronized (RbdCluster.class) {
            if (--references > 0) {
                return;
            }
            OPEN.remove(key, this);
        }
        shutdown();
    }

    private void shutdown() {
        try {
            Rbd.LibRados r = Rbd.rados();
            synchronized (this) {
                for (long io : pools.values()) {
                    r.rados_ioctx_destroy(io);
                }
                pools.clear();
            }
            r.rados_shutdown(handle);
        } catch (IOException e) {
            // not reached: the libraries were loaded to make the handle
        }
    }
}
