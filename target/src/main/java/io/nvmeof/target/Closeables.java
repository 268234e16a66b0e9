package io.nvmeof.target;

import java.io.IOException;

/** Closes a set of resources, all of them, and reports the first failure with the rest suppressed. */
final class Closeables {
    private Closeables() {
    }

    static void closeAll(Iterable<? extends AutoCloseable> resources) throws IOException {
        Exception first = null;
        for (AutoCloseable c : resources) {
            try {
                c.close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first instanceof IOException io) {
            throw io;
        }
        if (first != null) {
            throw new IOException(first.getMessage(), first);
        }
    }
}
