package io.nvmeof.fabric.rdma.soft;

import io.netty.util.internal.PlatformDependent;
import io.nvmeof.fabric.rdma.MemoryRegion;
import io.nvmeof.fabric.rdma.ProtectionDomain;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The soft provider's protection domain: registered regions by remote key. A peer's RDMA READ or
 * WRITE names a key; it is served only if the key is registered here, the range lies inside the
 * region and the region allows that remote access, as an RNIC checks it. Keys are random, so a
 * key cannot be guessed from another.
 */
final class SoftDomain implements ProtectionDomain {
    private final Map<Integer, MemoryRegion> byRkey = new ConcurrentHashMap<>();
    private final SecureRandom random = new SecureRandom();

    @Override
    public MemoryRegion register(ByteBuffer buffer, int access) {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("only direct buffers can be registered");
        }
        ByteBuffer whole = buffer.duplicate().clear();
        long address = PlatformDependent.directBufferAddress(whole);
        while (true) {
            int rkey = random.nextInt();
            if (rkey == 0 || rkey == -1) {
                continue;
            }
            MemoryRegion mr = new MemoryRegion(this, whole.slice().order(buffer.order()), address, rkey ^ 0x5a5a5a5a, rkey,
                    access, new AtomicInteger());
            if (byRkey.putIfAbsent(rkey, mr) == null) {
                return mr;
            }
        }
    }

    @Override
    public void deregister(MemoryRegion mr) {
        mr.markDeregistered();
        if (byRkey.remove(mr.rkey(), mr)) {
            // wait until no access through the key is in progress; afterwards nothing touches it
            AtomicInteger users = users(mr);
            while (!users.compareAndSet(0, -1)) {
                Thread.onSpinWait();
            }
        }
    }

    /**
     * The region a peer names, pinned for one access, or null if the key is unknown, the range
     * is outside it or the region does not allow {@code access}. Release with {@link #release}.
     */
    MemoryRegion acquireRemote(int rkey, long address, long length, int access) {
        MemoryRegion mr = byRkey.get(rkey);
        if (mr == null || (mr.access() & access) == 0 || !mr.contains(address, length)) {
            return null;
        }
        return acquire(mr) ? mr : null;
    }

    /** Removes remote access through {@code rkey} (SEND with Invalidate); false if no such key. */
    boolean invalidate(int rkey) {
        MemoryRegion mr = byRkey.get(rkey);
        if (mr == null) {
            return false;
        }
        deregister(mr);
        return true;
    }

    static boolean acquire(MemoryRegion mr) {
        AtomicInteger users = users(mr);
        while (true) {
            int u = users.get();
            if (u < 0) {
                return false;
            }
            if (users.compareAndSet(u, u + 1)) {
                return true;
            }
        }
    }

    static void release(MemoryRegion mr) {
        users(mr).decrementAndGet();
    }

    private static AtomicInteger users(MemoryRegion mr) {
        return (AtomicInteger) mr.handle();
    }
}
