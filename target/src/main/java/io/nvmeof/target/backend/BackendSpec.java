package io.nvmeof.target.backend;

import io.nvmeof.fabric.Sizes;
import java.io.IOException;

/**
 * What storage a namespace has: {@code kind} ram, null, file or block; {@code path} of a file
 * or device; {@code size} in bytes (0: the file's or device's own); {@code blockSize} 512 or
 * 4096 (0: the device's own, else 4096). {@link #parse} reads the command line's form:
 * {@code ram:256M}, {@code null:1T}, {@code file:/path/disk.img[,size=1G][,bs=512][,ro][,direct]},
 * {@code block:/dev/sdb[,ro][,direct]}, {@code rbd:POOL/IMAGE[,conf=PATH][,id=CLIENT][,bs=512][,ro]} (a
 * Ceph RBD image; {@code cluster}: its cluster's configuration file and client id); errors name
 * the bad part. {@link #open} opens it.
 */
public record BackendSpec(String kind, String path, long size, int blockSize, boolean readOnly, boolean directIo,
                          RbdCluster.Key cluster) {

    /** Of a kind other than rbd. */
    public BackendSpec(String kind, String path, long size, int blockSize, boolean readOnly, boolean directIo) {
        this(kind, path, size, blockSize, readOnly, directIo, null);
    }

    /** An RBD image {@code image} of {@code pool}, through the cluster {@code cluster} names. */
    public static BackendSpec rbd(RbdCluster.Key cluster, String pool, String image, int blockSize, boolean readOnly) {
        return new BackendSpec("rbd", pool + "/" + image, 0, blockSize, readOnly, false, cluster);
    }

    /** An RBD spec's pool. */
    public String pool() {
        return path.substring(0, path.indexOf('/'));
    }

    /** An RBD spec's image. */
    public String image() {
        return path.substring(path.indexOf('/') + 1);
    }

    /** Opens the backend: the one place that maps kinds to classes. */
    public Backend open() throws IOException {
        return Backends.open(this);
    }

    /**
     * Opens a file or block backend through {@code pin}, which holds the file or device this
     * spec's path resolved to (the backend owns it from then on, and closes it on a failure too).
     */
    public Backend open(PinnedPath pin) throws IOException {
        return Backends.open(this, pin);
    }

    /** The spec a string describes. */
    public static BackendSpec parse(String spec) {
        int colon = spec.indexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("namespace '" + spec + "': expected ram:SIZE, null:SIZE, file:PATH[,size=SIZE]"
                    + " or block:DEVICE");
        }
        String kind = spec.substring(0, colon);
        String[] parts = spec.substring(colon + 1).split(",");
        long size = 0;
        int blockSize = 0;
        boolean readOnly = false;
        boolean direct = false;
        String conf = null;
        String id = null;
        String first = parts[0];
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i];
            if (p.startsWith("size=")) {
                size = Sizes.parse(p.substring(5), "size");
            } else if (p.startsWith("bs=")) {
                blockSize = (int) Sizes.parse(p.substring(3), "bs");
                if (blockSize != 512 && blockSize != 4096) {
                    throw new IllegalArgumentException("namespace '" + spec + "': bs must be 512 or 4096");
                }
            } else if (p.equals("ro")) {
                readOnly = true;
            } else if (p.equals("direct")) {
                direct = true;
            } else if (p.startsWith("conf=") && kind.equals("rbd")) {
                conf = p.substring(5);
            } else if (p.startsWith("id=") && kind.equals("rbd")) {
                id = p.substring(3);
            } else {
                throw new IllegalArgumentException("namespace '" + spec + "': unknown option '" + p + "'");
            }
        }
        switch (kind) {
            case "ram":
            case "null":
                return new BackendSpec(kind, null, Sizes.parse(first, kind + " size"), blockSize, readOnly, false);
            case "file":
            case "block":
                if (first.isEmpty()) {
                    throw new IllegalArgumentException("namespace '" + spec + "': " + kind + " path is empty");
                }
                if (kind.equals("block") && size != 0) {
                    throw new IllegalArgumentException("namespace '" + spec + "': a block device has its own size");
                }
                return new BackendSpec(kind, first, size, blockSize, readOnly, direct);
            case "rbd":
                if (!first.matches("[^/]+/[^/]+") || size != 0 || direct) {
                    throw new IllegalArgumentException("namespace '" + spec + "': expected rbd:POOL/IMAGE[,conf=PATH]"
                            + "[,id=CLIENT][,bs=512|4096][,ro] (an image has its own size)");
                }
                return rbd(new RbdCluster.Key(conf, id), first.substring(0, first.indexOf('/')),
                        first.substring(first.indexOf('/') + 1), blockSize, readOnly);
            default:
                throw new IllegalArgumentException("namespace '" + spec + "': unknown backend '" + kind
                        + "' (ram, null, file, block, rbd)");
        }
    }

    /** Opens the backend a spec names. */
    public static Backend open(String spec) throws IOException {
        return parse(spec).open();
    }
}
