package io.nvmeof.cli;

import io.nvmeof.daemon.config.PrivateFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Key files on the host: read only when others cannot read them, the target's rule ({@link PrivateFiles}). */
final class KeyFiles {
    private KeyFiles() {
    }

    /**
     * A key given by one of: {@code inline} (visible to ps), {@code file} (checked by {@link
     * PrivateFiles}), or {@code file} "-": standard input.
     */
    static String keyFrom(String inline, Path file, String inlineFlag, String fileFlag) {
        if ((inline == null) == (file == null)) {
            throw new IllegalArgumentException("give the key with exactly one of " + inlineFlag + " and " + fileFlag);
        }
        if (inline != null) {
            return inline;
        }
        if (file.toString().equals("-")) {
            try {
                return new String(System.in.readAllBytes(), StandardCharsets.US_ASCII).trim();
            } catch (IOException e) {
                throw new UncheckedIOException(fileFlag + ": cannot read standard input: " + e.getMessage(), e);
            }
        }
        return readPrivate(file, fileFlag);
    }

    static String readPrivate(Path file, String what) {
        String problem = PrivateFiles.problem(file);
        if (problem != null) {
            throw new IllegalArgumentException(what + ": " + problem);
        }
        try {
            return Files.readString(file).trim();
        } catch (IOException e) {
            throw new UncheckedIOException(what + ": cannot read " + file + ": " + e.getMessage(), e);
        }
    }
}
