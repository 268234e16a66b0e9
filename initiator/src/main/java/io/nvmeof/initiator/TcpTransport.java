package io.nvmeof.initiator;

import io.netty.channel.ChannelHandler;
import io.netty.channel.EventLoopGroup;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.fabric.tls.TlsPskHandler;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/** NVMe/TCP for one controller: each queue its own TCP connection ({@link TcpQueue}). */
final class TcpTransport implements HostTransport {
    private final EventLoopGroup group;
    private final ConnectOptions options;
    private final String subsystemNqn;
    /** Where this controller's I/O queues start among the loops: controllers on shared loops spread over them. */
    private final int firstLoop = NEXT_LOOP.getAndIncrement();
    private static final java.util.concurrent.atomic.AtomicInteger NEXT_LOOP = new java.util.concurrent.atomic.AtomicInteger();

    private TcpTransport(EventLoopGroup group, ConnectOptions options, String subsystemNqn) {
        this.group = group;
        this.options = options;
        this.subsystemNqn = subsystemNqn;
    }

    @Override
    public CompletableFuture<HostQueue> openQueue(InetSocketAddress address, int qid, int depth, int inCapsule,
                                                  int controllerId) {
        Supplier<ChannelHandler> tls = options.tlsKey == null ? null
                : () -> TlsPskHandler.client(options.tlsKey, options.identity().hostNqn(), subsystemNqn,
                        options.tlsIdentityVersion, options.tlsDerivation);
        // an I/O queue on a loop of its own where there are enough (EventLoops.loop); the admin queue anywhere
        return TcpQueue.open(qid == 0 ? group : EventLoops.loop(group, firstLoop + qid - 1), address, qid, depth, inCapsule, options.headerDigest, options.dataDigest,
                options.commandTimeout.toNanos(), (int) options.connectTimeout.toMillis(), tls);
    }

    @Override
    public void close() {
        // every queue is its own connection, closed with the queue
    }

    /** {@code nvme+tcp}: no URI parameters; the discovery subsystem on port 8009 by default. */
    public static final class Type implements HostTransport.Type {
        @Override
        public String name() {
            return "tcp";
        }

        @Override
        public Map<String, String> options(Map<String, String> given) {
            for (String k : given.keySet()) {
                throw new IllegalArgumentException("unknown parameter '" + k + "' for nvme+tcp");
            }
            return Map.of();
        }

        @Override
        public int discoveryPort() {
            return NvmeofUri.DISCOVERY_PORT;
        }

        @Override
        public HostTransport create(NvmeofUri uri, EventLoopGroup group, ConnectOptions options) {
            return new TcpTransport(group, options, uri.subsystemNqn());
        }
    }
}
