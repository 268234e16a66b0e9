package io.nvmeof.fabric.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SendSlotsTest {
    @Test
    void takeUntilFullThenReuse() {
        SendSlots s = new SendSlots(3);
        int a = s.take(10, WorkCompletion.SEND, 0);
        int b = s.take(11, WorkCompletion.RDMA_READ, 4096);
        int c = s.take(12, WorkCompletion.SEND, 0);
        assertEquals(-1, s.take(13, WorkCompletion.SEND, 0));
        assertEquals(3, s.inUse());
        assertEquals(11, s.wrId(b));
        assertEquals(WorkCompletion.RDMA_READ, s.opcode(b));
        assertEquals(4096, s.length(b));
        s.release(b);
        s.release(b);
        assertEquals(2, s.inUse(), "releasing twice frees once");
        assertFalse(s.inUse(b));
        int d = s.take(14, WorkCompletion.SEND, 0);
        assertEquals(b, d);
        assertTrue(s.inUse(a) && s.inUse(c) && s.inUse(d));
        assertFalse(s.inUse(-1));
        assertFalse(s.inUse(3));
    }

    @Test
    void aFailedWriteIsTheChainsStatus() {
        SendSlots s = new SendSlots(2);
        int slot = s.take(1, WorkCompletion.SEND, 0);
        assertEquals(WorkCompletion.SUCCESS, s.status(slot, WorkCompletion.SUCCESS));
        s.writeCompleted(slot, WorkCompletion.REM_ACCESS_ERR);
        assertTrue(s.writeFailed(slot));
        // the SEND behind the failed WRITE is flushed; the chain reports the WRITE's error
        assertEquals(WorkCompletion.REM_ACCESS_ERR, s.status(slot, WorkCompletion.WR_FLUSH_ERR));
        s.release(slot);
        int again = s.take(2, WorkCompletion.SEND, 0);
        assertEquals(slot, again);
        assertFalse(s.writeFailed(again), "a new work request starts clean");
    }

    @Test
    void flushesDoNotHideTheRealError() {
        SendSlots s = new SendSlots(1);
        int slot = s.take(1, WorkCompletion.SEND, 0);
        s.writeCompleted(slot, WorkCompletion.WR_FLUSH_ERR);
        assertEquals(WorkCompletion.WR_FLUSH_ERR, s.status(slot, WorkCompletion.WR_FLUSH_ERR));
        s.writeCompleted(slot, WorkCompletion.REM_ACCESS_ERR);
        s.writeCompleted(slot, WorkCompletion.WR_FLUSH_ERR);
        assertEquals(WorkCompletion.REM_ACCESS_ERR, s.status(slot, WorkCompletion.WR_FLUSH_ERR));
        // a SEND that failed on its own keeps its status
        int other = new SendSlots(1).take(5, WorkCompletion.SEND, 0);
        assertNotEquals(-1, other);
        SendSlots t = new SendSlots(1);
        int u = t.take(5, WorkCompletion.SEND, 0);
        assertEquals(WorkCompletion.RETRY_EXC_ERR, t.status(u, WorkCompletion.RETRY_EXC_ERR));
    }
}
