package io.nvmeof.protocol;

/** Fabrics command types carried in SQE byte 4 when the opcode is 7Fh (NVMe-oF 1.1, Figure 9). */
public enum FabricsCommandType {
    PROPERTY_SET(0x00), CONNECT(0x01), PROPERTY_GET(0x04), AUTHENTICATION_SEND(0x05),
    AUTHENTICATION_RECEIVE(0x06), DISCONNECT(0x08);

    private static final FabricsCommandType[] BY_CODE = new FabricsCommandType[256];

    static {
        for (FabricsCommandType t : values()) {
            BY_CODE[t.code] = t;
        }
    }

    public final int code;

    FabricsCommandType(int code) {
        this.code = code;
    }

    /** The command type for a wire value, or {@code null} if it names none. */
    public static FabricsCommandType of(int code) {
        return BY_CODE[code & 0xff];
    }
}
