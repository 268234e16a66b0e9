package io.nvmeof.fabric.rdma.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RecvCacheTest {
    private final List<String> freed = new ArrayList<>();
    private final Object regionA = new Object();
    private final Object regionB = new Object();

    @Test
    void repostingTheSameBufferReusesThePreparedReceive() {
        RecvCache<String> c = new RecvCache<>(8, freed::add);
        RecvCache.Entry<String> e = c.post(7, regionA, 0, 4096);
        assertNull(e.prepared);
        e.prepared = "recv-7";
        assertEquals(1, c.posted());
        assertSame(e, c.complete(e.index));
        assertEquals(0, c.posted());
        for (int i = 0; i < 100; i++) {
            RecvCache.Entry<String> again = c.post(7, regionA, 0, 4096);
            assertSame(e, again);
            assertEquals("recv-7", again.prepared);
            assertSame(e, c.complete(again.index));
        }
        assertTrue(freed.isEmpty());
        assertEquals(1, c.size());
    }

    @Test
    void anotherBufferUnderTheSameIdIsPreparedAgain() {
        RecvCache<String> c = new RecvCache<>(8, freed::add);
        RecvCache.Entry<String> e = c.post(7, regionA, 0, 4096);
        e.prepared = "old";
        c.complete(e.index);
        RecvCache.Entry<String> moved = c.post(7, regionB, 0, 4096);
        assertNull(moved.prepared);
        assertEquals(List.of("old"), freed);
    }

    @Test
    void anIdCannotBePostedTwice() {
        RecvCache<String> c = new RecvCache<>(8, freed::add);
        c.post(7, regionA, 0, 64);
        assertThrows(IllegalStateException.class, () -> c.post(7, regionA, 0, 64));
        assertEquals(1, c.posted());
    }

    @Test
    void completionsOfUnknownOrUnpostedEntriesAreIgnored() {
        RecvCache<String> c = new RecvCache<>(8, freed::add);
        RecvCache.Entry<String> e = c.post(1, regionA, 0, 64);
        assertNull(c.complete(e.index + 1));
        assertNull(c.complete(-1));
        assertNull(c.complete(1 << 20));
        c.complete(e.index);
        assertNull(c.complete(e.index), "completed once");
        RecvCache.Entry<String> f = c.post(2, regionA, 64, 64);
        c.unpost(f);
        assertEquals(0, c.posted());
        assertNull(c.complete(f.index));
    }

    @Test
    void changingIdsAreBoundedAndIdleEntriesFreed() {
        RecvCache<String> c = new RecvCache<>(4, freed::add);
        RecvCache.Entry<String> held = c.post(1000, regionA, 0, 64);
        held.prepared = "held";
        for (int i = 0; i < 50; i++) {
            RecvCache.Entry<String> e = c.post(i, regionA, 64, 64);
            e.prepared = "p" + i;
            assertSame(e, c.complete(e.index));
            assertTrue(c.size() <= 4, "size " + c.size());
        }
        assertTrue(freed.size() >= 45, "freed " + freed.size());
        assertTrue(!freed.contains("held"), "a posted receive is never dropped");
        assertSame(held, c.complete(held.index));
        c.clear();
        assertTrue(freed.contains("held"));
        assertEquals(0, c.size());
        assertEquals(0, c.posted());
    }
}
