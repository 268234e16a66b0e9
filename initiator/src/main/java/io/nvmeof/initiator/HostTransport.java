package io.nvmeof.initiator;

import io.netty.channel.EventLoopGroup;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * One controller's transport (the kernel's {@code nvme_ctrl_ops}): it opens the controller's
 * queues and holds what outlives a single queue (NVMe/RDMA: the provider and the registered
 * buffer pools). A controller creates one when it first connects and closes it with itself.
 */
interface HostTransport extends AutoCloseable {
    /**
     * Opens queue {@code qid}, for {@code depth} commands outstanding at most; the future
     * completes once the transport's own connection set-up is done (Connect is the caller's
     * next step).
     */
    CompletableFuture<HostQueue> openQueue(InetSocketAddress address, int qid, int depth, int inCapsule,
                                           int controllerId);

    /**
     * How much longer than its command timeout a queue that is reset may take to fail its
     * commands (NVMe/RDMA: until its queue pair is quiet, which a provider waits a few
     * seconds for at most).
     */
    default long quiesceMillis() {
        return 0;
    }

    @Override
    void close();

    /**
     * A kind of host transport, registered by its {@code trtype} ({@link HostTransports}); a
     * URI names it in its scheme, {@code nvme+<trtype>://}. Implementations are listed as
     * services ({@code META-INF/services/io.nvmeof.initiator.HostTransport$Type}) or
     * registered by hand.
     */
    interface Type {
        /** The {@code trtype}: {@code tcp}, {@code rdma}. */
        String name();

        /**
         * The URI parameters of this transport (besides {@code nsid}), checked: for NVMe/RDMA
         * {@code provider}. Throws {@link IllegalArgumentException} saying which one is wrong.
         */
        Map<String, String> options(Map<String, String> given);

        /** The port of a URI that names none, for the discovery subsystem. */
        default int discoveryPort() {
            return NvmeofUri.DEFAULT_PORT;
        }

        /** The transport of one controller reached through {@code uri}. */
        HostTransport create(NvmeofUri uri, EventLoopGroup group, ConnectOptions options);
    }
}
