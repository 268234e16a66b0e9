package io.nvmeof.protocol.rdma;

import io.nvmeof.protocol.Flyweight;

/**
 * RDMA_CM_REJECT private data, 4 bytes (NVMe/RDMA Transport 1.0, 3.3, Figure 6).
 *
 * <pre>
 * 00-01 RECFMT   02-03 STS (reject status, {@link #INVALID_LENGTH} ...)
 * </pre>
 */
public final class RdmaCmReject extends Flyweight {
    public static final int SIZE = 4;
    public static final int RECFMT_OFFSET = 0;
    public static final int STS_OFFSET = 2;

    /** Reject status values (Figure 7). */
    public static final int INVALID_LENGTH = 0x01;
    public static final int INVALID_RECFMT = 0x02;
    public static final int INVALID_QID = 0x03;
    public static final int INVALID_HSQSIZE = 0x04;
    public static final int INVALID_HRQSIZE = 0x05;
    public static final int NO_RESOURCES = 0x06;
    public static final int INVALID_IRD = 0x07;
    public static final int INVALID_ORD = 0x08;
    public static final int INVALID_CNTLID = 0x09;

    @Override
    public int length() {
        return SIZE;
    }

    public RdmaCmReject encode(int status) {
        put16(RECFMT_OFFSET, RdmaCmRequest.RECFMT_1_0);
        put16(STS_OFFSET, status);
        return this;
    }

    public int recfmt() { return u16(RECFMT_OFFSET); }
    public int status() { return u16(STS_OFFSET); }

    /** The spec's name of a reject status. */
    public static String name(int status) {
        switch (status) {
            case INVALID_LENGTH: return "invalid private data length";
            case INVALID_RECFMT: return "invalid RECFMT";
            case INVALID_QID: return "invalid queue ID";
            case INVALID_HSQSIZE: return "invalid HSQSIZE";
            case INVALID_HRQSIZE: return "invalid HRQSIZE";
            case NO_RESOURCES: return "no resources";
            case INVALID_IRD: return "invalid IRD";
            case INVALID_ORD: return "invalid ORD";
            case INVALID_CNTLID: return "invalid controller ID";
            default: return "reject status " + status;
        }
    }

    @Override
    public String toString() {
        return "RdmaCmReject{recfmt=" + recfmt() + " sts=" + status() + " (" + name(status()) + ")}";
    }
}
