package io.nvmeof.target.backend;

import io.nvmeof.target.config.TargetConfig.NamespaceConfig;
import java.io.IOException;
import java.util.Locale;

/**
 * Parses the command line's namespace specs into namespace configurations: {@code ram:256M},
 * {@code null:1T}, {@code file:/path/disk.img[,size=1G][,bs=512][,ro][,direct]},
 * {@code block:/dev/sdb[,ro]}. Errors name the bad part.
 */
public final class BackendSpec {
    private BackendSpec() {
    }

    /** The namespace configuration a spec describes, for NSID {@code nsid}. */
    public static NamespaceConfig parse(int nsid, String spec) {
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
        String first = parts[0];
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i];
            if (p.startsWith("size=")) {
                size = parseSize(p.substring(5), "size");
            } else if (p.startsWith("bs=")) {
                blockSize = (int) parseSize(p.substring(3), "bs");
                if (blockSize != 512 && blockSize != 4096) {
                    throw new IllegalArgumentException("namespace '" + spec + "': bs must be 512 or 4096");
                }
            } else if (p.equals("ro")) {
                readOnly = true;
            } else if (p.equals("direct")) {
                direct = true;
            } else {
                throw new IllegalArgumentException("namespace '" + spec + "': unknown option '" + p + "'");
            }
        }
        switch (kind) {
            case "ram":
            case "null":
                return new NamespaceConfig(nsid, kind, null, parseSize(first, kind + " size"), blockSize, readOnly, null,
                        false);
            case "file":
            case "block":
                if (first.isEmpty()) {
                    throw new IllegalArgumentException("namespace '" + spec + "': " + kind + " path is empty");
                }
                if (kind.equals("block") && (size != 0 || direct)) {
                    throw new IllegalArgumentException("namespace '" + spec + "': a block device has its own size");
                }
                return new NamespaceConfig(nsid, kind, first, size, blockSize, readOnly, null, direct);
            default:
                throw new IllegalArgumentException("namespace '" + spec + "': unknown backend '" + kind
                        + "' (ram, null, file, block)");
        }
    }

    /** Opens the backend a spec names. */
    public static Backend open(String spec) throws IOException {
        return Backends.open(parse(1, spec));
    }

    /** Whether the spec asks for a read-only namespace. */
    public static boolean readOnly(String spec) {
        return parse(1, spec).readOnly();
    }

    /** Parses 4096, 4k, 256M, 1G, 2T (binary units, optional trailing B or iB). */
    public static long parseSize(String s, String what) {
        String t = s.trim().toUpperCase(Locale.ROOT);
        if (t.endsWith("IB")) {
            t = t.substring(0, t.length() - 2);
        } else if (t.endsWith("B")) {
            t = t.substring(0, t.length() - 1);
        }
        long mult = 1;
        if (!t.isEmpty()) {
            switch (t.charAt(t.length() - 1)) {
                case 'K': mult = 1L << 10; break;
                case 'M': mult = 1L << 20; break;
                case 'G': mult = 1L << 30; break;
                case 'T': mult = 1L << 40; break;
                default: mult = 1;
            }
            if (mult != 1) {
                t = t.substring(0, t.length() - 1);
            }
        }
        try {
            long v = Long.parseLong(t);
            if (v <= 0) {
                throw new NumberFormatException();
            }
            return Math.multiplyExact(v, mult);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException(what + " '" + s + "' is not a size like 4096, 64k, 256M or 1G");
        }
    }
}
