package io.nvmeof.daemon;

import java.io.PrintWriter;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Work the daemon does beside the target on a thread of its own, never an event loop (the
 * central discovery registration, the mDNS announcements): a task run again and again, lines
 * for the operator on the daemon's output and its log, and a last piece of work at the end,
 * bounded in time.
 */
abstract class BackgroundWork implements AutoCloseable {
    private final System.Logger log;
    private final PrintWriter out;
    private final ScheduledExecutorService thread;

    BackgroundWork(String threadName, PrintWriter out) {
        this.log = System.getLogger(getClass().getName());
        this.out = out;
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    /** Runs {@code task} now and then {@code periodMillis} after each run ends. */
    final void every(long periodMillis, Runnable task) {
        thread.scheduleWithFixedDelay(task, 0, periodMillis, TimeUnit.MILLISECONDS);
    }

    /** A line for the operator: the daemon's output and its log. */
    final void say(String line) {
        log.log(System.Logger.Level.INFO, line);
        synchronized (out) {
            out.println(line);
            out.flush();
        }
    }

    final void warn(String line) {
        log.log(System.Logger.Level.WARNING, line);
    }

    /** The last work, run on the thread after what runs there now, waited for at most {@code seconds}. */
    abstract void finish();

    /** Ends the work ({@link #close(int)} with its own bound); throws nothing. */
    @Override
    public abstract void close();

    /** This machine's name, or "" where it cannot be had; a lookup may wait on DNS, so call it on this work's thread. */
    static String localHostName() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            return "";
        }
    }

    /** {@link #finish} on the thread, for at most {@code seconds}; then the thread ends. */
    final void close(int seconds) {
        try {
            thread.submit(this::finish).get(seconds, TimeUnit.SECONDS);
        } catch (Exception e) {
            warn(getClass().getSimpleName() + ": the last work did not end: " + e);
        } finally {
            thread.shutdownNow();
        }
    }
}
