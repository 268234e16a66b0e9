package io.nvmeof.initiator;

import java.io.IOException;

/** A command did not complete within the command timeout, and was not aborted in time either. */
public final class NvmeTimeoutException extends IOException {
    public NvmeTimeoutException(String message) {
        super(message);
    }
}
