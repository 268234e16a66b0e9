package io.nvmeof.fabric.rdma;

import java.io.IOException;
import java.nio.ByteBuffer;

/** The peer rejected a connect request; {@link #privateData()} is what it said (may be null). */
public class RdmaRejectedException extends IOException {
    private final transient ByteBuffer privateData;

    public RdmaRejectedException(String message, ByteBuffer privateData) {
        super(message);
        this.privateData = privateData;
    }

    public ByteBuffer privateData() {
        return privateData;
    }
}
