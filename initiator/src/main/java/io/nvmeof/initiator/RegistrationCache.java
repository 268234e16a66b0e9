package io.nvmeof.initiator;

import io.netty.util.internal.PlatformDependent;
import io.nvmeof.fabric.rdma.MemoryRegion;
import io.nvmeof.fabric.rdma.ProtectionDomain;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * Keeps callers' direct buffers registered across commands: registration pins and keys memory
 * and costs far more than a command on real hardware, so a buffer that comes back (the second
 * time it is seen) is registered and stays registered, and strongly referenced so its memory
 * cannot be freed while the controller may write it, until the cache evicts it (least recently
 * registered first, never while a command uses it) or closes. A buffer seen once, such as a
 * slice made for one call, is not worth a registration: the caller bounces it.
 */
final class RegistrationCache implements AutoCloseable {
    /** One registered buffer. */
    static final class Entry {
        final ByteBuffer buffer;
        final MemoryRegion region;
        int inUse;

        Entry(ByteBuffer buffer, MemoryRegion region) {
            this.buffer = buffer;
            this.region = region;
        }
    }

    private final ProtectionDomain pd;
    private final int capacity;
    private final Map<ByteBuffer, Entry> entries = new IdentityHashMap<>();
    private final ArrayDeque<Entry> order = new ArrayDeque<>();
    /** Buffers seen once, not registered (bounded: the oldest are forgotten). */
    private final Map<ByteBuffer, Boolean> seen = new IdentityHashMap<>();
    private final ArrayDeque<ByteBuffer> seenOrder = new ArrayDeque<>();
    private long registrations;

    RegistrationCache(ProtectionDomain pd, int capacity) {
        this.pd = pd;
        this.capacity = capacity;
    }

    /**
     * The registration covering all of {@code buffer}'s memory, taken for one command (give it
     * back with {@link #release}), or null when the buffer should be bounced this time.
     */
    synchronized Entry acquire(ByteBuffer buffer) throws IOException {
        Entry e = entries.get(buffer);
        if (e != null && e.region.address() == PlatformDependent.directBufferAddress(buffer)
                && e.region.length() == buffer.capacity()) {
            e.inUse++;
            return e;
        }
        if (seen.remove(buffer) == null) {
            seen.put(buffer, Boolean.TRUE);
            seenOrder.addLast(buffer);
            while (seenOrder.size() > capacity) {
                seen.remove(seenOrder.pollFirst());
            }
            return null;
        }
        if (entries.size() >= capacity && !evictOne()) {
            return null; // every registration is in use: bounce this one
        }
        e = new Entry(buffer, pd.register(buffer,
                MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_READ | MemoryRegion.REMOTE_WRITE));
        registrations++;
        entries.put(buffer, e);
        order.addLast(e);
        e.inUse++;
        return e;
    }

    synchronized void release(Entry e) {
        e.inUse--;
    }

    private boolean evictOne() {
        for (Iterator<Entry> it = order.iterator(); it.hasNext(); ) {
            Entry old = it.next();
            if (old.inUse == 0) {
                it.remove();
                entries.remove(old.buffer);
                pd.deregister(old.region);
                return true;
            }
        }
        return false;
    }

    synchronized int size() {
        return entries.size();
    }

    /** Registrations made so far. */
    synchronized long registrations() {
        return registrations;
    }

    @Override
    public synchronized void close() {
        for (Entry e : entries.values()) {
            pd.deregister(e.region);
        }
        entries.clear();
        order.clear();
        seen.clear();
        seenOrder.clear();
    }
}
