package io.nvmeof.fabric.rdma;

import java.io.IOException;

/** A provider cannot run here: its library or an RDMA device is missing. The message says what to install. */
public class RdmaUnavailableException extends IOException {
    public RdmaUnavailableException(String message) {
        super(message);
    }

    public RdmaUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
