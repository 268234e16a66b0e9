package io.nvmeof.fabric.rdma.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nvmeof.fabric.rdma.AbstractRdmaConnection;
import org.junit.jupiter.api.Test;

class WrIdsTest {
    @Test
    void roundTrip() {
        int tag = WrIds.tag(65535, 255);
        long send = 7;
        long recv = AbstractRdmaConnection.RECV | Integer.MAX_VALUE;
        long write = AbstractRdmaConnection.WRITE_PART;
        for (long id : new long[] {send, recv, write}) {
            long n = WrIds.id(tag, id);
            assertEquals(tag, WrIds.tagOf(n));
            assertEquals(65535, WrIds.cqSlotOf(n));
            assertEquals(id, n & AbstractRdmaConnection.ID_MASK, "the connection's own id comes back whole");
        }
    }

    @Test
    void generationsTellOccupantsOfASlotApart() {
        int first = WrIds.tag(3, 1);
        int second = WrIds.tag(3, 2);
        assertNotEquals(first, second);
        assertEquals(3, WrIds.cqSlotOf(WrIds.id(first, 0)));
        assertEquals(WrIds.tag(3, 0), WrIds.tag(3, 256), "generations wrap at 8 bits");
        assertEquals(0, WrIds.cqSlotOf(WrIds.id(WrIds.tag(0, 255), -1L)), "the id cannot spill into the tag");
    }

    @Test
    void slotsAreSixteenBits() {
        assertThrows(IllegalArgumentException.class, () -> WrIds.tag(WrIds.MAX_CQ_SLOTS, 0));
        assertThrows(IllegalArgumentException.class, () -> WrIds.tag(-1, 0));
    }
}
