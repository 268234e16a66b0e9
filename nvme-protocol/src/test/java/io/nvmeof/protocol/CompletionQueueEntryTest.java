package io.nvmeof.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class CompletionQueueEntryTest {
    private final CompletionQueueEntry cqe = new CompletionQueueEntry();

    /** Connect success with CNTLID 5 on SQ 0, SQHD 3, CID 0x0102 (NVMe-oF 1.1, Figure 21). */
    @Test
    void goldenBytes() {
        String golden = "05000000 00000000 0300 0000 0201 0000";
        ByteBuffer buf = Flyweight.allocate(16);
        cqe.wrap(buf, 0);
        cqe.dw0(5).sqhd(3).sqid(0).cid(0x0102).status(Status.SUCCESS);
        assertEquals(Hex.clean(golden), Hex.of(buf));
        assertEquals(16, CompletionQueueEntry.SIZE);
        assertEquals(8, CompletionQueueEntry.SQHD_OFFSET);
        assertEquals(10, CompletionQueueEntry.SQID_OFFSET);
        assertEquals(12, CompletionQueueEntry.CID_OFFSET);
        assertEquals(14, CompletionQueueEntry.STATUS_OFFSET);
    }

    /** LBA Out of Range with DNR: SC 80h, SCT 0 -> field 0x8100; Connect Invalid Host: SCT 1 SC 84h + DNR. */
    @Test
    void statusField() {
        ByteBuffer buf = Flyweight.allocate(16);
        cqe.wrap(buf, 0).clear();
        cqe.status(Status.LBA_OUT_OF_RANGE);
        assertEquals(Hex.clean("0081"), Hex.of(buf, 14, 2));
        assertSame(Status.LBA_OUT_OF_RANGE, cqe.status());
        cqe.status(Status.CONNECT_INVALID_HOST);
        assertEquals(0x8000 | 1 << 9 | 0x84 << 1, cqe.statusField());
        assertEquals("Connect Invalid Host", cqe.status().name());
        buf.putShort(14, (short) (Status.INVALID_FIELD.field() | 1)); // phase tag is ignored
        assertSame(Status.INVALID_FIELD, cqe.status());
    }

    @Test
    void eightByteResult() {
        ByteBuffer buf = Hex.buffer("0102030405060708 0000 0000 0000 0000");
        cqe.wrap(buf, 0);
        assertEquals(0x0807060504030201L, cqe.result());
        assertEquals(0x04030201, cqe.dw0());
        assertEquals(0x08070605, cqe.dw1());
    }

    @Test
    void statusNamesAndFlags() {
        Status s = Status.of(Status.SCT_GENERIC, 0x02, false, true);
        assertSame(Status.INVALID_FIELD, s);
        assertTrue(s.toString().startsWith("Invalid Field in Command"));
        Status unknown = Status.of(7, 0x55, true, false);
        assertTrue(unknown.name().contains("Unknown"));
        assertTrue(unknown.more());
        assertEquals(unknown, Status.fromField(unknown.field()));
        assertEquals(Status.INTERNAL_ERROR.withDnr(true).field(), Status.INTERNAL_ERROR.field() | 0x8000);
    }
}
