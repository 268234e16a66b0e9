package io.nvmeof.protocol.tcp;

/**
 * H2CTermReq and C2HTermReq header, 24 bytes (NVMe/TCP 1.0, 3.6.2.4, Figures 28-29). The
 * data that follows is a copy of the header of the PDU in error (at most 128 bytes for
 * C2HTermReq and H2CTermReq alike).
 *
 * <pre>
 * 00-07 common header   08-09 FES   10-13 FEI   14-23 reserved
 * </pre>
 */
public final class TermReqPdu extends Pdu {
    public static final int SIZE = 24;
    public static final int FES_OFFSET = 8;
    public static final int FEI_OFFSET = 10;
    /** Largest copy of the offending header a TermReq carries. */
    public static final int MAX_DATA = 128;

    @Override
    public int length() {
        return SIZE;
    }

    public TermReqPdu encode(PduType type, FatalErrorStatus fes, long fei, int dataLength) {
        init(type, 0, 0, SIZE + dataLength);
        put16(FES_OFFSET, fes.code);
        put32(FEI_OFFSET, fei);
        return this;
    }

    public int fes() { return u16(FES_OFFSET); }
    /** FEI: for an invalid header field, the byte offset of that field in the header. */
    public long fei() { return u32(FEI_OFFSET); }

    @Override
    public String toString() {
        FatalErrorStatus s = FatalErrorStatus.of(fes());
        return "TermReq{" + common() + " fes=" + (s != null ? s : fes()) + " fei=" + fei() + "}";
    }
}
