package io.nvmeof.target;

/**
 * One rate limit as a token bucket that lends: a command takes its tokens (one I/O, or its bytes)
 * at once and is told how long to wait for them, so commands are served in the order they asked,
 * however many event loops ask, and none is ever refused. The bucket holds at most
 * {@link #BURST_NANOS} worth of tokens: an idle scope may run that far ahead, no further. A
 * waiting command holds nothing but its place: its tokens are already spoken for.
 *
 * <p>No command waits longer than {@link #MAX_WAIT_NANOS}: a host's I/O timeout (Linux: 30 s)
 * runs from when it sent the command, so a wait past it would turn a limit into failed I/O and
 * controller resets. When a host has more outstanding than the limit serves in that time (say
 * 128 x 128 KiB per queue against 1 MiB/s), the bucket lends no further: the excess goes at the
 * bound, over the limit ({@link Qos} counts those).
 */
final class QosBucket {
    /** How much unused rate an idle bucket keeps: 10 ms, so a limit holds over any 10 ms. */
    static final long BURST_NANOS = 10_000_000L;
    /** The longest a command waits for this bucket: well under a host's 30 s I/O timeout. */
    static final long MAX_WAIT_NANOS = 5_000_000_000L;
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
        return scaled(BURST_NANOS);
    }

    /** {@code nanos} worth of tokens, in nano-units (saturating). */
    private long scaled(long nanos) {
        return Math.multiplyHigh(perSecond, nanos) != 0 ? Long.MAX_VALUE : perSecond * nanos;
    }

    /**
     * Takes {@code tokens} at time {@code now} (nanoseconds, monotonic): how many nanoseconds from
     * {@code now} until they are covered (0: at once), at most {@link #MAX_WAIT_NANOS}.
     */
    synchronized long take(long tokens, long now) {
        long elapsed = Math.max(0, now - last);
        last = Math.max(last, now);
        long refill = Math.multiplyHigh(elapsed, perSecond) != 0 ? Long.MAX_VALUE : elapsed * perSecond;
        balance = refill > capacity() - balance ? capacity() : balance + refill;
        long debt = Math.multiplyHigh(tokens, SECOND) != 0 ? Long.MAX_VALUE : tokens * SECOND;
        long floor = -scaled(MAX_WAIT_NANOS);
        long room = balance > Long.MAX_VALUE + floor ? Long.MAX_VALUE : balance - floor;
        if (room < debt) {
            // lent as far as the bound allows: this one goes at the bound, over the limit
            balance = floor;
            return MAX_WAIT_NANOS;
        }
        balance -= debt;
        return balance >= 0 ? 0 : (-balance + perSecond - 1) / perSecond;
    }
}
