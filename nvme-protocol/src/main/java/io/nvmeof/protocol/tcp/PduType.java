package io.nvmeof.protocol.tcp;

/**
 * NVMe/TCP PDU types (NVMe/TCP Transport 1.0, 3.6.1, Figure 21) with the fixed header
 * length (HLEN) each must carry.
 */
public enum PduType {
    IC_REQ(0x00, 128), IC_RESP(0x01, 128), H2C_TERM_REQ(0x02, 24), C2H_TERM_REQ(0x03, 24),
    CAPSULE_CMD(0x04, 72), CAPSULE_RESP(0x05, 24), H2C_DATA(0x06, 24), C2H_DATA(0x07, 24), R2T(0x09, 24);

    private static final PduType[] BY_CODE = new PduType[256];

    static {
        for (PduType t : values()) {
            BY_CODE[t.code] = t;
        }
    }

    public final int code;
    /** The header length this PDU type must declare. */
    public final int headerLength;

    PduType(int code, int headerLength) {
        this.code = code;
        this.headerLength = headerLength;
    }

    /** The type for a wire value, or {@code null} if none. */
    public static PduType of(int code) {
        return BY_CODE[code & 0xff];
    }

    /** Whether PDUs of this type may carry a header digest when one was negotiated. */
    public boolean digestible() {
        return this != IC_REQ && this != IC_RESP && this != H2C_TERM_REQ && this != C2H_TERM_REQ;
    }
}
