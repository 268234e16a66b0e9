package io.nvmeof.target;

import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a namespace's I/O commands did, for the metrics endpoint and the SMART / Health log:
 * commands, bytes and latency by kind, and failures by status. Counted as each command completes, from whatever event
 * loop, with adders: no lock and, in steady state, no allocation.
 */
public final class IoStats {
    /** The kinds commands are counted by; their names are the metrics' {@code op} label. */
    public enum Op {
        READ("read"), WRITE("write"), COPY("copy"), FLUSH("flush"), OTHER("other");

        public final String label;

        Op(String label) {
            this.label = label;
        }

        static final Op[] ALL = values();

        static Op of(int opcode) {
            if (opcode == NvmOpcode.READ.code) {
                return READ;
            }
            if (opcode == NvmOpcode.WRITE.code) {
                return WRITE;
            }
            if (opcode == NvmOpcode.COPY.code) {
                return COPY;
            }
            return opcode == NvmOpcode.FLUSH.code ? FLUSH : OTHER;
        }
    }

    /** Commands that succeeded and that failed, by kind; bytes moved by the ones that succeeded. */
    private final LongAdder[] succeeded = adders();
    private final LongAdder[] failed = adders();
    private final LongAdder[] bytes = adders();
    private final LatencyHistogram[] latency = new LatencyHistogram[Op.ALL.length];
    private final ErrorCounts errors = new ErrorCounts();

    IoStats() {
        for (int i = 0; i < latency.length; i++) {
            latency[i] = new LatencyHistogram();
        }
    }

    private static LongAdder[] adders() {
        LongAdder[] a = new LongAdder[Op.ALL.length];
        for (int i = 0; i < a.length; i++) {
            a[i] = new LongAdder();
        }
        return a;
    }

    /** One command completed with {@code status} after {@code nanos}, having moved {@code length} bytes if it succeeded. */
    void completed(int opcode, int length, Status status, long nanos) {
        int op = Op.of(opcode).ordinal();
        latency[op].record(nanos);
        if (status.isSuccess()) {
            succeeded[op].increment();
            if (op <= Op.COPY.ordinal()) { // read, written, copied
                bytes[op].add(length);
            }
        } else {
            failed[op].increment();
            errors.count(status);
        }
    }

    /** Commands of this kind completed, whatever their status. */
    public long commands(Op op) {
        return succeeded(op) + failed[op.ordinal()].sum();
    }

    /** Commands of this kind that succeeded (what the SMART / Health log counts). */
    public long succeeded(Op op) {
        return succeeded[op.ordinal()].sum();
    }

    public long bytes(Op op) {
        return bytes[op.ordinal()].sum();
    }

    public LatencyHistogram latency(Op op) {
        return latency[op.ordinal()];
    }

    /** Failed commands by status. */
    public Map<String, Long> errorsByStatus() {
        return errors.byStatus();
    }
}
