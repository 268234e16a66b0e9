package io.nvmeof.cli;

import io.nvmeof.target.config.PrivateFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Key files on the host: read only when others cannot read them, the target's rule ({@link PrivateFiles}). */
final class KeyFiles {
    private KeyFiles() {
    }

    static String readPrivate(Path file, String what) {
        String problem = PrivateFiles.problem(file);
        if (problem != null) {
            throw new IllegalArgumentException(what + ": " + problem + " (others can read the key)");
        }
        try {
            return Files.readString(file).trim();
        } catch (IOException e) {
            throw new UncheckedIOException(what + ": cannot read " + file + ": " + e.getMessage(), e);
        }
    }
}
