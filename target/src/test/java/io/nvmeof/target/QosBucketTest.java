package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The token bucket on a clock of our own: bursts, waits in order, the rate over time. */
class QosBucketTest {
    static final long MS = 1_000_000L;

    @Test
    void aFullBucketLetsItsBurstThroughThenSpacesCommandsAtTheRate() {
        QosBucket b = new QosBucket(1000, 0); // 1000 IOPS: a burst of 10 (10 ms), then one per millisecond
        for (int i = 0; i < 10; i++) {
            assertEquals(0, b.take(1, 0), "within the burst");
        }
        assertEquals(1 * MS, b.take(1, 0));
        assertEquals(2 * MS, b.take(1, 0), "the next waits behind the one before it");
        assertEquals(1 * MS, b.take(1, 2 * MS), "2 ms later: two paid back, one more owed");
    }

    @Test
    void anIdleBucketKeepsNoMoreThanItsBurst() {
        QosBucket b = new QosBucket(1000, 0);
        b.take(10, 0);
        long wait = 0;
        for (int i = 0; i < 11; i++) {
            wait = b.take(1, 3_600_000 * MS); // an hour idle: still only 10 ms of tokens
        }
        assertEquals(1 * MS, wait);
    }

    @Test
    void overTimeTheRateHolds() {
        QosBucket b = new QosBucket(5000, 0);
        long now = 0;
        int served = 0;
        // a host that always has a command waiting: each goes when its wait is over
        while (now < 10_000 * MS) {
            now += b.take(1, now);
            served++;
        }
        // 10 s at 5000/s, plus the first burst of 50
        assertTrue(Math.abs(served - 50_050) <= 1, "served " + served);
    }

    @Test
    void bytesBucketsTakeWholeCommands() {
        QosBucket b = new QosBucket(1 << 20, 0); // 1 MiB/s: 10 ms burst is 10485 bytes
        assertEquals(0, b.take(4096, 0));
        assertEquals(0, b.take(4096, 0));
        long w = b.take(1 << 20, 0); // a 1 MiB command then owes about a second
        assertTrue(w > 990 * MS && w < 1001 * MS, "waits " + w);
    }

    @Test
    void noCommandWaitsLongerThanTheBoundAndTheBucketLendsNoFurther() {
        // 100 IOPS (the lowest we allow) and a host with 4 queues of 128 commands at once
        QosBucket b = new QosBucket(100, 0);
        long longest = 0;
        int atBound = 0;
        for (int i = 0; i < 512; i++) {
            long w = b.take(1, 0);
            longest = Math.max(longest, w);
            atBound += w == QosBucket.MAX_WAIT_NANOS ? 1 : 0;
        }
        assertEquals(QosBucket.MAX_WAIT_NANOS, longest, "waits stop at the bound");
        // a burst of 1, then 500 spaced 10 ms apart, the last at exactly 5 s; the 11 beyond those
        // would wait longer and go at the bound too
        assertEquals(1 + 11, atBound);
        // once the backlog is served the bucket is the rate again, with no debt carried over
        assertEquals(0, b.take(1, QosBucket.MAX_WAIT_NANOS + 20 * MS));
        assertEquals(10 * MS, b.take(1, QosBucket.MAX_WAIT_NANOS + 20 * MS));
    }

    @Test
    void oneCommandLargerThanTheBoundAllowsGoesAtTheBound() {
        QosBucket b = new QosBucket(1 << 20, 0);
        assertEquals(QosBucket.MAX_WAIT_NANOS, b.take(64 << 20, 0), "64 MiB at 1 MiB/s would be 64 s");
        assertEquals(QosBucket.MAX_WAIT_NANOS, b.take(4096, 0), "and the next waits behind it at most as long");
    }

    @Test
    void hugeRatesNeitherOverflowNorWait() {
        QosBucket b = new QosBucket(Long.MAX_VALUE / 2, 0);
        for (int i = 0; i < 1000; i++) {
            assertEquals(0, b.take(1 << 20, i));
        }
    }
}
