package io.nvmeof.initiator;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.fabric.rdma.MemoryRegion;
import io.nvmeof.fabric.rdma.ProtectionDomain;
import io.nvmeof.fabric.rdma.RdmaProvider;
import io.nvmeof.fabric.rdma.RdmaProviders;
import io.nvmeof.fabric.rdma.RdmaTuning;
import io.nvmeof.fabric.rdma.RegisteredBufferPool;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A controller's RDMA state that outlives single connections: the provider, and per protection
 * domain one pool of registered bounce buffers and (if asked for) one registration cache.
 */
final class RdmaResources implements AutoCloseable {
    /** Largest bounce buffer: the largest transfer this host issues ({@link Controller#maxTransferBytes}). */
    static final int MAX_BUFFER = 1 << 20;
    static final int CACHE_ENTRIES = 1024;
    /** Memory the cache keeps registered at most (pinned, so it counts against the lock limit). */
    static final long CACHE_BYTES = 256L << 20;

    final RdmaProvider provider;
    private final boolean registerUserBuffers;
    private final Map<ProtectionDomain, RegisteredBufferPool> pools = new ConcurrentHashMap<>();
    private final Map<ProtectionDomain, RegistrationCache> caches = new ConcurrentHashMap<>();

    RdmaResources(String provider, EventLoopGroup group, RdmaTuning tuning, boolean registerUserBuffers) throws IOException {
        this.provider = RdmaProviders.open(provider, group, tuning);
        this.registerUserBuffers = registerUserBuffers;
    }

    RegisteredBufferPool pool(ProtectionDomain pd) {
        return pools.computeIfAbsent(pd, d -> new RegisteredBufferPool(d, MAX_BUFFER,
                MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_READ | MemoryRegion.REMOTE_WRITE));
    }

    /** The registration cache of {@code pd}, or null when user buffers are bounced. */
    RegistrationCache cache(ProtectionDomain pd) {
        return registerUserBuffers ? caches.computeIfAbsent(pd, d -> new RegistrationCache(d, CACHE_ENTRIES, CACHE_BYTES)) : null;
    }

    @Override
    public void close() {
        caches.values().forEach(RegistrationCache::close);
        pools.values().forEach(RegisteredBufferPool::close);
        provider.close();
    }
}
