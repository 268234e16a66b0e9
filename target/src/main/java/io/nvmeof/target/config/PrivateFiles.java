package io.nvmeof.target.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/** The rule for files that hold keys, on target and host alike: others may not read or write them (as ssh's). */
public final class PrivateFiles {
    private PrivateFiles() {
    }

    /** Null if others (not owner, not group) can neither read nor write {@code p}, else what is wrong and what to do. */
    public static String problem(Path p) {
        try {
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p);
            if (perms.contains(PosixFilePermission.OTHERS_READ) || perms.contains(PosixFilePermission.OTHERS_WRITE)) {
                return p + " has mode " + PosixFilePermissions.toString(perms) + "; chmod o-rw " + p;
            }
            return null;
        } catch (UnsupportedOperationException e) {
            return null; // no POSIX modes on this file system
        } catch (IOException e) {
            return "cannot read " + p + ": " + e.getMessage();
        }
    }
}
