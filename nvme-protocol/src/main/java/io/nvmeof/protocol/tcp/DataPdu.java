package io.nvmeof.protocol.tcp;

/**
 * Header of the data-carrying PDUs H2CData and C2HData, 24 bytes (NVMe/TCP 1.0, 3.6.2.7
 * Figure 31 and 3.6.2.8 Figure 32). TTAG is reserved in C2HData.
 *
 * <pre>
 * 00-07 common header   08-09 CCCID   10-11 TTAG   12-15 DATAO   16-19 DATAL   20-23 reserved
 * </pre>
 */
public final class DataPdu extends Pdu {
    public static final int SIZE = 24;
    public static final int CCCID_OFFSET = 8;
    public static final int TTAG_OFFSET = 10;
    public static final int DATAO_OFFSET = 12;
    public static final int DATAL_OFFSET = 16;

    @Override
    public int length() {
        return SIZE;
    }

    /**
     * Writes a data PDU header; {@code type} is H2C_DATA or C2H_DATA. PDO and PLEN follow
     * from the digests: data starts after the header and its digest, the data digest ends it.
     */
    public DataPdu encode(PduType type, int flags, int cccid, int ttag, long datao, int datal, boolean hdgst, boolean ddgst) {
        int pdo = SIZE + (hdgst ? DIGEST_SIZE : 0);
        long plen = (long) pdo + datal + (ddgst ? DIGEST_SIZE : 0);
        init(type, flags | (hdgst ? FLAG_HDGST : 0) | (ddgst ? FLAG_DDGST : 0), pdo, plen);
        put16(CCCID_OFFSET, cccid);
        put16(TTAG_OFFSET, ttag);
        put32(DATAO_OFFSET, datao);
        put32(DATAL_OFFSET, datal);
        return this;
    }

    public int cccid() { return u16(CCCID_OFFSET); }
    public int ttag() { return u16(TTAG_OFFSET); }
    public long datao() { return u32(DATAO_OFFSET); }
    public long datal() { return u32(DATAL_OFFSET); }

    @Override
    public String toString() {
        return "DataPdu{" + common() + " cccid=" + cccid() + " ttag=" + ttag() + " datao=" + datao() + " datal=" + datal() + "}";
    }
}
