package io.nvmeof.target.backend;

import java.io.IOException;
import jnr.ffi.byref.IntByReference;

/** Images made on a cluster (the management API's {@code add_namespace} with {@code "create": true}). */
public final class RbdImages {
    /** EEXIST. */
    private static final int EEXIST = 17;

    private RbdImages() {
    }

    /** The image to be made exists already. */
    public static final class Exists extends IOException {
        Exists(String message) {
            super(message);
        }
    }

    /**
     * Makes image {@code name} of {@code bytes} bytes in {@code pool} of the cluster {@code key}
     * names, with librbd's default format and features (those of the cluster's configuration).
     * Blocks: never on an event loop.
     */
    public static void create(RbdCluster.Key key, String pool, String name, long bytes) throws IOException {
        if (bytes <= 0) {
            throw new IllegalArgumentException("an image's size must be positive: " + bytes);
        }
        try (RbdCluster c = RbdCluster.connect(key, RbdCluster.connectTimeoutMs, RbdCluster.opTimeoutMs)) {
            long io = c.pool(pool);
            int rc = Rbd.rbd().rbd_create(io, name, bytes, new IntByReference(0)); // order 0: the default
            if (rc == -EEXIST) {
                throw new Exists("rbd:" + pool + "/" + name + " exists on " + c.describe());
            }
            if (rc < 0) {
                throw Rbd.error("creating rbd:" + pool + "/" + name + " on " + c.describe(), rc);
            }
        }
    }
}
