package io.nvmeof.fabric;

import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** What went wrong, said in one line for a person. */
public final class Failures {
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
            return "no such file: " + f.getFile();
        }
        if (c instanceof AccessDeniedException f) {
            return "permission denied: " + f.getFile();
        }
        if (c instanceof FileSystemException f && f.getReason() != null) {
            return f.getFile() + ": " + f.getReason();
        }
        String m = c.getMessage();
        if (m == null || m.isBlank()) {
            m = c.getClass().getSimpleName();
        }
        return m.replace('\n', ' ');
    }
}
