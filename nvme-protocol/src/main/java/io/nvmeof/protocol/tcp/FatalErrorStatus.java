package io.nvmeof.protocol.tcp;

/** Fatal Error Status of H2CTermReq / C2HTermReq (NVMe/TCP 1.0, Figures 28-29). */
public enum FatalErrorStatus {
    INVALID_HEADER_FIELD(0x01),
    PDU_SEQUENCE_ERROR(0x02),
    HEADER_DIGEST_ERROR(0x03),
    DATA_TRANSFER_OUT_OF_RANGE(0x04),
    DATA_TRANSFER_LIMIT_EXCEEDED(0x05),
    UNSUPPORTED_PARAMETER(0x06);

    public final int code;

    FatalErrorStatus(int code) {
        this.code = code;
    }

    public static FatalErrorStatus of(int code) {
        for (FatalErrorStatus s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        return null;
    }
}
