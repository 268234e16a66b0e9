package io.nvmeof.target;

import java.util.concurrent.atomic.LongAdder;

/**
 * Command latencies in fixed buckets, counted without locks or allocation from any event loop
 * or I/O thread; read by a metrics scrape. The bounds are those of a storage latency scale,
 * 10 µs to 10 s, in the 1-2.5-5 steps Prometheus histograms use.
 */
public final class LatencyHistogram {
    /** Upper bounds in nanoseconds, ascending; a last, unbounded bucket follows them. */
    private static final long[] BOUNDS_NANOS = {
        10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
        1_000_000, 2_500_000, 5_000_000, 10_000_000, 25_000_000, 50_000_000, 100_000_000, 250_000_000, 500_000_000,
        1_000_000_000L, 2_500_000_000L, 5_000_000_000L, 10_000_000_000L};

    private final LongAdder[] buckets = new LongAdder[BOUNDS_NANOS.length + 1];
    private final LongAdder sumNanos = new LongAdder();

    public LatencyHistogram() {
        for (int i = 0; i < buckets.length; i++) {
            buckets[i] = new LongAdder();
        }
    }

    /** Counts one command that took {@code nanos}. */
    public void record(long nanos) {
        int i = 0;
        while (i < BOUNDS_NANOS.length && nanos > BOUNDS_NANOS[i]) {
            i++;
        }
        buckets[i].increment();
        sumNanos.add(Math.max(0, nanos));
    }

    /** The buckets' upper bounds in seconds, the last one {@code +Inf}. */
    public static double[] upperBoundsSeconds() {
        double[] b = new double[BOUNDS_NANOS.length + 1];
        for (int i = 0; i < BOUNDS_NANOS.length; i++) {
            b[i] = BOUNDS_NANOS[i] / 1e9;
        }
        b[BOUNDS_NANOS.length] = Double.POSITIVE_INFINITY;
        return b;
    }

    /** Observations per bucket (not cumulative), in the order of {@link #upperBoundsSeconds()}. */
    public long[] counts() {
        long[] c = new long[buckets.length];
        for (int i = 0; i < c.length; i++) {
            c[i] = buckets[i].sum();
        }
        return c;
    }

    public double sumSeconds() {
        return sumNanos.sum() / 1e9;
    }
}
