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
 * registered first, never while a command uses it) or closes, within a count and a byte
 * limit. A buffer seen once, such as a slice made for one call, is not worth a registration:
 * the caller bounces it; so it does read-only buffers and buffers the provider would not
 * register.
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

    private static final int SEEN = 256;

    private final ProtectionDomain pd;
    private final int capacity;
    private final long maxBytes;
    private final Map<ByteBuffer, Entry> entries = new IdentityHashMap<>();
    private final ArrayDeque<Entry> order = new ArrayDeque<>();
    /**
     * Memory seen once and not registered, by address and capacity (no reference to the
     * buffer, so a one-off buffer can be freed): a ring of the latest {@link #SEEN}.
     */
    private final long[] seenAddress = new long[SEEN];
    private final int[] seenCapacity = new int[SEEN];
    private int seenNext;
    private long bytes;
    private long registrations;

    RegistrationCache(ProtectionDomain pd, int capacity, long maxBytes) {
        this.pd = pd;
        this.capacity = capacity;
        this.maxBytes = maxBytes;
    }

    /**
     * The registration covering all of {@code buffer}'s memory, taken for one command (give it
     * back with {@link #release}), or null when the buffer should be bounced this time.
     */
    synchronized Entry acquire(ByteBuffer buffer) {
        if (buffer.isReadOnly() || !buffer.isDirect()) {
            return null;
        }
        long address = PlatformDependent.directBufferAddress(buffer);
        int size = buffer.capacity();
        Entry e = entries.get(buffer);
        if (e == null) {
            // another view of memory already registered (a duplicate made per call, say)
            for (Entry x : order) {
                if (x.region.address() == address && x.region.length() == size) {
                    e = x;
                    break;
                }
            }
        }
        if (e != null && e.region.address() == address && e.region.length() == size) {
            e.inUse++;
            return e;
        }
        if (!seenBefore(address, size)) {
            return null;
        }
        while (entries.size() >= capacity || bytes + size > maxBytes) {
            if (!evictOne()) {
                seenBefore(address, size); // every registration is in use: bounce this one, try again next time
                return null;
            }
        }
        MemoryRegion mr;
        try {
            mr = pd.register(buffer, MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_READ | MemoryRegion.REMOTE_WRITE);
        } catch (IOException | RuntimeException x) {
            return null; // the provider would not (memory lock limit, say): bounce
        }
        e = new Entry(buffer, mr);
        registrations++;
        bytes += size;
        entries.put(buffer, e);
        order.addLast(e);
        e.inUse++;
        return e;
    }

    /** Whether this memory was seen before (then it is forgotten); else it is noted now. */
    private boolean seenBefore(long address, int size) {
        for (int i = 0; i < SEEN; i++) {
            if (seenAddress[i] == address && seenCapacity[i] == size && address != 0) {
                seenAddress[i] = 0;
                return true;
            }
        }
        seenAddress[seenNext] = address;
        seenCapacity[seenNext] = size;
        seenNext = (seenNext + 1) % SEEN;
        return false;
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
                bytes -= old.region.length();
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
        bytes = 0;
    }
}
