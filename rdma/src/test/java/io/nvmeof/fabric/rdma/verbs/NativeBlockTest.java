package io.nvmeof.fabric.rdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The verbs provider's native memory: one owner, one free, a use after free throws (no RDMA needed). */
class NativeBlockTest {
    @Test
    void aBlockIsCountedUsableAndThenRefused() {
        int before = Native.liveAllocations();
        NativeBlock b = new NativeBlock("test connection", 64);
        assertEquals(before + 1, Native.liveAllocations());
        long a = b.at(8, 8);
        Native.MEM.putLong(a, 0x1122334455667788L);
        assertEquals(0x1122334455667788L, Native.MEM.getLong(b.at(8, 8)));
        assertEquals(0L, Native.MEM.getLong(b.at(0, 8)), "calloc'd: zero");
        assertThrows(IndexOutOfBoundsException.class, () -> b.at(60, 8));
        assertThrows(IndexOutOfBoundsException.class, () -> b.at(-1, 1));
        b.free();
        assertEquals(before, Native.liveAllocations());
        assertFalse(b.live());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> b.at(0, 8));
        assertTrue(e.getMessage().contains("used after it was freed"), e.getMessage());
        b.free();                                   // a second free of the block does nothing
        assertEquals(before, Native.liveAllocations());
    }

    @Test
    void aDoubleFreeOrAForeignPointerIsRefusedBeforeMallocSeesIt() {
        long a = Native.calloc(32);
        Native.free(a);
        assertThrows(IllegalStateException.class, () -> Native.free(a));
        assertThrows(IllegalStateException.class, () -> Native.free(0x1000));
        Native.free(0);                             // null is ignored, as free(3) does
    }
}
