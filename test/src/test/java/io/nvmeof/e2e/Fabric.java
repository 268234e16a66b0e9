package io.nvmeof.e2e;

import io.nvmeof.target.Port;
import io.nvmeof.target.Target;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A fabric the end-to-end suites run over. Each suite is an abstract class with a subclass per
 * fabric ({@code FooTcpTest}, {@code FooRdmaSoftTest}), the way Netty's test suite runs one
 * test against every transport: NVMe/TCP, and NVMe/RDMA over the {@code soft} provider.
 */
enum Fabric {
    TCP("tcp", null),
    RDMA_SOFT("rdma", "soft");

    /** The trtype. */
    final String trtype;
    /** The RDMA provider, or null. */
    final String provider;

    Fabric(String trtype, String provider) {
        this.trtype = trtype;
        this.provider = provider;
    }

    boolean rdma() {
        return provider != null;
    }

    /** {@code --listen} value for a target process on a free loopback port. */
    String listen() {
        return listen(0);
    }

    String listen(int port) {
        return trtype + "://127.0.0.1:" + port;
    }

    /** The target flags that go with {@link #listen()} (the RDMA provider). */
    List<String> targetFlags() {
        return rdma() ? List.of("--rdma-provider", provider) : List.of();
    }

    /** A host URI for {@code nqn} at 127.0.0.1:{@code port}. */
    String uri(int port, String nqn) {
        return "nvme+" + trtype + "://127.0.0.1:" + port + "/" + nqn + (rdma() ? "?provider=" + provider : "");
    }

    /** {@code nvmeof discover} with this fabric's flags, then {@code args}. */
    String[] discoverArgs(String... args) {
        List<String> all = new ArrayList<>(List.of("discover", "-t", trtype));
        if (rdma()) {
            all.addAll(List.of("--rdma-provider", provider));
        }
        all.addAll(List.of(args));
        return all.toArray(new String[0]);
    }

    /** Adds a port of this fabric for every subsystem of an in-process target; returns its address. */
    InetSocketAddress listen(Target target, InetSocketAddress address) throws IOException {
        Map<String, String> options = rdma() ? Map.of("rdma_provider", provider) : Map.of();
        return target.addPort(new Port(target.nextPortId(), trtype, options, address, true, List.of())).bound();
    }
}
