package io.nvmeof.fabric;

import java.util.Locale;

/** Sizes as people write them on command lines and in configurations. */
public final class Sizes {
    private Sizes() {
    }

    /** Parses 4096, 4k, 256M, 1G, 2T (binary units, optional trailing B or iB). */
    public static long parse(String s, String what) {
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
