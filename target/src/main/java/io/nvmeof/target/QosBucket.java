package io.nvmeof.target;

/**
 * One rate limit as a token bucket that lends: a command takes its tokens (one I/O, or its bytes)
 * at once and is told how long to wait for them, so commands are served in the order they asked,
 * however many event loops ask, and none is ever refused. The bucket holds at most
 * {@link #BURST_NANOS} worth of tokens: an idle scope may run that far ahead, no further. A
 * waiting command holds nothing but its place: its tokens are already spoken for.
 */
final class QosBucket {
    /** How much unused rate an idle bucket keeps: 10 ms, so a limit holds over any 10 ms. */
    static final long BURST_NANOS = 10_000_000L;
    private static final long SECOND = 1_000_000_000L;

    private final long perSecond;
    /** Tokens in nano-units (tokens x 10^9), so that refills are exact integers; negative: lent out. */
    private long balance;
    private long last;

    /** {@code perSecond} tokens a second (I/Os or bytes); the bucket starts full. */
    QosBucket(long perSecond, long now) {
        if (perSecond <= 0) {
            throw new IllegalArgumentException("a rate must be positive: " + perSecond);
        }
        this.perSecond = perSecond;
        this.balance = capacity();
        this.last = now;
    }

    long perSecond() {
        return perSecond;
    }

    private long capacity() {
        return Math.multiplyHigh(perSecond, BURST_NANOS) != 0 ? Long.MAX_VALUE : perSecond * BURST_NANOS;
    }

    /**
     * Takes {@code tokens} at time {@code now} (nanoseconds, monotonic): how many nanoseconds from
     * {@code now} until they are covered (0: at once).
     */
    synchronized long take(long tokens, long now) {
        long elapsed = Math.max(0, now - last);
        last = Math.max(last, now);
        long refill = Math.multiplyHigh(elapsed, perSecond) != 0 ? Long.MAX_VALUE : elapsed * perSecond;
        balance = refill > capacity() - balance ? capacity() : balance + refill;
        balance -= tokens * SECOND;
        return balance >= 0 ? 0 : (-balance + perSecond - 1) / perSecond;
    }
}
