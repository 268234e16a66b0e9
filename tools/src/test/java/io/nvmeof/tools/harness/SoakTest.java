package io.nvmeof.tools.harness;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

class SoakTest {
    /** A read is right only with the last generation written to that block: stale, misplaced or foreign data is not. */
    @Test
    void aBlockChecksOnlyAgainstItsLastWrite() {
        ByteBuffer b = ByteBuffer.allocateDirect(Soak.BS).order(ByteOrder.LITTLE_ENDIAN);
        assertTrue(Soak.check(b, 7, 1, 0), "never written: zeroes");
        Soak.fill(b, 7, 1, 3);
        assertTrue(Soak.check(b, 7, 1, 3));
        assertFalse(Soak.check(b, 7, 1, 2), "stale");
        assertFalse(Soak.check(b, 8, 1, 3), "another block's");
        assertFalse(Soak.check(b, 7, 2, 3), "another slot's");
        assertFalse(Soak.check(b, 7, 1, 0), "written, not zeroes");
        b.put(100, (byte) (b.get(100) ^ 1));
        assertFalse(Soak.check(b, 7, 1, 3), "one bit flipped");
    }
}
