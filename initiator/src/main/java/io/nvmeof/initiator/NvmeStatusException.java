package io.nvmeof.initiator;

import io.nvmeof.protocol.Status;
import java.io.IOException;

/** A command completed with an error status. */
public final class NvmeStatusException extends IOException {
    private final Status status;

    public NvmeStatusException(String command, Status status) {
        this(command, status, false);
    }

    /** {@code fabricsCommand}: the status is a Fabrics command's (its command-specific codes are named so). */
    public NvmeStatusException(String command, Status status, boolean fabricsCommand) {
        super(command + " failed: " + status.toString(fabricsCommand));
        this.status = status;
        this.fabricsCommand = fabricsCommand;
    }

    private final boolean fabricsCommand;

    /** Whether the status is a Fabrics command's (for a message that names the command anew). */
    boolean fabricsCommand() {
        return fabricsCommand;
    }

    public Status status() {
        return status;
    }
}
