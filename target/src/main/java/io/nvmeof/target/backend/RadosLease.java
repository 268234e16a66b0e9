package io.nvmeof.target.backend;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import jnr.ffi.Pointer;

/**
 * A lease in RADOS: the exclusive lock of one object, taken for a time and renewed by whoever
 * holds it, with two attributes beside it: who held it last ({@link Holder}: the gateway, its
 * client's address, and whether it let go cleanly) and who asks for it back ({@link #want}). The
 * lock expires on the OSD's clock when its holder stops renewing; whoever takes it next reads the
 * holder to fence it. A client the cluster has blocklisted gets {@link Rbd.Fenced} from every call.
 */
public final class RadosLease {
    private static final String LOCK = "nvmeof-lease";
    private static final String HOLDER = "nvmeof.holder";
    private static final String WANT = "nvmeof.want";

    /** What taking the lease came to. */
    public enum Outcome {
        /** Taken now, or renewed. */
        HELD,
        /** Another holds it and it has not expired. */
        BUSY
    }

    /** The gateway that held the lease last, its client's address, and whether it let go cleanly (then it is not fenced). */
    public record Holder(String member, String address, boolean released) {
        String text() {
            return member + " " + address + " " + (released ? "released" : "held");
        }

        static Holder parse(String text) {
            String[] w = text.trim().split(" ");
            return w.length == 3 ? new Holder(w[0], w[1], w[2].equals("released")) : null;
        }
    }

    private final RbdCluster cluster;
    private final long io;
    private final String oid;
    private final String cookie;
    /** A {@code struct timeval}: the lease's time. */
    private final Pointer duration = Rbd.memory(16);

    /** The lease object {@code oid} of {@code pool}, taken as {@code cookie} (the gateway's name) through {@code cluster}. */
    public RadosLease(RbdCluster cluster, String pool, String oid, String cookie) throws IOException {
        this.cluster = cluster;
        this.io = cluster.pool(pool);
        this.oid = oid;
        this.cookie = cookie;
    }

    public String oid() {
        return oid;
    }

    /** Takes or renews the lease for {@code millis}; blocks on the cluster (up to librados' op timeout). */
    public Outcome take(long millis) throws IOException {
        duration.putLong(0, millis / 1000);
        duration.putLong(8, millis % 1000 * 1000);
        int rc = Rbd.rados().rados_lock_exclusive(io, oid, LOCK, cookie, "nvmeof gateway lease", duration,
                Rbd.LOCK_FLAG_MAY_RENEW);
        if (rc == -Rbd.EBUSY) {
            return Outcome.BUSY;
        }
        if (rc < 0) {
            throw Rbd.error(oid + ": taking the lease", rc);
        }
        return Outcome.HELD;
    }

    /** Lets the lease go at once (held or not). */
    public void release() throws IOException {
        int rc = Rbd.rados().rados_unlock(io, oid, LOCK, cookie);
        if (rc < 0 && rc != -Rbd.ENOENT) {
            throw Rbd.error(oid + ": releasing the lease", rc);
        }
    }

    /** Who held the lease last, or null if no one has. */
    public Holder holder() throws IOException {
        String t = attribute(HOLDER);
        return t == null ? null : Holder.parse(t);
    }

    /** Records the holder: by the one holding the lease only. */
    public void holder(Holder h) throws IOException {
        attribute(HOLDER, h.text());
    }

    /** The gateway that asks for the lease back (failback), or null. */
    public String want() throws IOException {
        String t = attribute(WANT);
        return t == null || t.isBlank() ? null : t.trim();
    }

    /** Asks for the lease (or, with "", withdraws the asking). */
    public void want(String member) throws IOException {
        attribute(WANT, member);
    }

    /** This lease's cluster connection. */
    public RbdCluster cluster() {
        return cluster;
    }

    private String attribute(String name) throws IOException {
        byte[] b = new byte[256];
        int rc = Rbd.rados().rados_getxattr(io, oid, name, b, b.length);
        if (rc == -Rbd.ENODATA || rc == -Rbd.ENOENT) {
            return null;
        }
        if (rc < 0) {
            throw Rbd.error(oid + ": reading " + name, rc);
        }
        return new String(b, 0, rc, StandardCharsets.UTF_8);
    }

    private void attribute(String name, String value) throws IOException {
        byte[] b = value.getBytes(StandardCharsets.UTF_8);
        int rc = Rbd.rados().rados_setxattr(io, oid, name, b, b.length);
        if (rc < 0) {
            throw Rbd.error(oid + ": writing " + name, rc);
        }
    }
}
