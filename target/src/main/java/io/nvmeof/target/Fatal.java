package io.nvmeof.target;

/**
 * Errors no NVMe status can answer: a {@link VirtualMachineError} (out of memory, a stack
 * overflow, an internal error) where a command runs. The data path hands them here instead of
 * turning them into a status; the thread's uncaught-exception handler gets them at once, even
 * where the thread's own loop would catch and log them (Netty's event loops do), so that a
 * daemon that installs a halting handler ({@link #haltOnFatalErrors}) ends and its supervisor
 * (systemd) restarts it, rather than serving on with a broken JVM.
 */
public final class Fatal {
    /** The exit status of a halt on a fatal error (EX_SOFTWARE). */
    public static final int EXIT_STATUS = 70;

    private Fatal() {
    }

    /** Hands {@code e} to the current thread's uncaught-exception handler; the caller rethrows it. */
    static void error(VirtualMachineError e) {
        Thread t = Thread.currentThread();
        Thread.UncaughtExceptionHandler h = t.getUncaughtExceptionHandler();
        if (h != null) {
            h.uncaughtException(t, e);
        }
    }

    /**
     * For a daemon: any {@link Error} that reaches a thread's end, or {@link #error}, halts the
     * JVM with {@link #EXIT_STATUS} after one line on standard error (no shutdown hooks: the
     * state they would run in is what failed). Other uncaught exceptions are logged and the
     * thread ends, as by default.
     */
    public static void haltOnFatalErrors() {
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> {
            if (e instanceof Error) {
                try {
                    System.err.println("nvmeof: fatal error in thread " + t.getName() + ": " + e + "; halting");
                    System.err.flush();
                } finally {
                    Runtime.getRuntime().halt(EXIT_STATUS);
                }
            }
            System.getLogger(Fatal.class.getName()).log(System.Logger.Level.ERROR,
                    "uncaught exception in thread " + t.getName(), e);
        });
    }
}
