package io.nvmeof.target;

import java.text.MessageFormat;

/**
 * Warnings a host can cause again and again (a failing read, a refused Connect), let through
 * as the kernel's {@code pr_*_ratelimited} does: at most {@code burst} lines per interval, then
 * silence until the next interval, whose first line is preceded by how many were suppressed.
 * One instance per kind of message; any thread.
 */
final class RateLimitedLog {
    /** The kernel's DEFAULT_RATELIMIT_INTERVAL (5 s) and DEFAULT_RATELIMIT_BURST (10). */
    public static final long DEFAULT_INTERVAL_MILLIS = 5000;
    public static final int DEFAULT_BURST = 10;

    private final System.Logger log;
    private final long intervalNanos;
    private final int burst;
    private long windowStart;
    private boolean started;
    private int used;
    private long suppressed;

    public RateLimitedLog(System.Logger log) {
        this(log, DEFAULT_INTERVAL_MILLIS, DEFAULT_BURST);
    }

    public RateLimitedLog(System.Logger log, long intervalMillis, int burst) {
        this.log = log;
        this.intervalNanos = intervalMillis * 1_000_000;
        this.burst = burst;
    }

    /** Logs {@code format} (a {@link MessageFormat} pattern) with {@code args}, unless over the rate. */
    public void log(System.Logger.Level level, String format, Object... args) {
        if (!log.isLoggable(level)) {
            return;
        }
        long dropped;
        synchronized (this) {
            long now = System.nanoTime();
            if (!started || now - windowStart >= intervalNanos) {
                started = true;
                windowStart = now;
                used = 0;
            }
            if (used >= burst) {
                suppressed++;
                return;
            }
            used++;
            dropped = suppressed;
            suppressed = 0;
        }
        if (dropped > 0) {
            log.log(level, "{0,number,#} similar messages suppressed", dropped);
        }
        log.log(level, format, args);
    }

    /** Messages dropped since the last one let through. */
    public synchronized long suppressed() {
        return suppressed;
    }
}
