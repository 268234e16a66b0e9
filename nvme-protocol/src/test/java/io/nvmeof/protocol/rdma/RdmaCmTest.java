package io.nvmeof.protocol.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.Hex;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** Golden bytes of the NVMe/RDMA CM private data and the keyed SGL descriptor. */
class RdmaCmTest {
    @Test
    void connectRequest() {
        // what the Linux host sends for I/O queue 3 with queue size 128: HRQSIZE 128, HSQSIZE 127
        ByteBuffer b = Flyweight.allocate(RdmaCmRequest.SIZE);
        RdmaCmRequest r = new RdmaCmRequest().wrap(b, 0);
        r.encode(3, 128, 127, 0xffff);
        assertEquals("0000030080007f00ffff" + "00".repeat(22), Hex.of(b, 0, RdmaCmRequest.SIZE));
        RdmaCmRequest parsed = new RdmaCmRequest().wrap(Hex.buffer("0000 0000 2000 1f00 0100" + "00".repeat(22)), 0);
        assertEquals(0, parsed.recfmt());
        assertEquals(0, parsed.qid());
        assertEquals(32, parsed.hrqsize());
        assertEquals(31, parsed.hsqsize());
        assertEquals(1, parsed.cntlid());
    }

    @Test
    void acceptAndReject() {
        ByteBuffer b = Flyweight.allocate(RdmaCmAccept.SIZE);
        RdmaCmAccept a = new RdmaCmAccept().wrap(b, 0);
        a.encode(128);
        assertEquals("0000 8000".replace(" ", "") + "00".repeat(28), Hex.of(b, 0, RdmaCmAccept.SIZE));
        ByteBuffer j = Flyweight.allocate(RdmaCmReject.SIZE);
        RdmaCmReject rej = new RdmaCmReject().wrap(j, 0);
        rej.encode(RdmaCmReject.INVALID_HSQSIZE);
        assertEquals("00000400", Hex.of(j, 0, RdmaCmReject.SIZE));
        assertEquals("invalid HSQSIZE", RdmaCmReject.name(rej.status()));
    }

    @Test
    void keyedDescriptor() {
        ByteBuffer b = Flyweight.allocate(SubmissionQueueEntry.SIZE);
        SubmissionQueueEntry sqe = new SubmissionQueueEntry().wrap(b, 0);
        sqe.sglKeyed(0x1122334455667788L, 0x020000, 0xa1b2c3d4, Sgl.KEYED_INVALIDATE);
        // DPTR at 24: address LE, length 3 bytes LE, key 4 bytes LE, identifier 4Fh
        assertEquals("8877665544332211" + "000002" + "d4c3b2a1" + "4f", Hex.of(b, 24, 16));
        assertEquals(0x020000, sqe.sglKeyedLength());
        assertEquals(0x020000, sqe.sglDataLength());
        assertEquals(0xa1b2c3d4L, sqe.sglKey());
        assertEquals(Sgl.TYPE_KEYED_DATA_BLOCK, Sgl.type(sqe.sglIdentifier()));
        assertThrows(IllegalArgumentException.class, () -> sqe.sglKeyed(0, 1 << 24, 1, Sgl.KEYED_ADDRESS));
        sqe.sgl(0, 0x01000000L, Sgl.IN_CAPSULE);
        assertEquals(0x01000000L, sqe.sglDataLength());
    }
}
