package io.nvmeof.target;

import java.util.concurrent.atomic.LongAdder;

/**
 * Rate limits of one scope (a namespace, or a host across all its controllers in this process),
 * as SPDK's bdev QoS and Ceph's gateways name them: I/Os a second, and megabytes a second for
 * reads and writes together, reads alone and writes alone (0: no limit).
 *
 * <p>What counts is every command that costs the backend: each is one I/O against the I/O limit,
 * and its bytes count against the byte limits it moves them for. Read and Compare read their
 * length; Write writes its length; Write Zeroes writes its blocks, and Dataset Management with
 * deallocate writes the blocks of its ranges (hints alone cost nothing and do not count); Copy
 * reads and writes its bytes; Flush is an I/O with no bytes. Nothing else counts (admin, Fabrics,
 * reservation commands).
 *
 * <p>A command over a limit is delayed, never failed: it waits before any data moves (a write
 * before its R2T, holding no buffer). One that moves more bytes than the smallest byte limit in a
 * second (a large Write Zeroes, deallocate or Copy) is charged in pieces of that second, one after
 * another, each once the one before is covered, so that no wait admits more than the bound allows
 * at once and the command as a whole runs at the limit (it may wait longer than 5 s in all: size
 * limits so that the largest such command fits the host's I/O timeout). No single wait is longer
 * than {@link QosBucket#MAX_WAIT_NANOS} (5 s, well under a host's I/O timeout): what a host has
 * outstanding beyond what the limit serves in that time goes over it, and is counted. The time
 * commands spent waiting is counted for the metrics.
 */
public final class Qos {
    /** The limits; 0 is none. Bytes a second, not megabytes, here. */
    public record Limits(long rwIosPerSecond, long rwBytesPerSecond, long readBytesPerSecond, long writeBytesPerSecond) {
        public static final Limits NONE = new Limits(0, 0, 0, 0);

        public Limits {
            if (rwIosPerSecond < 0 || rwBytesPerSecond < 0 || readBytesPerSecond < 0 || writeBytesPerSecond < 0) {
                throw new IllegalArgumentException("QoS limits cannot be negative");
            }
        }

        public boolean none() {
            return rwIosPerSecond == 0 && rwBytesPerSecond == 0 && readBytesPerSecond == 0 && writeBytesPerSecond == 0;
        }
    }

    private final Limits limits;
    private final QosBucket ios;
    private final QosBucket rwBytes;
    private final QosBucket readBytes;
    private final QosBucket writeBytes;
    /** {@link #piece()}. */
    private final long piece;
    private final LongAdder throttledNanos;
    private final LongAdder throttled;
    private final LongAdder overruns;

    /** The buckets for {@code limits}, counting into {@code counters} (kept across a change of limits). */
    Qos(Limits limits, long now, Qos counters) {
        this.limits = limits;
        this.ios = limits.rwIosPerSecond() > 0 ? new QosBucket(limits.rwIosPerSecond(), now) : null;
        this.rwBytes = limits.rwBytesPerSecond() > 0 ? new QosBucket(limits.rwBytesPerSecond(), now) : null;
        this.readBytes = limits.readBytesPerSecond() > 0 ? new QosBucket(limits.readBytesPerSecond(), now) : null;
        this.writeBytes = limits.writeBytesPerSecond() > 0 ? new QosBucket(limits.writeBytesPerSecond(), now) : null;
        long p = Long.MAX_VALUE;
        for (long rate : new long[] {limits.rwBytesPerSecond(), limits.readBytesPerSecond(), limits.writeBytesPerSecond()}) {
            p = rate > 0 ? Math.min(p, rate) : p;
        }
        this.piece = p;
        this.throttledNanos = counters != null ? counters.throttledNanos : new LongAdder();
        this.throttled = counters != null ? counters.throttled : new LongAdder();
        this.overruns = counters != null ? counters.overruns : new LongAdder();
    }

    /** What replaces {@code was} (null: none yet) for {@code limits}: null while none were ever set; counters carry over. */
    static Qos replacing(Qos was, Limits limits, long now) {
        return was == null && limits.none() ? null : new Qos(limits, now, was);
    }

    public Limits limits() {
        return limits;
    }

    /** Nanoseconds commands have waited for this scope's limits since the start. */
    public long throttledNanos() {
        return throttledNanos.sum();
    }

    /** Waits: commands that had to wait (a command charged in pieces counts once a piece it waited for). */
    public long throttledCommands() {
        return throttled.sum();
    }

    /**
     * Commands that went over a limit because they would have waited longer than the bound: the
     * host had more outstanding than the limit serves in 5 s.
     */
    public long overruns() {
        return overruns.sum();
    }

    /**
     * The most bytes one charge takes (in each direction): a second of the smallest byte limit,
     * or no bound ({@link Long#MAX_VALUE}) where there is none.
     */
    long piece() {
        return piece;
    }

    /**
     * Takes {@code ios} I/Os that read {@code readBytes} and write {@code writeBytes} from every
     * bucket they count against: nanoseconds to wait (0: none). A bucket that nothing is taken
     * from is not asked (a Flush does not wait for the byte limits' debts).
     */
    long admit(int ios, long readBytes, long writeBytes, long now) {
        long wait = 0;
        if (ios > 0 && this.ios != null) {
            wait = this.ios.take(ios, now);
        }
        if (readBytes + writeBytes > 0 && rwBytes != null) {
            wait = Math.max(wait, rwBytes.take(readBytes + writeBytes, now));
        }
        if (readBytes > 0 && this.readBytes != null) {
            wait = Math.max(wait, this.readBytes.take(readBytes, now));
        }
        if (writeBytes > 0 && this.writeBytes != null) {
            wait = Math.max(wait, this.writeBytes.take(writeBytes, now));
        }
        return waited(wait);
    }

    private long waited(long wait) {
        if (wait > 0) {
            throttledNanos.add(wait);
            throttled.increment();
            if (wait >= QosBucket.MAX_WAIT_NANOS) {
                overruns.increment();
            }
        }
        return wait;
    }
}
