package io.nvmeof.protocol;

/** Admin command set opcodes (NVMe Base 2.0, Figure 138) plus the Fabrics opcode. */
public enum AdminOpcode {
    DELETE_IO_SQ(0x00), CREATE_IO_SQ(0x01), GET_LOG_PAGE(0x02), DELETE_IO_CQ(0x04), CREATE_IO_CQ(0x05),
    IDENTIFY(0x06), ABORT(0x08), SET_FEATURES(0x09), GET_FEATURES(0x0A), ASYNC_EVENT_REQUEST(0x0C),
    NAMESPACE_MANAGEMENT(0x0D), FIRMWARE_COMMIT(0x10), FIRMWARE_DOWNLOAD(0x11), DEVICE_SELF_TEST(0x14),
    NAMESPACE_ATTACHMENT(0x15), KEEP_ALIVE(0x18), DIRECTIVE_SEND(0x19), DIRECTIVE_RECEIVE(0x1A),
    /** Discovery Information Management (TP8010; Base 2.0c, 5.3): registrations with a discovery controller. */
    DISCOVERY_INFO_MGMT(0x21),
    FABRICS(0x7F), FORMAT_NVM(0x80), SECURITY_SEND(0x81), SECURITY_RECEIVE(0x82), SANITIZE(0x84);

    private static final AdminOpcode[] BY_CODE = new AdminOpcode[256];

    static {
        for (AdminOpcode o : values()) {
            BY_CODE[o.code] = o;
        }
    }

    public final int code;

    AdminOpcode(int code) {
        this.code = code;
    }

    /** The opcode for a wire value, or {@code null} if it names none. */
    public static AdminOpcode of(int code) {
        return BY_CODE[code & 0xff];
    }
}
