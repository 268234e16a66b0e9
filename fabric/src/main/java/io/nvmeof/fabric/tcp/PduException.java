package io.nvmeof.fabric.tcp;

import io.nvmeof.protocol.tcp.FatalErrorStatus;

/**
 * A fatal NVMe/TCP transport error: the connection ends with a termination PDU carrying
 * {@link #status()} and {@link #fieldInfo()} (for a bad header field, its byte offset).
 */
public final class PduException extends Exception {
    private final FatalErrorStatus status;
    private final long fieldInfo;

    public PduException(FatalErrorStatus status, long fieldInfo, String message) {
        super(message, null, false, false);
        this.status = status;
        this.fieldInfo = fieldInfo;
    }

    public FatalErrorStatus status() {
        return status;
    }

    public long fieldInfo() {
        return fieldInfo;
    }
}
