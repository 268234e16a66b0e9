package io.nvmeof.fabric.rdma.disni;

/**
 * The 64-bit {@code wr_id} this provider gives each native work request. Connections of one
 * device share a completion queue, and DiSNI fills in a failed completion's {@code qp_num} (and
 * everything after {@code opcode}) only on success, so the id alone must say whose completion
 * it is: bits 63..40 the connection's tag (its slot in the completion queue, 16 bits, and that
 * slot's generation, 8 bits, so that a late completion of an earlier occupant is recognized),
 * bit 39 set for a receive, bit 38 set for the RDMA WRITE half of a WRITE+SEND chain, bits
 * 31..0 the slot of the work request within the connection. The caller's own id stays in the
 * connection's tables.
 */
final class WrIds {
    static final int TAG_SHIFT = 40;
    static final long RECV = 1L << 39;
    static final long WRITE_PART = 1L << 38;
    static final int MAX_CQ_SLOTS = 1 << 16;

    private WrIds() {
    }

    /** The tag of slot {@code cqSlot} (below {@link #MAX_CQ_SLOTS}) in its {@code generation}. */
    static int tag(int cqSlot, int generation) {
        if (cqSlot < 0 || cqSlot >= MAX_CQ_SLOTS) {
            throw new IllegalArgumentException("completion queue slot " + cqSlot);
        }
        return cqSlot << 8 | (generation & 0xff);
    }

    static long id(int tag, long kind, int index) {
        return (long) tag << TAG_SHIFT | kind | (index & 0xffffffffL);
    }

    static int tagOf(long wrId) {
        return (int) (wrId >>> TAG_SHIFT);
    }

    static int cqSlotOf(long wrId) {
        return (int) (wrId >>> (TAG_SHIFT + 8));
    }

    static boolean isRecv(long wrId) {
        return (wrId & RECV) != 0;
    }

    static boolean isWritePart(long wrId) {
        return (wrId & WRITE_PART) != 0;
    }

    static int indexOf(long wrId) {
        return (int) wrId;
    }
}
