package io.nvmeof.fabric.rdma;

/**
 * How a provider is tuned: {@code busyPoll}, the verbs provider polls its completion queues
 * instead of waiting for completion events; {@code disniCqSize}, entries of the DiSNI provider's
 * shared completion queue; {@code disniInitiatorDepth}, RDMA READs the DiSNI provider assumes a
 * host lets it have outstanding. The target takes these from its settings ({@code rdma_busy_poll},
 * {@code disni_cq_size}, {@code disni_initiator_depth}); the initiator from its connect options.
 */
public record RdmaTuning(boolean busyPoll, int disniCqSize, int disniInitiatorDepth) {
    public static final RdmaTuning DEFAULTS = new RdmaTuning(false, 16384, 1);

    public RdmaTuning {
        if (disniCqSize < 256 || disniInitiatorDepth < 1 || disniInitiatorDepth > 255) {
            throw new IllegalArgumentException("DiSNI CQ size must be at least 256 and initiator depth 1..255");
        }
    }
}
