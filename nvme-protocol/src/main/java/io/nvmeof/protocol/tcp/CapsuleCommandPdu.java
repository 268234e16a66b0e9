package io.nvmeof.protocol.tcp;

import io.nvmeof.protocol.SubmissionQueueEntry;

/**
 * Command Capsule PDU header, 72 bytes: the common header and the 64-byte SQE
 * (NVMe/TCP 1.0, 3.6.2.5, Figure 29). In-capsule data follows at PDO.
 */
public final class CapsuleCommandPdu extends Pdu {
    public static final int SIZE = 72;
    public static final int SQE_OFFSET = 8;

    @Override
    public int length() {
        return SIZE;
    }

    /** Points {@code sqe} at this PDU's SQE. */
    public SubmissionQueueEntry sqe(SubmissionQueueEntry sqe) {
        return sqe.wrap(buffer, offset + SQE_OFFSET);
    }

    @Override
    public String toString() {
        return "CapsuleCmd{" + common() + "}";
    }
}
