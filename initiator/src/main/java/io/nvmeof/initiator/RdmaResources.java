package io.nvmeof.initiator;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.fabric.rdma.MemoryRegion;
import io.nvmeof.fabric.rdma.ProtectionDomain;
import io.nvmeof.fabric.rdma.RdmaProvider;
import io.nvmeof.fabric.rdma.RdmaProviders;
import io.nvmeof.fabric.rdma.RdmaTuning;
import io.nvmeof.fabric.rdma.RegisteredBufferPool;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The host's RDMA state that outlives single connections: the provider, and per protection
 * domain one pool of registered bounce buffers and (if asked for) one registration cache. Every
 * controller of the process on the same loops, provider and settings shares one ({@link
 * #acquire}), so a hundred devices open a device once, register one pool and pin at most {@link
 * #CACHE_BYTES}, not a hundred times that; the last {@link #release} closes it.
 */
final class RdmaResources {
    /** Largest bounce buffer: the largest transfer this host issues ({@link Controller#maxTransferBytes}). */
    static final int MAX_BUFFER = 1 << 20;
    static final int CACHE_ENTRIES = 1024;
    /** Memory the cache keeps registered at most (pinned, so it counts against the lock limit). */
    static final long CACHE_BYTES = 256L << 20;

    private record Key(String provider, EventLoopGroup group, RdmaTuning tuning, boolean registerUserBuffers) {
    }

    private static final Map<Key, RdmaResources> SHARED = new HashMap<>();

    final RdmaProvider provider;
    private final Key key;
    private int users;
    private final Map<ProtectionDomain, RegisteredBufferPool> pools = new ConcurrentHashMap<>();
    private final Map<ProtectionDomain, RegistrationCache> caches = new ConcurrentHashMap<>();

    private RdmaResources(Key key) throws IOException {
        this.provider = RdmaProviders.open(key.provider, key.group, key.tuning);
        this.key = key;
    }

    /** The resources of controllers on {@code group} with these settings, opened by the first; {@link #release} when done. */
    static RdmaResources acquire(String provider, EventLoopGroup group, RdmaTuning tuning, boolean registerUserBuffers)
            throws IOException {
        Key key = new Key(provider, group, tuning, registerUserBuffers);
        synchronized (SHARED) {
            RdmaResources r = SHARED.get(key);
            if (r == null) {
                r = new RdmaResources(key);
                SHARED.put(key, r);
            }
            r.users++;
            return r;
        }
    }

    RegisteredBufferPool pool(ProtectionDomain pd) {
        return pools.computeIfAbsent(pd, d -> new RegisteredBufferPool(d, MAX_BUFFER,
                MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_READ | MemoryRegion.REMOTE_WRITE));
    }

    /** The registration cache of {@code pd}, or null when user buffers are bounced. */
    RegistrationCache cache(ProtectionDomain pd) {
        return key.registerUserBuffers ? caches.computeIfAbsent(pd, d -> new RegistrationCache(d, CACHE_ENTRIES, CACHE_BYTES)) : null;
    }

    /** A controller is done with these: the last one closes them. */
    void release() {
        synchronized (SHARED) {
            if (--users > 0) {
                return;
            }
            SHARED.remove(key);
        }
        caches.values().forEach(RegistrationCache::close);
        pools.values().forEach(RegisteredBufferPool::close);
        provider.close();
    }
}
