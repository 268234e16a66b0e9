package io.nvmeof.protocol;

/** NVM command set I/O opcodes (NVM Command Set 1.0, Figure 16). */
public enum NvmOpcode {
    FLUSH(0x00), WRITE(0x01), READ(0x02), WRITE_UNCORRECTABLE(0x04), COMPARE(0x05), WRITE_ZEROES(0x08),
    DATASET_MANAGEMENT(0x09), VERIFY(0x0C), RESERVATION_REGISTER(0x0D), RESERVATION_REPORT(0x0E),
    RESERVATION_ACQUIRE(0x11), RESERVATION_RELEASE(0x15), COPY(0x19), FABRICS(0x7F);

    private static final NvmOpcode[] BY_CODE = new NvmOpcode[256];

    static {
        for (NvmOpcode o : values()) {
            BY_CODE[o.code] = o;
        }
    }

    public final int code;

    NvmOpcode(int code) {
        this.code = code;
    }

    /** The opcode for a wire value, or {@code null} if it names none. */
    public static NvmOpcode of(int code) {
        return BY_CODE[code & 0xff];
    }
}
