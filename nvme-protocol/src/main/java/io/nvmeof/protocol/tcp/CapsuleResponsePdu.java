package io.nvmeof.protocol.tcp;

import io.nvmeof.protocol.CompletionQueueEntry;

/**
 * Response Capsule PDU header, 24 bytes: the common header and the 16-byte CQE
 * (NVMe/TCP 1.0, 3.6.2.6, Figure 30).
 */
public final class CapsuleResponsePdu extends Pdu {
    public static final int SIZE = 24;
    public static final int CQE_OFFSET = 8;

    @Override
    public int length() {
        return SIZE;
    }

    /** Points {@code cqe} at this PDU's CQE. */
    public CompletionQueueEntry cqe(CompletionQueueEntry cqe) {
        return cqe.wrap(buffer, offset + CQE_OFFSET);
    }

    @Override
    public String toString() {
        return "CapsuleResp{" + common() + "}";
    }
}
