package io.nvmeof.initiator;

import java.io.IOException;

/** Entry point: {@code Nvmeof.connect("nvme+tcp://host:4420/<NQN>")}. */
public final class Nvmeof {
    private Nvmeof() {
    }

    /** Connects with default options. */
    public static Controller connect(String uri) throws IOException {
        return connect(uri, ConnectOptions.defaults());
    }

    /** Connects to the subsystem the URI names. */
    public static Controller connect(String uri, ConnectOptions options) throws IOException {
        return Controller.connect(NvmeofUri.parse(uri), options);
    }
}
