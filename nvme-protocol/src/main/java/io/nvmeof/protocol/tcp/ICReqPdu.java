package io.nvmeof.protocol.tcp;

/**
 * Initialize Connection Request, 128 bytes (NVMe/TCP 1.0, 3.6.2.2, Figure 26).
 *
 * <pre>
 * 00-07 common header   08-09 PFV   10 HPDA   11 DGST (bit 0 HDGST, bit 1 DDGST)
 * 12-15 MAXR2T (0's based)   16-127 reserved
 * </pre>
 */
public final class ICReqPdu extends Pdu {
    public static final int SIZE = 128;
    public static final int PFV_OFFSET = 8;
    public static final int HPDA_OFFSET = 10;
    public static final int DGST_OFFSET = 11;
    public static final int MAXR2T_OFFSET = 12;
    public static final int DGST_HEADER = 1;
    public static final int DGST_DATA = 2;

    @Override
    public int length() {
        return SIZE;
    }

    public ICReqPdu encode(int hpda, boolean headerDigest, boolean dataDigest, long maxR2tZeroBased) {
        init(PduType.IC_REQ, 0, 0, SIZE);
        put16(PFV_OFFSET, 0);
        put8(HPDA_OFFSET, hpda);
        put8(DGST_OFFSET, (headerDigest ? DGST_HEADER : 0) | (dataDigest ? DGST_DATA : 0));
        put32(MAXR2T_OFFSET, maxR2tZeroBased);
        return this;
    }

    public int pfv() { return u16(PFV_OFFSET); }
    /** HPDA: host PDU data alignment, in units of 4 bytes, 0's based. */
    public int hpda() { return u8(HPDA_OFFSET); }
    public int digest() { return u8(DGST_OFFSET); }
    /** MAXR2T as on the wire: the number of outstanding R2Ts per command, 0's based. */
    public long maxR2t() { return u32(MAXR2T_OFFSET); }

    @Override
    public String toString() {
        return "ICReq{" + common() + " pfv=" + pfv() + " hpda=" + hpda() + " dgst=" + digest() + " maxr2t=" + maxR2t() + "}";
    }
}
