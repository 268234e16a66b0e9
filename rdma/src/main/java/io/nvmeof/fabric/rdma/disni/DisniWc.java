package io.nvmeof.fabric.rdma.disni;

import io.nvmeof.fabric.rdma.WorkCompletion;

/**
 * How a work completion as DiSNI's {@code IbvWC} hands it over maps to the SPI's {@link
 * WorkCompletion} numbers. DiSNI passes {@code ibv_wc_status} and {@code ibv_wc_opcode} through
 * unchanged (its enums list them in libibverbs' order) and reads the fields after {@code
 * opcode} only for a successful completion, so for a failed one only the status counts.
 */
final class DisniWc {
    /** {@code IBV_WC_WITH_INV}: the RECV consumed a SEND with Invalidate; {@code invalidated_rkey} is valid. */
    static final int WC_WITH_INV = 1 << 3;
    /** {@code IBV_WC_RECV_RDMA_WITH_IMM}. */
    static final int WC_RECV_RDMA_WITH_IMM = 129;
    /** {@code IBV_WR_SEND_WITH_INV}: DiSNI 2.1 has no constant for it; it passes the number to ibv_post_send as is. */
    static final int WR_SEND_WITH_INV = 9;

    private DisniWc() {
    }

    /** The SPI opcode of a successful completion's {@code ibv_wc_opcode}, or -1 if the SPI has none. */
    static int spiOpcode(int wcOpcode) {
        switch (wcOpcode) {
            case WorkCompletion.SEND:
            case WorkCompletion.RDMA_WRITE:
            case WorkCompletion.RDMA_READ:
            case WorkCompletion.RECV:
                return wcOpcode;
            case WC_RECV_RDMA_WITH_IMM:
                return WorkCompletion.RECV;
            default:
                return -1;
        }
    }

    /**
     * For a receive: the remote key the peer's SEND with Invalidate invalidated, else -1. DiSNI
     * reads the {@code imm_data}/{@code invalidated_rkey} union as a native-order int, which is
     * how {@code invalidated_rkey} (unlike {@code imm_data}) is stored.
     */
    static long invalidatedRkey(int status, int wcFlags, int immOrRkey) {
        return status == WorkCompletion.SUCCESS && (wcFlags & WC_WITH_INV) != 0 ? immOrRkey & 0xffffffffL : -1;
    }
}
