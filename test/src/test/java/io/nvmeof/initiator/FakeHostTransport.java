package io.nvmeof.initiator;

import io.netty.channel.EventLoopGroup;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A host transport for tests, registered under a name of its own: it takes any URI parameter
 * and opens plain NVMe/TCP queues underneath (no digests, no TLS), through {@link #open},
 * which a test overrides to count, refuse or keep the queues it opens.
 */
abstract class FakeHostTransport implements HostTransport.Type {
    private final String name;

    FakeHostTransport(String name) {
        this.name = name;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Map<String, String> options(Map<String, String> given) {
        return Map.copyOf(given);
    }

    /** Opens queue {@code qid}; by default a plain NVMe/TCP queue to {@code address}. */
    CompletableFuture<HostQueue> open(EventLoopGroup group, InetSocketAddress address, int qid, int depth, int inCapsule,
                                      ConnectOptions options) {
        return TcpQueue.open(group, address, qid, depth, inCapsule, false, false, options.commandTimeout.toNanos(),
                (int) options.connectTimeout.toMillis(), null);
    }

    @Override
    public HostTransport create(NvmeofUri uri, EventLoopGroup group, ConnectOptions options) {
        return new HostTransport() {
            @Override
            public CompletableFuture<HostQueue> openQueue(InetSocketAddress address, int qid, int depth, int inCapsule,
                                                          int controllerId) {
                return open(group, address, qid, depth, inCapsule, options);
            }

            @Override
            public void close() {
            }
        };
    }
}
