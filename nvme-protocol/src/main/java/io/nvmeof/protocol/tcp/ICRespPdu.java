package io.nvmeof.protocol.tcp;

/**
 * Initialize Connection Response, 128 bytes (NVMe/TCP 1.0, 3.6.2.3, Figure 27).
 *
 * <pre>
 * 00-07 common header   08-09 PFV   10 CPDA   11 DGST   12-15 MAXH2CDATA   16-127 reserved
 * </pre>
 */
public final class ICRespPdu extends Pdu {
    public static final int SIZE = 128;
    public static final int PFV_OFFSET = 8;
    public static final int CPDA_OFFSET = 10;
    public static final int DGST_OFFSET = 11;
    public static final int MAXH2CDATA_OFFSET = 12;

    @Override
    public int length() {
        return SIZE;
    }

    public ICRespPdu encode(int cpda, boolean headerDigest, boolean dataDigest, long maxH2cData) {
        init(PduType.IC_RESP, 0, 0, SIZE);
        put16(PFV_OFFSET, 0);
        put8(CPDA_OFFSET, cpda);
        put8(DGST_OFFSET, (headerDigest ? ICReqPdu.DGST_HEADER : 0) | (dataDigest ? ICReqPdu.DGST_DATA : 0));
        put32(MAXH2CDATA_OFFSET, maxH2cData);
        return this;
    }

    public int pfv() { return u16(PFV_OFFSET); }
    /** CPDA: controller PDU data alignment, in units of 4 bytes, 0's based. */
    public int cpda() { return u8(CPDA_OFFSET); }
    public int digest() { return u8(DGST_OFFSET); }
    /** MAXH2CDATA: largest data payload of one H2CData PDU, in bytes. */
    public long maxH2cData() { return u32(MAXH2CDATA_OFFSET); }

    @Override
    public String toString() {
        return "ICResp{" + common() + " pfv=" + pfv() + " cpda=" + cpda() + " dgst=" + digest()
                + " maxh2cdata=" + maxH2cData() + "}";
    }
}
