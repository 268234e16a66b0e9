package io.nvmeof.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** The verify header: each way a block read back can be wrong is told apart. */
class BlockVerifyTest {
    @Test
    void intactCorruptedMisplacedStaleAndUnwritten() {
        for (BlockVerify.Kind kind : BlockVerify.Kind.values()) {
            BlockVerify v = new BlockVerify(kind, BlockVerify.parsePattern("0xdeadbeef"));
            ByteBuffer b = ByteBuffer.allocate(4096);
            v.fill(b, 0x9000, 7);
            assertNull(v.check(b, 0x9000, 7), kind + ": intact");
            assertNull(v.check(b, 0x9000, -1), kind + ": intact, any generation");
            assertTrue(v.check(b, 0xc000, 7).startsWith("misplaced: it is the block written for offset 0x9000"), kind.name());
            assertTrue(v.check(b, 0x9000, 8).startsWith("stale: written by write 7"), kind.name());
            b.put(1000, (byte) (b.get(1000) ^ 1));
            String corrupt = v.check(b, 0x9000, 7);
            assertTrue(corrupt.contains(kind == BlockVerify.Kind.PATTERN ? "pattern mismatch" : "mismatch"), corrupt);
            assertTrue(v.check(ByteBuffer.allocate(4096), 0, -1).startsWith("no verify header"), kind.name());
        }
        // the header's own fields are covered by the checksum: a changed generation is corruption, not staleness
        BlockVerify crc = new BlockVerify(BlockVerify.Kind.CRC32C, null);
        ByteBuffer b = ByteBuffer.allocate(512);
        crc.fill(b, 0, 1);
        b.putLong(16, Long.reverseBytes(2));
        assertTrue(crc.check(b, 0, 2).contains("crc32c mismatch"));
        assertEquals(4, BlockVerify.parsePattern("0xdeadbeef").length);
        assertEquals("abc", new String(BlockVerify.parsePattern("\"abc\"")));
    }
}
