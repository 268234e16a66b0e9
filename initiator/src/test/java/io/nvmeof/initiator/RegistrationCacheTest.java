package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.netty.channel.DefaultEventLoopGroup;
import io.nvmeof.fabric.rdma.soft.SoftProvider;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The registration cache: a buffer is registered when it comes back, kept, and never evicted while in use. */
class RegistrationCacheTest {
    @Test
    void aByteLimitEvictsIdleEntriesAndBouncesWhenAllAreBusy() throws Exception {
        DefaultEventLoopGroup group = new DefaultEventLoopGroup(1);
        try (SoftProvider provider = new SoftProvider(group);
             RegistrationCache cache = new RegistrationCache(provider.pd(), 100, 3 * 4096)) {
            ByteBuffer big = ByteBuffer.allocateDirect(2 * 4096);
            ByteBuffer small = ByteBuffer.allocateDirect(4096);
            ByteBuffer other = ByteBuffer.allocateDirect(2 * 4096);
            cache.acquire(big);
            RegistrationCache.Entry eb = cache.acquire(big);
            cache.acquire(small);
            assertNotNull(cache.acquire(small));
            cache.acquire(other);
            assertNull(cache.acquire(other), "over the byte limit with every entry in use: bounced");
            cache.release(eb);
            assertNotNull(cache.acquire(other), "the idle entry made room");
            assertEquals(2, cache.size());
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    @Test
    void registersOnTheSecondSightingKeepsAndEvictsOnlyIdleEntries() throws Exception {
        DefaultEventLoopGroup group = new DefaultEventLoopGroup(1);
        try (SoftProvider provider = new SoftProvider(group);
             RegistrationCache cache = new RegistrationCache(provider.pd(), 2, 1 << 20)) {
            ByteBuffer a = ByteBuffer.allocateDirect(4096);
            ByteBuffer b = ByteBuffer.allocateDirect(4096);
            ByteBuffer c = ByteBuffer.allocateDirect(4096);
            assertNull(cache.acquire(a), "seen once: bounced");
            RegistrationCache.Entry ea = cache.acquire(a);
            assertNotNull(ea, "seen again: registered");
            assertEquals(4096, ea.region.length());
            cache.release(ea);
            RegistrationCache.Entry again = cache.acquire(a);
            assertSame(ea, again, "kept registered");
            assertEquals(1, cache.registrations());
            // a stays in use; b fills the cache; c finds only b idle and takes its place
            cache.acquire(b);
            RegistrationCache.Entry eb = cache.acquire(b);
            cache.release(eb);
            assertEquals(2, cache.size());
            cache.acquire(c);
            RegistrationCache.Entry ec = cache.acquire(c);
            assertNotNull(ec);
            assertEquals(2, cache.size());
            assertSame(again, cache.acquire(a), "the entry in use was not evicted");
            // every entry in use: a newcomer is bounced rather than evicting one
            ByteBuffer d = ByteBuffer.allocateDirect(4096);
            cache.acquire(d);
            assertNull(cache.acquire(d));
            assertEquals(3, cache.registrations());
            // another view of registered memory uses the same registration
            assertSame(again, cache.acquire(a.duplicate()));
            // read-only and heap buffers are never registered
            ByteBuffer ro = ByteBuffer.allocateDirect(4096).asReadOnlyBuffer();
            assertNull(cache.acquire(ro));
            assertNull(cache.acquire(ro));
            ByteBuffer heap = ByteBuffer.allocate(4096);
            assertNull(cache.acquire(heap));
            assertNull(cache.acquire(heap));
            assertEquals(3, cache.registrations());
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
