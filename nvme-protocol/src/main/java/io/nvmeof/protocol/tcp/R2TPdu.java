package io.nvmeof.protocol.tcp;

/**
 * Ready to Transfer PDU, 24 bytes (NVMe/TCP 1.0, 3.6.2.9, Figure 33).
 *
 * <pre>
 * 00-07 common header   08-09 CCCID   10-11 TTAG   12-15 R2TO   16-19 R2TL   20-23 reserved
 * </pre>
 */
public final class R2TPdu extends Pdu {
    public static final int SIZE = 24;
    public static final int CCCID_OFFSET = 8;
    public static final int TTAG_OFFSET = 10;
    public static final int R2TO_OFFSET = 12;
    public static final int R2TL_OFFSET = 16;

    @Override
    public int length() {
        return SIZE;
    }

    public R2TPdu encode(int cccid, int ttag, long offset, long length, boolean hdgst) {
        init(PduType.R2T, hdgst ? FLAG_HDGST : 0, 0, SIZE + (hdgst ? DIGEST_SIZE : 0));
        put16(CCCID_OFFSET, cccid);
        put16(TTAG_OFFSET, ttag);
        put32(R2TO_OFFSET, offset);
        put32(R2TL_OFFSET, length);
        return this;
    }

    public int cccid() { return u16(CCCID_OFFSET); }
    public int ttag() { return u16(TTAG_OFFSET); }
    public long r2to() { return u32(R2TO_OFFSET); }
    public long r2tl() { return u32(R2TL_OFFSET); }

    @Override
    public String toString() {
        return "R2T{" + common() + " cccid=" + cccid() + " ttag=" + ttag() + " r2to=" + r2to() + " r2tl=" + r2tl() + "}";
    }
}
