package io.nvmeof.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/** Key files: read only when others cannot read them (as ssh treats private keys). */
final class KeyFiles {
    private KeyFiles() {
    }

    static String readPrivate(Path file, String what) {
        try {
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file);
            if (perms.contains(PosixFilePermission.OTHERS_READ) || perms.contains(PosixFilePermission.OTHERS_WRITE)) {
                throw new IllegalArgumentException(what + ": " + file + " has mode " + PosixFilePermissions.toString(perms)
                        + ", so others can read the key; chmod o-rw " + file);
            }
        } catch (UnsupportedOperationException e) {
            // no POSIX modes here
        } catch (IOException e) {
            throw new UncheckedIOException(what + ": cannot read " + file + ": " + e.getMessage(), e);
        }
        try {
            return Files.readString(file).trim();
        } catch (IOException e) {
            throw new UncheckedIOException(what + ": cannot read " + file + ": " + e.getMessage(), e);
        }
    }
}
