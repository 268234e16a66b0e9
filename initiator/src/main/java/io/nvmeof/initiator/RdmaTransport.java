package io.nvmeof.initiator;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.fabric.rdma.RdmaProviders;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * NVMe/RDMA for one controller: the process's provider and registered buffers ({@link
 * RdmaResources}), taken with the first queue, and a queue pair per queue ({@link RdmaQueue}).
 */
final class RdmaTransport implements HostTransport {
    private final String provider;
    private final EventLoopGroup group;
    private final ConnectOptions options;
    private RdmaResources resources;

    private RdmaTransport(String provider, EventLoopGroup group, ConnectOptions options) {
        this.provider = provider;
        this.group = group;
        this.options = options;
    }

    @Override
    public CompletableFuture<HostQueue> openQueue(InetSocketAddress address, int qid, int depth, int inCapsule,
                                                  int controllerId) {
        RdmaResources r;
        try {
            r = resources();
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
        return RdmaQueue.open(r, address, qid, depth, inCapsule, controllerId, options.commandTimeout.toNanos(),
                (int) options.connectTimeout.toMillis());
    }

    private synchronized RdmaResources resources() throws IOException {
        if (resources == null) {
            resources = RdmaResources.acquire(provider, group, options.rdmaTuning(), options.registerUserBuffers);
        }
        return resources;
    }

    /** A reset queue's commands fail once its queue pair is quiet, which a provider waits a few seconds for at most. */
    @Override
    public long quiesceMillis() {
        return 5000;
    }

    @Override
    public synchronized void close() {
        if (resources != null) {
            resources.release();
            resources = null;
        }
    }

    /** {@code nvme+rdma}, with the parameter {@code provider} ({@code verbs}, {@code disni}, {@code soft}). */
    public static final class Type implements HostTransport.Type {
        @Override
        public String name() {
            return "rdma";
        }

        @Override
        public Map<String, String> options(Map<String, String> given) {
            for (Map.Entry<String, String> e : given.entrySet()) {
                if (!"provider".equals(e.getKey())) {
                    throw new IllegalArgumentException("unknown parameter '" + e.getKey() + "' for nvme+rdma");
                }
                if (!RdmaProviders.NAMES.contains(e.getValue())) {
                    throw new IllegalArgumentException("provider must be one of " + String.join(", ", RdmaProviders.NAMES));
                }
            }
            return Map.copyOf(given);
        }

        @Override
        public HostTransport create(NvmeofUri uri, EventLoopGroup group, ConnectOptions options) {
            return new RdmaTransport(uri.option("provider"), group, options);
        }
    }
}
