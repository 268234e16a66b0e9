package io.nvmeof.target;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.protocol.DiscoveryLogEntry;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * One transport of a target (the kernel's {@code nvmet_fabrics_ops}, SPDK's {@code
 * spdk_nvmf_transport_ops}): it listens on the target's ports of its type and moves their
 * queues' data; the core owns command semantics. A target creates one instance per type, on
 * the first port of that type, and closes it with the target.
 */
public interface TargetTransport extends AutoCloseable {
    /** Starts listening on {@code port} (its address, its options). */
    PortListener listen(Port port) throws IOException, InterruptedException;

    /** Releases what the transport holds for all its ports. */
    @Override
    void close();

    /** A port option: its {@code name}, the values it takes, what it does. */
    record PortOption(String name, String values, String help) {
    }

    /**
     * A kind of target transport, registered by its {@code trtype} ({@link TargetTransports}):
     * what a port of this type may be configured with, what discovery log entries say about
     * such a port, and how to create the transport. Implementations are listed as services
     * ({@code META-INF/services/io.nvmeof.target.TargetTransport$Type}) or registered by hand.
     */
    interface Type {
        /** The {@code trtype} as configs and URIs spell it: {@code tcp}, {@code rdma}. */
        String name();

        /** TRTYPE as discovery and error log entries number it ({@link DiscoveryLogEntry#TRTYPE_TCP}, ...). */
        int code();

        /**
         * The port options of this transport, defaults filled in, from those configured (for
         * NVMe/RDMA: {@code provider}). Throws {@link PortOptionException} naming an option
         * that this transport does not know or whose value is wrong.
         */
        Map<String, String> options(Map<String, String> configured);

        /**
         * The port options this transport takes, each as configurations and command lines name it
         * (a key of a port's JSON object, and {@code --NAME} of {@code nvmeof target}).
         */
        default List<PortOption> portOptions() {
            return List.of();
        }

        /**
         * Fills in the transport-specific fields of a discovery log entry for {@code port}
         * (TSAS), after the common ones.
         */
        default void describe(Port port, DiscoveryLogEntry entry) {
        }

        /** Creates this transport for {@code target}, its queues on {@code group}'s loops. */
        TargetTransport create(Target target, EventLoopGroup group);
    }
}
