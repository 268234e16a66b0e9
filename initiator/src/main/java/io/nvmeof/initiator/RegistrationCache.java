package io.nvmeof.initiator;

import io.netty.util.internal.PlatformDependent;
import io.nvmeof.fabric.rdma.MemoryRegion;
import io.nvmeof.fabric.rdma.ProtectionDomain;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Keeps callers' direct buffers registered across commands: registration pins and keys memory
 * and costs far more than a command on real hardware, so a buffer is registered on first use
 * and stays registered (and strongly referenced, so its memory cannot be freed while the
 * controller may write it) until the cache evicts it, least recently registered first, or closes.
 */
final class RegistrationCache implements AutoCloseable {
    private final ProtectionDomain pd;
    private final int capacity;
    private final Map<ByteBuffer, MemoryRegion> regions = new IdentityHashMap<>();
    private final java.util.ArrayDeque<ByteBuffer> order = new java.util.ArrayDeque<>();

    RegistrationCache(ProtectionDomain pd, int capacity) {
        this.pd = pd;
        this.capacity = capacity;
    }

    /** The region covering all of {@code buffer}'s memory (registered now if it is new). */
    synchronized MemoryRegion register(ByteBuffer buffer) throws IOException {
        MemoryRegion mr = regions.get(buffer);
        long base = PlatformDependent.directBufferAddress(buffer);
        if (mr != null && mr.address() == base && mr.length() == buffer.capacity()) {
            return mr;
        }
        if (regions.size() >= capacity) {
            ByteBuffer oldest = order.pollFirst();
            MemoryRegion old = regions.remove(oldest);
            if (old != null) {
                pd.deregister(old);
            }
        }
        mr = pd.register(buffer, MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_READ | MemoryRegion.REMOTE_WRITE);
        regions.put(buffer, mr);
        order.addLast(buffer);
        return mr;
    }

    synchronized int size() {
        return regions.size();
    }

    @Override
    public synchronized void close() {
        for (MemoryRegion mr : regions.values()) {
            pd.deregister(mr);
        }
        regions.clear();
        order.clear();
    }
}
