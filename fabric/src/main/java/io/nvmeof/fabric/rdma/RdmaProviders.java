package io.nvmeof.fabric.rdma;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.fabric.rdma.soft.SoftProvider;
import java.util.List;

/** Opens a provider by name. */
public final class RdmaProviders {
    /** The provider names, the default first. */
    public static final List<String> NAMES = List.of("verbs", "disni", "soft");
    public static final String DEFAULT = "verbs";

    private RdmaProviders() {
    }

    /**
     * Opens provider {@code name} ({@code null}: the default, {@code verbs}), whose connections
     * deliver completions on loops of {@code group}. Fails at once, with one message saying what
     * is missing and how to get it, where the provider cannot run here.
     */
    public static RdmaProvider open(String name, EventLoopGroup group) throws RdmaUnavailableException {
        String n = name == null ? DEFAULT : name;
        switch (n) {
            case "soft":
                return new SoftProvider(group);
            case "disni":
                return io.nvmeof.fabric.rdma.disni.DisniProvider.open(group);
            case "verbs":
                return io.nvmeof.fabric.rdma.verbs.VerbsProvider.open(group);
            default:
                throw new IllegalArgumentException("unknown RDMA provider '" + n + "' (one of " + String.join(", ", NAMES) + ")");
        }
    }
}
