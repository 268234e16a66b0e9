package io.nvmeof.protocol.rdma;

import io.nvmeof.protocol.Flyweight;

/**
 * RDMA_CM_ACCEPT private data, 32 bytes (NVMe/RDMA Transport 1.0, 3.3, Figure 5).
 *
 * <pre>
 * 00-01 RECFMT   02-03 CRQSIZE (controller receive queue entries)   04-31 reserved
 * </pre>
 */
public final class RdmaCmAccept extends Flyweight {
    public static final int SIZE = 32;
    public static final int RECFMT_OFFSET = 0;
    public static final int CRQSIZE_OFFSET = 2;

    @Override
    public int length() {
        return SIZE;
    }

    public RdmaCmAccept encode(int crqsize) {
        clear();
        put16(RECFMT_OFFSET, RdmaCmRequest.RECFMT_1_0);
        put16(CRQSIZE_OFFSET, crqsize);
        return this;
    }

    public int recfmt() { return u16(RECFMT_OFFSET); }
    public int crqsize() { return u16(CRQSIZE_OFFSET); }

    @Override
    public String toString() {
        return "RdmaCmAccept{recfmt=" + recfmt() + " crqsize=" + crqsize() + "}";
    }
}
