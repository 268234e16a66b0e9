package io.nvmeof.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.nvmeof.protocol.CompletionQueueEntry;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.Hex;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** Golden bytes for every NVMe/TCP PDU header (NVMe/TCP Transport Specification 1.0, 3.6). */
class PduTest {
    private static final String ZEROS_112 = "00".repeat(112);

    @Test
    void typesAndHeaderLengths() {
        assertEquals(0x00, PduType.IC_REQ.code);
        assertEquals(0x01, PduType.IC_RESP.code);
        assertEquals(0x02, PduType.H2C_TERM_REQ.code);
        assertEquals(0x03, PduType.C2H_TERM_REQ.code);
        assertEquals(0x04, PduType.CAPSULE_CMD.code);
        assertEquals(0x05, PduType.CAPSULE_RESP.code);
        assertEquals(0x06, PduType.H2C_DATA.code);
        assertEquals(0x07, PduType.C2H_DATA.code);
        assertEquals(0x09, PduType.R2T.code);
        assertNull(PduType.of(0x08));
        assertSame(PduType.R2T, PduType.of(9));
        assertEquals(72, PduType.CAPSULE_CMD.headerLength);
    }

    /** What the Linux host sends: no digests, HPDA 0, MAXR2T 0. */
    @Test
    void icReq() {
        String golden = "00 00 80 00 80000000 0000 00 03 0f000000" + ZEROS_112;
        ByteBuffer buf = Flyweight.allocate(128);
        new ICReqPdu().wrap(buf, 0);
        ICReqPdu p = new ICReqPdu().wrap(buf, 0);
        p.encode(0, true, true, 15);
        assertEquals(Hex.clean(golden), Hex.of(buf));
        ICReqPdu r = new ICReqPdu().wrap(Hex.buffer(golden), 0);
        assertEquals(0, r.type());
        assertEquals(128, r.hlen());
        assertEquals(128, r.plen());
        assertEquals(0, r.pfv());
        assertEquals(0, r.hpda());
        assertEquals(3, r.digest());
        assertEquals(15, r.maxR2t());
    }

    @Test
    void icResp() {
        String golden = "01 00 80 00 80000000 0000 00 00 00000200" + ZEROS_112;
        ByteBuffer buf = Flyweight.allocate(128);
        new ICRespPdu().<ICRespPdu>wrap(buf, 0).encode(0, false, false, 131072);
        assertEquals(Hex.clean(golden), Hex.of(buf));
        ICRespPdu r = new ICRespPdu().wrap(Hex.buffer(golden), 0);
        assertEquals(0, r.cpda());
        assertEquals(131072, r.maxH2cData());
        assertEquals(10, ICRespPdu.CPDA_OFFSET);
        assertEquals(12, ICRespPdu.MAXH2CDATA_OFFSET);
    }

    /** Command capsule with 512 bytes in-capsule data and a header digest: PDO 76, PLEN 588. */
    @Test
    void capsuleCmd() {
        ByteBuffer buf = Flyweight.allocate(72);
        CapsuleCommandPdu p = new CapsuleCommandPdu().wrap(buf, 0);
        p.init(PduType.CAPSULE_CMD, Pdu.FLAG_HDGST, 76, 72 + 4 + 512);
        SubmissionQueueEntry sqe = p.sqe(new SubmissionQueueEntry());
        sqe.opcode(1).cid(9);
        assertEquals(Hex.clean("04 01 48 4c 4c020000 01 00 0900"), Hex.of(buf, 0, 12));
        assertEquals(8, sqe.offset());
    }

    @Test
    void capsuleResp() {
        ByteBuffer buf = Flyweight.allocate(24);
        CapsuleResponsePdu p = new CapsuleResponsePdu().wrap(buf, 0);
        p.init(PduType.CAPSULE_RESP, 0, 0, 24);
        CompletionQueueEntry cqe = p.cqe(new CompletionQueueEntry());
        cqe.cid(0x0a0b).sqid(1).sqhd(2).status(Status.INVALID_NAMESPACE);
        assertEquals(Hex.clean("05 00 18 00 18000000 00000000 00000000 0200 0100 0b0a 1680"), Hex.of(buf));
    }

    /** C2HData, 4096 bytes at offset 8192, last PDU, data digest: PDO 24, PLEN 24+4096+4. */
    @Test
    void c2hData() {
        String golden = "07 06 18 18 1c100000 0300 0000 00200000 00100000 00000000";
        ByteBuffer buf = Flyweight.allocate(24);
        new DataPdu().<DataPdu>wrap(buf, 0).encode(PduType.C2H_DATA, Pdu.FLAG_LAST_PDU, 3, 0, 8192, 4096, false, true);
        assertEquals(Hex.clean(golden), Hex.of(buf));
        DataPdu r = new DataPdu().wrap(Hex.buffer(golden), 0);
        assertEquals(3, r.cccid());
        assertEquals(8192, r.datao());
        assertEquals(4096, r.datal());
        assertEquals(Pdu.FLAG_LAST_PDU | Pdu.FLAG_DDGST, r.flags());
    }

    /** H2CData with header digest: PDO 28, PLEN 28+512. */
    @Test
    void h2cData() {
        ByteBuffer buf = Flyweight.allocate(24);
        new DataPdu().<DataPdu>wrap(buf, 0).encode(PduType.H2C_DATA, Pdu.FLAG_LAST_PDU, 1, 5, 0, 512, true, false);
        assertEquals(Hex.clean("06 05 18 1c 1c020000 0100 0500 00000000 00020000 00000000"), Hex.of(buf));
    }

    @Test
    void r2t() {
        ByteBuffer buf = Flyweight.allocate(24);
        new R2TPdu().<R2TPdu>wrap(buf, 0).encode(0x11, 0x22, 4096, 65536, false);
        assertEquals(Hex.clean("09 00 18 00 18000000 1100 2200 00100000 00000100 00000000"), Hex.of(buf));
        R2TPdu r = new R2TPdu().wrap(buf, 0);
        assertEquals(0x11, r.cccid());
        assertEquals(0x22, r.ttag());
        assertEquals(4096, r.r2to());
        assertEquals(65536, r.r2tl());
    }

    /** C2HTermReq: invalid header field at offset 2 (HLEN), carrying 8 bytes of the bad header. */
    @Test
    void termReq() {
        ByteBuffer buf = Flyweight.allocate(24);
        new TermReqPdu().<TermReqPdu>wrap(buf, 0).encode(PduType.C2H_TERM_REQ, FatalErrorStatus.INVALID_HEADER_FIELD, 2, 8);
        assertEquals(Hex.clean("03 00 18 00 20000000 0100 02000000 00000000000000000000"), Hex.of(buf));
        assertEquals(0x05, FatalErrorStatus.DATA_TRANSFER_LIMIT_EXCEEDED.code);
        assertEquals(0x06, FatalErrorStatus.UNSUPPORTED_PARAMETER.code);
    }
}
