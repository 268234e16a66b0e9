package io.nvmeof.target;

import io.nvmeof.protocol.NvmOpcode;
import java.util.concurrent.atomic.LongAdder;

/**
 * Rate limits of one scope (a namespace, or a host across all its controllers in this process),
 * as SPDK's bdev QoS and Ceph's gateways name them: read and write I/Os a second, and megabytes a
 * second for reads and writes together, reads alone and writes alone (0: no limit). Reads and
 * writes (and Compare, a read) count; other commands do not. A command over a limit is delayed,
 * never failed: it waits before any data moves (a write before its R2T, holding no buffer), and
 * never longer than {@link QosBucket#MAX_WAIT_NANOS} (5 s, well under a host's I/O timeout): what a
 * host has outstanding beyond what the limit serves in that time goes over it, and is counted. The
 * time commands spent waiting is counted for the metrics.
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

    /** Commands that had to wait. */
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

    /** Whether {@code opcode} counts against the limits, and as a read. */
    static boolean counted(int opcode) {
        return opcode == NvmOpcode.READ.code || opcode == NvmOpcode.WRITE.code || opcode == NvmOpcode.COMPARE.code;
    }

    /**
     * Takes one I/O that reads {@code readBytes} and writes {@code writeBytes} (a Read or Compare
     * reads, a Write writes, a Copy does both) from every bucket it counts against: nanoseconds to
     * wait (0: none).
     */
    long admit(long readBytes, long writeBytes, long now) {
        long wait = 0;
        if (ios != null) {
            wait = ios.take(1, now);
        }
        if (rwBytes != null) {
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
