package io.nvmeof.fabric.rdma.disni;

import io.nvmeof.fabric.rdma.AbstractRdmaConnection;

/**
 * The 64-bit {@code wr_id} this provider gives each native work request. Connections of one
 * device share a completion queue, and DiSNI fills in a failed completion's {@code qp_num} (and
 * everything after {@code opcode}) only on success, so the id alone must say whose completion
 * it is: bits 63..40 the connection's tag (its slot in the completion queue, 16 bits, and that
 * slot's generation, 8 bits, so that a late completion of an earlier occupant is recognized);
 * bits 39..0 the id the connection's lifecycle ({@link AbstractRdmaConnection}) gave the work
 * request (receive and WRITE-part bits, slot or receive index).
 */
final class WrIds {
    static final int TAG_SHIFT = 40;
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

    /** The native id of the connection's work request {@code id} on the connection tagged {@code tag}. */
    static long id(int tag, long id) {
        return (long) tag << TAG_SHIFT | (id & AbstractRdmaConnection.ID_MASK);
    }

    static int tagOf(long wrId) {
        return (int) (wrId >>> TAG_SHIFT);
    }

    static int cqSlotOf(long wrId) {
        return (int) (wrId >>> (TAG_SHIFT + 8));
    }
}
