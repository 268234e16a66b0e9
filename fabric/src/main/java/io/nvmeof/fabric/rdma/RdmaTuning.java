package io.nvmeof.fabric.rdma;

/**
 * How a provider is tuned: {@code busyPoll}, the verbs provider polls its completion queues
 * instead of waiting for completion events; {@code disniCqSize}, entries of the DiSNI provider's
 * shared completion queue; {@code disniInitiatorDepth}, RDMA READs the DiSNI provider assumes a
 * host lets it have outstanding. The target takes these from its settings; an application's
 * initiator from {@link #fromSystemProperties()}.
 */
public record RdmaTuning(boolean busyPoll, int disniCqSize, int disniInitiatorDepth) {
    public static final RdmaTuning DEFAULTS = new RdmaTuning(false, 16384, 1);

    public RdmaTuning {
        if (disniCqSize < 256 || disniInitiatorDepth < 1 || disniInitiatorDepth > 255) {
            throw new IllegalArgumentException("DiSNI CQ size must be at least 256 and initiator depth 1..255");
        }
    }

    /**
     * {@code -Dnvmeof.rdma.busyPoll=true}, {@code -Dnvmeof.disni.cqSize=N} and {@code
     * -Dnvmeof.disni.initiatorDepth=N}, for an initiator in an application (the target has
     * settings of these names instead).
     */
    public static RdmaTuning fromSystemProperties() {
        return new RdmaTuning(Boolean.getBoolean("nvmeof.rdma.busyPoll"),
                Math.max(256, Integer.getInteger("nvmeof.disni.cqSize", DEFAULTS.disniCqSize)),
                Math.min(255, Math.max(1, Integer.getInteger("nvmeof.disni.initiatorDepth", DEFAULTS.disniInitiatorDepth))));
    }
}
