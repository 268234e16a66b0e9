package io.nvmeof.e2e;

import io.nvmeof.target.Port;
import io.nvmeof.target.Target;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The fabric the end-to-end suite runs over: the same tests run once per transport (the
 * surefire executions of this module set {@code nvmeof.test.transport}): {@code tcp}, or
 * {@code rdma-soft} for NVMe/RDMA over the soft provider.
 */
final class Transport {
    static final String NAME = System.getProperty("nvmeof.test.transport", "tcp");
    static final boolean RDMA = NAME.startsWith("rdma");
    /** The provider of the RDMA runs. */
    static final String PROVIDER = RDMA ? NAME.substring(NAME.indexOf('-') + 1) : null;

    private Transport() {
    }

    /** {@code --listen} value for a target process on a free loopback port. */
    static String listen() {
        return listen(0);
    }

    static String listen(int port) {
        return (RDMA ? "rdma" : "tcp") + "://127.0.0.1:" + port;
    }

    /** The target flags that go with {@link #listen()} (the RDMA provider). */
    static List<String> targetFlags() {
        return RDMA ? List.of("--rdma-provider", PROVIDER) : List.of();
    }

    /** A host URI for {@code nqn} at 127.0.0.1:{@code port}. */
    static String uri(int port, String nqn) {
        return RDMA ? "nvme+rdma://127.0.0.1:" + port + "/" + nqn + "?provider=" + PROVIDER
                : "nvme+tcp://127.0.0.1:" + port + "/" + nqn;
    }

    /** {@code nvmeof discover} with this transport's flags, then {@code args}. */
    static String[] discoverArgs(String... args) {
        List<String> all = new ArrayList<>(List.of("discover", "-t", RDMA ? "rdma" : "tcp"));
        if (RDMA) {
            all.addAll(List.of("--rdma-provider", PROVIDER));
        }
        all.addAll(List.of(args));
        return all.toArray(new String[0]);
    }

    /** Adds a port of this transport for every subsystem of an in-process target; returns its address. */
    static InetSocketAddress listen(Target target, InetSocketAddress address) throws IOException {
        if (!RDMA) {
            return target.listenTcp(address);
        }
        return target.addPort(new Port(target.nextPortId(), "rdma", Map.of("provider", PROVIDER), address, true,
                List.of())).bound();
    }
}
