package io.nvmeof.fabric.rdma.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class WrIdsTest {
    @Test
    void roundTrip() {
        int tag = WrIds.tag(65535, 255);
        long send = WrIds.id(tag, 0, 7);
        long recv = WrIds.id(tag, WrIds.RECV, Integer.MAX_VALUE);
        long write = WrIds.id(tag, WrIds.WRITE_PART, 0);
        for (long id : new long[] {send, recv, write}) {
            assertEquals(tag, WrIds.tagOf(id));
            assertEquals(65535, WrIds.cqSlotOf(id));
        }
        assertEquals(7, WrIds.indexOf(send));
        assertEquals(Integer.MAX_VALUE, WrIds.indexOf(recv));
        assertFalse(WrIds.isRecv(send));
        assertFalse(WrIds.isWritePart(send));
        assertTrue(WrIds.isRecv(recv));
        assertFalse(WrIds.isWritePart(recv));
        assertTrue(WrIds.isWritePart(write));
        assertFalse(WrIds.isRecv(write));
    }

    @Test
    void generationsTellOccupantsOfASlotApart() {
        int first = WrIds.tag(3, 1);
        int second = WrIds.tag(3, 2);
        assertNotEquals(first, second);
        assertEquals(3, WrIds.cqSlotOf(WrIds.id(first, 0, 0)));
        assertEquals(WrIds.tag(3, 0), WrIds.tag(3, 256), "generations wrap at 8 bits");
        assertEquals(0, WrIds.cqSlotOf(WrIds.id(WrIds.tag(0, 255), WrIds.RECV, -1)));
    }

    @Test
    void slotsAreSixteenBits() {
        assertThrows(IllegalArgumentException.class, () -> WrIds.tag(WrIds.MAX_CQ_SLOTS, 0));
        assertThrows(IllegalArgumentException.class, () -> WrIds.tag(-1, 0));
    }
}
