package io.nvmeof.fabric.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RecvTableTest {
    @Test
    void repostingTheSameIdKeepsItsIndex() {
        RecvTable t = new RecvTable(8);
        int i = t.post(7);
        assertEquals(1, t.posted());
        assertTrue(t.isPosted(i));
        assertEquals(7, t.complete(i));
        assertEquals(0, t.posted());
        for (int n = 0; n < 100; n++) {
            assertEquals(i, t.post(7));
            assertEquals(7, t.complete(i));
        }
        assertEquals(1, t.size());
    }

    @Test
    void anIdCannotBePostedTwice() {
        RecvTable t = new RecvTable(8);
        t.post(7);
        assertThrows(IllegalStateException.class, () -> t.post(7));
        assertEquals(1, t.posted());
    }

    @Test
    void unknownOrUnpostedIndexesAreNotPosted() {
        RecvTable t = new RecvTable(8);
        int i = t.post(1);
        assertFalse(t.isPosted(i + 1));
        assertFalse(t.isPosted(-1));
        assertFalse(t.isPosted(1 << 20));
        t.complete(i);
        assertFalse(t.isPosted(i), "completed once");
        int j = t.post(2);
        t.unpost(j);
        assertEquals(0, t.posted());
        assertFalse(t.isPosted(j));
    }

    @Test
    void changingIdsAreBounded() {
        RecvTable t = new RecvTable(4);
        int held = t.post(1000);
        for (int n = 0; n < 50; n++) {
            int i = t.post(n);
            assertEquals(n, t.complete(i));
            assertTrue(t.size() <= 4, "size " + t.size());
        }
        assertTrue(t.isPosted(held), "a posted receive is never dropped");
        assertEquals(1000, t.complete(held));
        t.clear();
        assertEquals(0, t.size());
        assertEquals(0, t.posted());
    }
}
