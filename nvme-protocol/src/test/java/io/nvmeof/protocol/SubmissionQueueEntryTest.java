package io.nvmeof.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class SubmissionQueueEntryTest {
    private final SubmissionQueueEntry sqe = new SubmissionQueueEntry();

    @Test
    void sizeAndOffsets() {
        assertEquals(64, SubmissionQueueEntry.SIZE);
        assertEquals(0, SubmissionQueueEntry.OPCODE_OFFSET);
        assertEquals(2, SubmissionQueueEntry.CID_OFFSET);
        assertEquals(4, SubmissionQueueEntry.NSID_OFFSET);
        assertEquals(16, SubmissionQueueEntry.MPTR_OFFSET);
        assertEquals(24, SubmissionQueueEntry.DPTR_OFFSET);
        assertEquals(40, SubmissionQueueEntry.CDW10_OFFSET);
        assertEquals(60, SubmissionQueueEntry.CDW15_OFFSET);
    }

    /** A Read of 8 blocks at LBA 0x123456789, CID 0x1234, NSID 1, SGL 5Ah of 4096 bytes, PSDT 01b. */
    @Test
    void readCommandGoldenBytes() {
        String golden = "02 40 3412 01000000 00000000 00000000 0000000000000000"
                + " 0000000000000000 00100000 000000 5a"
                + " 89674523 01000000 07000000 00000000 00000000 00000000";
        ByteBuffer buf = Flyweight.allocate(64);
        sqe.wrap(buf, 0);
        sqe.opcode(NvmOpcode.READ.code).psdt(SubmissionQueueEntry.PSDT_SGL_MPTR_CONTIGUOUS).cid(0x1234).nsid(1)
                .sgl(0, 4096, Sgl.TCP_TRANSPORT).slba(0x123456789L).blockCount(8);
        assertEquals(Hex.clean(golden), Hex.of(buf));

        sqe.wrap(Hex.buffer(golden), 0);
        assertEquals(0x02, sqe.opcode());
        assertEquals(1, sqe.psdt());
        assertEquals(0, sqe.fuse());
        assertEquals(0x1234, sqe.cid());
        assertEquals(1, sqe.nsid());
        assertEquals(4096, sqe.sglLength());
        assertEquals(0x5a, sqe.sglIdentifier());
        assertEquals(Sgl.TYPE_TRANSPORT_DATA_BLOCK, Sgl.type(sqe.sglIdentifier()));
        assertEquals(0x123456789L, sqe.slba());
        assertEquals(8, sqe.blockCount());
        assertFalse(sqe.fua());
    }

    @Test
    void fusedAndFuaBits() {
        ByteBuffer buf = Flyweight.allocate(64);
        sqe.wrap(buf, 0).clear();
        sqe.psdt(1).fuse(SubmissionQueueEntry.FUSE_FIRST);
        assertEquals(0x41, buf.get(1) & 0xff);
        assertEquals(1, sqe.psdt());
        buf.putInt(48, 1 << 30);
        assertTrue(sqe.fua());
        assertThrows(IllegalArgumentException.class, () -> sqe.blockCount(0));
        assertThrows(IllegalArgumentException.class, () -> sqe.blockCount(65537));
    }

    /** Connect for admin queue: SQSIZE 31 (32 entries), KATO 5000 ms, CATTR 0 (NVMe-oF 1.1, Figure 19). */
    @Test
    void connectGoldenBytes() {
        String golden = "7f 00 0100 01 000000 0000000000000000 0000000000000000"
                + " 0000000000000000 00040000 000000 01"
                + " 0000 0000 1f00 00 00 88130000 000000000000000000000000";
        ByteBuffer buf = Flyweight.allocate(64);
        sqe.wrap(buf, 0);
        sqe.connect(0, 32, 0, 5000).cid(1).sgl(0, 1024, Sgl.IN_CAPSULE);
        assertEquals(Hex.clean(golden), Hex.of(buf));
        sqe.wrap(Hex.buffer(golden), 0);
        assertEquals(FabricsCommandType.CONNECT.code, sqe.fctype());
        assertEquals(0, sqe.connectRecfmt());
        assertEquals(0, sqe.connectQid());
        assertEquals(31, sqe.connectSqsize());
        assertEquals(0, sqe.connectCattr());
        assertEquals(5000, sqe.connectKato());
        assertEquals(40, SubmissionQueueEntry.CONNECT_RECFMT_OFFSET);
        assertEquals(42, SubmissionQueueEntry.CONNECT_QID_OFFSET);
        assertEquals(44, SubmissionQueueEntry.CONNECT_SQSIZE_OFFSET);
        assertEquals(46, SubmissionQueueEntry.CONNECT_CATTR_OFFSET);
        assertEquals(48, SubmissionQueueEntry.CONNECT_KATO_OFFSET);
    }

    /** Property Set CC = 0x00460001 (4 bytes) and Property Get CAP (8 bytes), NVMe-oF 1.1 Figures 33/35. */
    @Test
    void propertyGoldenBytes() {
        ByteBuffer buf = Flyweight.allocate(64);
        sqe.wrap(buf, 0).clear();
        sqe.propertySet(Registers.CC, 4, 0x00460001).cid(7);
        assertEquals(Hex.clean("7f 00 0700 00"), Hex.of(buf, 0, 5));
        assertEquals(Hex.clean("00 000000 14000000 0100460000000000 00000000 00000000"), Hex.of(buf, 40, 24));
        sqe.wrap(buf, 0).clear();
        sqe.propertyGet(Registers.CAP, 8);
        assertEquals(Hex.clean("04"), Hex.of(buf, 4, 1));
        assertEquals(Hex.clean("01 000000 00000000"), Hex.of(buf, 40, 8));
        assertEquals(8, sqe.propertySize());
        assertEquals(0, sqe.propertyOffset());
    }

    @Test
    void identifyAndFeatures() {
        ByteBuffer buf = Flyweight.allocate(64);
        sqe.wrap(buf, 0).clear();
        sqe.opcode(AdminOpcode.IDENTIFY.code).identifyCns(IdentifyCns.CONTROLLER);
        assertEquals(1, buf.get(40));
        assertEquals(1, sqe.identifyCns());
        sqe.clear();
        buf.putInt(40, 0x8000_0207); // SV set, SEL 2, FID 7
        assertEquals(FeatureId.NUMBER_OF_QUEUES, sqe.featureId());
        assertEquals(2, sqe.featureSelect());
        assertTrue(sqe.featureSave());
    }

    /** Set Features Number of Queues asking for 4 SQs and 4 CQs: CDW10 07h, CDW11 0x00030003. */
    @Test
    void numberOfQueuesGoldenBytes() {
        ByteBuffer buf = Flyweight.allocate(64);
        sqe.wrap(buf, 0).clear();
        sqe.opcode(AdminOpcode.SET_FEATURES.code).numberOfQueues(4, 4);
        assertEquals(Hex.clean("07000000 03000300"), Hex.of(buf, 40, 8));
        assertEquals(4, sqe.requestedSubmissionQueues());
        assertEquals(4, sqe.requestedCompletionQueues());
    }

    @Test
    void keyedSglFields() {
        // Keyed data block: address 0x1000, length 0x123456 (3 bytes), key 0xdeadbeef, identifier 40h
        ByteBuffer buf = Hex.sparse(64, 24, "0010000000000000 563412 efbeadde 40");
        sqe.wrap(buf, 0);
        assertEquals(0x1000, sqe.sglAddress());
        assertEquals(0x123456, sqe.sglKeyedLength());
        assertEquals(0xdeadbeefL, sqe.sglKey());
        assertEquals(Sgl.TYPE_KEYED_DATA_BLOCK, Sgl.type(sqe.sglIdentifier()));
    }

    @Test
    void rejectsWrapPastEnd() {
        assertThrows(IndexOutOfBoundsException.class, () -> sqe.wrap(Flyweight.allocate(63), 0));
        assertThrows(IndexOutOfBoundsException.class, () -> sqe.wrap(Flyweight.allocate(64), 1));
    }

    /** The writers the initiator encodes its commands with, byte for byte. */
    @Test
    void commandWritersGoldenBytes() {
        ByteBuffer buf = Flyweight.allocate(64);
        sqe.wrap(buf, 0);
        sqe.abort(3, 0x1234);
        assertEquals(Hex.clean("08 00 0000 00000000" + " 00".repeat(32) + " 03003412" + " 00".repeat(20)), Hex.of(buf));

        sqe.clear();
        sqe.opcode(AdminOpcode.SET_FEATURES.code).feature(FeatureId.ASYNC_EVENT_CONFIG, 1 << 8);
        assertEquals(Hex.clean("09 00 0000 00000000" + " 00".repeat(32) + " 0b000000 00010000" + " 00".repeat(16)),
                Hex.of(buf));

        sqe.clear();
        sqe.datasetManagement(3, 1 << 2).nsid(1);
        assertEquals(Hex.clean("09 00 0000 01000000" + " 00".repeat(32) + " 02000000 04000000" + " 00".repeat(16)),
                Hex.of(buf));
        assertThrows(IllegalArgumentException.class, () -> sqe.datasetManagement(257, 0));

        sqe.clear();
        sqe.blocks(NvmOpcode.WRITE_ZEROES, 0x1_0000_0002L, 65536).nsid(2);
        assertEquals(Hex.clean("08 00 0000 02000000" + " 00".repeat(32) + " 02000000 01000000 ffff0000" + " 00".repeat(12)),
                Hex.of(buf));

        SubmissionQueueEntry copy = new SubmissionQueueEntry().wrap(Flyweight.allocate(64), 0);
        copy.cid(7).copyFrom(sqe);
        assertEquals(Hex.of(buf), Hex.of(copy.buffer()), "a copy is the whole entry, CID included");
    }
}
