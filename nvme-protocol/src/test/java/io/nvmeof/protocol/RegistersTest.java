package io.nvmeof.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RegistersTest {
    @Test
    void capFields() {
        long cap = Registers.cap(128, 15);
        // MQES 127, CQR, TO 15 (7.5 s), CSS NVM (bit 37)
        assertEquals(0x0000_0020_0F01_007FL, cap);
        assertEquals(128, Registers.capMaxQueueEntries(cap));
        assertEquals(7500, Registers.capTimeoutMillis(cap));
        assertEquals(0, Registers.capMpsMin(cap));
    }

    @Test
    void ccAndCsts() {
        int cc = Registers.ccEnable();
        assertEquals(0x0046_0001, cc); // IOCQES 4, IOSQES 6, EN
        assertTrue(Registers.ccEnabled(cc));
        assertEquals(6, Registers.ccIosqesLog2(cc));
        assertEquals(4, Registers.ccIocqesLog2(cc));
        assertEquals(1, Registers.ccShn(cc | Registers.CC_SHN_NORMAL));
        assertFalse(Registers.cstsReady(0));
        assertEquals(2, Registers.cstsShst(Registers.CSTS_SHST_COMPLETE | Registers.CSTS_RDY));
        assertEquals(8, Registers.sizeOf(Registers.CAP));
        assertEquals(4, Registers.sizeOf(Registers.CSTS));
        assertEquals(-1, Registers.sizeOf(0x04));
        assertEquals("1.3", Registers.versionString(Registers.VERSION_1_3));
        assertEquals(0x14, Registers.CC);
        assertEquals(0x1c, Registers.CSTS);
        assertEquals(0x08, Registers.VS);
    }
}
