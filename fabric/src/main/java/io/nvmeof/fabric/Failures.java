package io.nvmeof.fabric;

import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** What went wrong, said in one line for a person. */
public final class Failures {
    private static final String BIND_HINT = " (another process listens there, or the port is this one's twice)";

    private Failures() {
    }

    /** One line that says what went wrong, without a stack trace. */
    public static String describe(Throwable t) {
        Throwable c = t;
        while ((c instanceof CompletionException
                || c instanceof ExecutionException) && c.getCause() != null) {
            c = c.getCause();
        }
        if (c instanceof NoSuchFileException f) {
            return f.getFile() + ": no such file or directory" + missingDirectory(f.getFile());
        }
        if (c instanceof AccessDeniedException f) {
            return f.getFile() + ": permission denied";
        }
        if (c instanceof FileAlreadyExistsException f) {
            return f.getFile() + ": already exists";
        }
        if (c instanceof NotDirectoryException f) {
            return f.getFile() + ": not a directory";
        }
        if (c instanceof FileSystemException f) {
            return f.getFile() + ": " + (f.getReason() != null ? f.getReason() : c.getClass().getSimpleName());
        }
        if (c instanceof java.net.BindException || c.getMessage() != null && c.getMessage().contains("Address already in use")) {
            String m = c.getMessage().replace('\n', ' ');
            return m.contains(BIND_HINT) ? m : m + BIND_HINT; // a message described once already keeps its one hint
        }
        String m = c.getMessage();
        if (m == null || m.isBlank()) {
            m = c.getClass().getSimpleName();
        }
        return m.replace('\n', ' ');
    }

    /** " (DIR does not exist)" for the nearest missing directory above {@code file}, or "" where its directory is there. */
    private static String missingDirectory(String file) {
        if (file == null) {
            return "";
        }
        try {
            Path dir = Path.of(file).toAbsolutePath().getParent();
            Path missing = null;
            while (dir != null && !Files.isDirectory(dir)) {
                missing = dir;
                dir = dir.getParent();
            }
            return missing == null ? "" : " (" + missing + " does not exist)";
        } catch (InvalidPathException e) {
            return "";
        }
    }
}
