package io.nvmeof.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** The SMART / Health and Error Information layouts, at the offsets Base 2.0 gives. */
class LogPagesTest {
    @Test
    void smartHealthFields() {
        ByteBuffer page = Flyweight.allocate(SmartLog.SIZE);
        SmartLog s = new SmartLog().<SmartLog>wrap(page, 0).compositeTemperature(298).availableSpare(100, 10)
                .io(512_000, 512_001, 7, 9).errorLogEntries(3);
        assertEquals(298, page.getShort(1));
        assertEquals(100, page.get(3));
        assertEquals(10, page.get(4));
        assertEquals(1, page.getLong(32), "512,000 bytes are one data unit");
        assertEquals(2, page.getLong(48), "a byte more rounds up");
        assertEquals(7, page.getLong(64));
        assertEquals(9, page.getLong(80));
        assertEquals(3, page.getLong(176));
        assertEquals(298, s.compositeTemperature());
        assertEquals(2, s.dataUnitsWritten());
        assertEquals(0, SmartLog.dataUnits(0));
    }

    @Test
    void errorInformationEntryGoldenBytes() {
        ByteBuffer e = Flyweight.allocate(ErrorLogEntry.SIZE);
        new ErrorLogEntry().<ErrorLogEntry>wrap(e, 0).command(2, 0x1234, Status.LBA_OUT_OF_RANGE.field(), 0x10, 1, 3)
                .errorCount(5);
        assertEquals(Hex.clean("0500000000000000 0200 3412 " + String.format("%02x%02x",
                Status.LBA_OUT_OF_RANGE.field() & 0xff, Status.LBA_OUT_OF_RANGE.field() >>> 8)
                + " ffff 1000000000000000 01000000 00 03" + " 00".repeat(34)), Hex.of(e));
        ErrorLogEntry back = new ErrorLogEntry().wrap(e, 0);
        assertEquals(5, back.errorCount());
        assertEquals(0x1234, back.cid());
        assertEquals(3, back.trtype());
    }
}
