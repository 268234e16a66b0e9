package io.nvmeof.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class DiscoveryLogTest {
    /** An NVMe/TCP entry as Linux nvmet writes it: IPv4, NVM subsystem, port 1, dynamic cntlid, ASQSZ 32. */
    @Test
    void entryLayout() {
        ByteBuffer buf = Flyweight.allocate(1024);
        DiscoveryLogEntry e = new DiscoveryLogEntry().wrap(buf, 0);
        e.encode(DiscoveryLogEntry.TRTYPE_TCP, DiscoveryLogEntry.ADRFAM_IPV4, DiscoveryLogEntry.SUBTYPE_NVM,
                DiscoveryLogEntry.TREQ_SECURE_CHANNEL_NOT_REQUIRED, 1, 0xffff, 32, 0, "4420",
                "nqn.2026-11.io.nvmeof:x", "10.0.0.1");
        assertEquals(Hex.clean("03 01 02 02 0100 ffff 2000 0000"), Hex.of(buf, 0, 12));
        assertEquals("34343230" + "20".repeat(28), Hex.of(buf, 32, 32));
        assertEquals('n', buf.get(256));
        assertEquals(0, buf.get(256 + 23));
        assertEquals("31302e302e302e31" + "20".repeat(248), Hex.of(buf, 512, 256));
        assertEquals(0, buf.get(768));
        DiscoveryLogEntry r = new DiscoveryLogEntry().wrap(buf, 0);
        assertEquals("4420", r.trsvcid());
        assertEquals("10.0.0.1", r.traddr());
        assertEquals("nqn.2026-11.io.nvmeof:x", r.subsystemNqn());
        assertEquals(0xffff, r.cntlid());
        assertEquals(1024, DiscoveryLogEntry.HEADER_SIZE);
        assertEquals(8, DiscoveryLogEntry.NUMREC_OFFSET);
        assertEquals(16, DiscoveryLogEntry.RECFMT_OFFSET);
    }

    /** Get Log Page 70h, 4096 bytes at offset 1024, RAE: CDW10 0x03ff8070, CDW11 0, CDW12 1024. */
    @Test
    void getLogPageFields() {
        ByteBuffer buf = Flyweight.allocate(64);
        SubmissionQueueEntry sqe = new SubmissionQueueEntry().wrap(buf, 0);
        LogPage.request(sqe, LogPage.DISCOVERY, 1024, 4096, true);
        assertEquals(Hex.clean("7080ff03 00000000 00040000 00000000"), Hex.of(buf, 40, 16));
        assertEquals(LogPage.DISCOVERY, LogPage.lid(sqe));
        assertEquals(4096, LogPage.length(sqe));
        assertEquals(1024, LogPage.offset(sqe));
        LogPage.request(sqe, LogPage.SMART_HEALTH, 0, 4L << 18, false);
        assertEquals(4L << 18, LogPage.length(sqe));
        assertEquals(3, sqe.cdw11(), "NUMDU");
        assertEquals(0xffff, sqe.cdw10() >>> 16, "NUMDL");
    }
}
