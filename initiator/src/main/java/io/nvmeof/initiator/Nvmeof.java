package io.nvmeof.initiator;

import io.nvmeof.protocol.Nqn;
import java.io.IOException;

/** Entry point: {@code Nvmeof.connect("nvme+tcp://host:4420/<NQN>")}. */
public final class Nvmeof {
    private Nvmeof() {
    }

    /** Connects with default options. */
    public static Controller connect(String uri) throws IOException {
        return connect(uri, ConnectOptions.defaults());
    }

    /**
     * Reads the discovery log of a discovery service, e.g. {@code nvme+tcp://10.0.0.5:8009}
     * (the discovery NQN is implied); each entry knows its {@link DiscoveryEntry#uri()}.
     */
    public static Discovery.Log discover(String uri) throws IOException {
        return discover(uri, ConnectOptions.defaults());
    }

    public static Discovery.Log discover(String uri, ConnectOptions options) throws IOException {
        NvmeofUri u = NvmeofUri.parse(uri);
        if (!u.subsystemNqn().equals(Nqn.DISCOVERY)) {
            throw new IllegalArgumentException("bad URI '" + uri + "': give the discovery service, without a subsystem NQN");
        }
        try (Controller c = Controller.connect(u, options)) {
            return Discovery.read(c);
        }
    }

    /**
     * Connects to a subsystem through every address of {@code uri} ({@code
     * nvme+tcp://h1:4420,h2:4420/<NQN>}; one address gives a set of one path), as Linux's native
     * multipath: {@link Multipath#namespace} is a block device that fails over between them.
     */
    public static Multipath connectMultipath(String uri, ConnectOptions options) throws IOException {
        return Multipath.connect(NvmeofUri.parseAll(uri), options);
    }

    /** Connects to the subsystem the URI names. */
    public static Controller connect(String uri, ConnectOptions options) throws IOException {
        return Controller.connect(NvmeofUri.parse(uri), options);
    }
}
