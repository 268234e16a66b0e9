package io.nvmeof.fabric.rdma;

import io.netty.channel.EventLoopGroup;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.ConcurrentHashMap;

/** Opens a provider by name, among the {@link RdmaProviderType}s on the class path. */
public final class RdmaProviders {
    /** The provider names, the default first. */
    public static final List<String> NAMES = List.of("verbs", "disni", "soft");
    public static final String DEFAULT = "verbs";
    private static final Map<String, RdmaProviderType> TYPES = new ConcurrentHashMap<>();

    static {
        for (RdmaProviderType t : ServiceLoader.load(RdmaProviderType.class, RdmaProviders.class.getClassLoader())) {
            TYPES.putIfAbsent(t.name(), t);
        }
    }

    private RdmaProviders() {
    }

    /**
     * Opens provider {@code name} ({@code null}: the default, {@code verbs}), whose connections
     * deliver completions on loops of {@code group}. Fails at once, with one message saying what
     * is missing and how to get it, where the provider cannot run here (or is not on the class
     * path: {@code verbs} and {@code disni} come with {@code io.nvmeof:nvmeof-rdma}). Tuned as
     * {@link RdmaTuning#DEFAULTS}.
     */
    public static RdmaProvider open(String name, EventLoopGroup group) throws RdmaUnavailableException {
        return open(name, group, RdmaTuning.DEFAULTS);
    }

    /** {@link #open(String, EventLoopGroup)}, tuned as {@code tuning} says. */
    public static RdmaProvider open(String name, EventLoopGroup group, RdmaTuning tuning) throws RdmaUnavailableException {
        String n = name == null ? DEFAULT : name;
        if (!NAMES.contains(n)) {
            throw new IllegalArgumentException("unknown RDMA provider '" + n + "' (one of " + String.join(", ", NAMES) + ")");
        }
        RdmaProviderType t = TYPES.get(n);
        if (t == null) {
            throw new RdmaUnavailableException("the RDMA provider '" + n + "' is not on the class path: it comes with "
                    + "the artifact io.nvmeof:nvmeof-rdma (the nvmeof CLI carries it)");
        }
        return t.open(group, tuning);
    }
}
