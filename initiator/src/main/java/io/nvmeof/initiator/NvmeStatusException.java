package io.nvmeof.initiator;

import io.nvmeof.protocol.Status;
import java.io.IOException;

/** A command completed with an error status. */
public final class NvmeStatusException extends IOException {
    private final Status status;

    public NvmeStatusException(String command, Status status) {
        super(command + " failed: " + status);
        this.status = status;
    }

    public Status status() {
        return status;
    }
}
