package io.nvmeof.fabric.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The registered data buffer pool grows with demand and gives idle slabs back. */
class RegisteredBufferPoolTest {
    /** A domain that records what is registered now. */
    private final Set<MemoryRegion> registered = new HashSet<>();
    private final ProtectionDomain pd = new ProtectionDomain() {
        @Override
        public MemoryRegion register(ByteBuffer b, int access) {
            MemoryRegion mr = new MemoryRegion(this, b, 0x10000, 1, 2, access, null);
            registered.add(mr);
            return mr;
        }

        @Override
        public void deregister(MemoryRegion mr) {
            assertTrue(registered.remove(mr), "deregistered twice or never registered");
            mr.markDeregistered();
        }
    };

    @Test
    void aBurstIsGivenBackOnceIdleAndBuffersInUseKeepTheirSlab() throws Exception {
        RegisteredBufferPool pool = new RegisteredBufferPool(pd, 1 << 20, MemoryRegion.LOCAL_WRITE);
        List<RegisteredBufferPool.Buf> burst = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            burst.add(pool.allocate(1 << 20));
        }
        long peak = pool.registeredBytes();
        assertEquals(12L << 20, peak, "three 4 MiB slabs of 1 MiB buffers");
        assertEquals(3, registered.size());

        // everything but one buffer comes back; nothing is idle long enough yet
        RegisteredBufferPool.Buf kept = burst.remove(0);
        burst.forEach(RegisteredBufferPool.Buf::release);
        assertEquals(0, pool.trim(60_000_000_000L));
        assertEquals(peak, pool.registeredBytes());

        // idle now: the two slabs without a buffer out go; the one holding `kept` stays
        assertEquals(8L << 20, pool.trim(0));
        assertEquals(4L << 20, pool.registeredBytes());
        assertEquals(1, registered.size());
        assertTrue(registered.contains(kept.region()));
        kept.setLong(0, 42); // still registered memory

        // the next burst takes the kept slab's free buffers first, then registers anew
        List<RegisteredBufferPool.Buf> again = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            RegisteredBufferPool.Buf b = pool.allocate(1 << 20);
            assertTrue(registered.contains(b.region()), "a buffer of a deregistered slab was handed out");
            assertNotSame(kept, b);
            again.add(b);
        }
        assertEquals(8L << 20, pool.registeredBytes());
        again.forEach(RegisteredBufferPool.Buf::release);
        kept.release();
        assertEquals(8L << 20, pool.trim(0));
        assertEquals(0, pool.registeredBytes());
        assertTrue(registered.isEmpty());

        // and it grows again after shrinking to nothing
        RegisteredBufferPool.Buf b = pool.allocate(4096);
        assertTrue(registered.contains(b.region()));
        b.release();
        pool.close();
        assertTrue(registered.isEmpty());
    }
}
