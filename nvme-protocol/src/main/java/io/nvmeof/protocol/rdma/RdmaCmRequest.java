package io.nvmeof.protocol.rdma;

import io.nvmeof.protocol.Flyweight;

/**
 * RDMA_CM_REQUEST private data, 32 bytes (NVMe/RDMA Transport 1.0, 3.3, Figure 4): what a host
 * puts in its connect request so the controller can size the queue pair before accepting.
 *
 * <pre>
 * 00-01 RECFMT   02-03 QID   04-05 HRQSIZE   06-07 HSQSIZE (0's based)   08-09 CNTLID   10-31 reserved
 * </pre>
 */
public final class RdmaCmRequest extends Flyweight {
    public static final int SIZE = 32;
    public static final int RECFMT_OFFSET = 0;
    public static final int QID_OFFSET = 2;
    public static final int HRQSIZE_OFFSET = 4;
    public static final int HSQSIZE_OFFSET = 6;
    public static final int CNTLID_OFFSET = 8;
    /** The one record format defined (1.0). */
    public static final int RECFMT_1_0 = 0;

    @Override
    public int length() {
        return SIZE;
    }

    /** Encodes a request for queue {@code qid} with {@code hrqsize} receive slots and a 0's based SQ size. */
    public RdmaCmRequest encode(int qid, int hrqsize, int hsqsize, int cntlid) {
        clear();
        put16(RECFMT_OFFSET, RECFMT_1_0);
        put16(QID_OFFSET, qid);
        put16(HRQSIZE_OFFSET, hrqsize);
        put16(HSQSIZE_OFFSET, hsqsize);
        put16(CNTLID_OFFSET, cntlid);
        return this;
    }

    public int recfmt() { return u16(RECFMT_OFFSET); }
    public int qid() { return u16(QID_OFFSET); }
    /** HRQSIZE: receive queue entries the host posted for responses. */
    public int hrqsize() { return u16(HRQSIZE_OFFSET); }
    /** HSQSIZE: host submission queue size, 0's based. */
    public int hsqsize() { return u16(HSQSIZE_OFFSET); }
    public int cntlid() { return u16(CNTLID_OFFSET); }

    @Override
    public String toString() {
        return "RdmaCmRequest{recfmt=" + recfmt() + " qid=" + qid() + " hrqsize=" + hrqsize() + " hsqsize=" + hsqsize()
                + " cntlid=" + cntlid() + "}";
    }
}
