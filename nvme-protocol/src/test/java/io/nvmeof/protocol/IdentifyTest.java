package io.nvmeof.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class IdentifyTest {
    @Test
    void controllerOffsets() {
        ByteBuffer buf = Flyweight.allocate(4096);
        IdentifyController id = new IdentifyController().wrap(buf, 0);
        id.vid(0x1b36).ssvid(0x1af4).serialNumber("SN1").modelNumber("Model").firmwareRevision("0.1")
                .ieeeOui(0x123456).mdts(8).cntlid(0x21).version(Registers.VERSION_1_3).controllerType(1)
                .kas(10).sqes(0x66).cqes(0x44).maxcmd(128).nn(32).oncs(0x0d).vwc(1).sgls(0x100005)
                .subsystemNqn("nqn.2024-01.io.nvmeof:x").ioccsz(516).iorcsz(1).msdbd(1).aerl(3).elpe(7);
        assertEquals("361bf41a", Hex.of(buf, 0, 4));
        assertEquals(Hex.of(ByteBuffer.wrap("SN1                 ".getBytes()), 0, 20), Hex.of(buf, 4, 20));
        assertEquals(' ', buf.get(24 + 39));
        assertEquals("563412", Hex.of(buf, 73, 3));
        assertEquals(8, buf.get(77));
        assertEquals("2100", Hex.of(buf, 78, 2));
        assertEquals("00030100", Hex.of(buf, 80, 4));
        assertEquals(1, buf.get(111));
        assertEquals(3, buf.get(259));
        assertEquals(7, buf.get(262));
        assertEquals("0a00", Hex.of(buf, 320, 2));
        assertEquals("6644", Hex.of(buf, 512, 2));
        assertEquals("8000", Hex.of(buf, 514, 2));
        assertEquals("20000000", Hex.of(buf, 516, 4));
        assertEquals("0d00", Hex.of(buf, 520, 2));
        assertEquals(1, buf.get(525));
        assertEquals("05001000", Hex.of(buf, 536, 4));
        assertEquals('n', buf.get(768));
        assertEquals("04020000", Hex.of(buf, 1792, 4));
        assertEquals("01000000", Hex.of(buf, 1796, 4));
        assertEquals(1, buf.get(1803));
        // the ANA fields (Base 2.0, Figure 275: ANATT 342, ANACAP 343, ANAGRPMAX 347:344,
        // NANAGRPID 351:348, MNAN 543:540): Linux sizes its ANA log buffer from NANAGRPID and MNAN
        // and turns ANA off when that exceeds MDTS, as it did when these sat one byte late
        id.anatt(10).anacap(0x1f).anagrpmax(128).nanagrpid(0x81).mnan(1024);
        assertEquals("0a1f", Hex.of(buf, 342, 2));
        assertEquals("80000000", Hex.of(buf, 344, 4));
        assertEquals("81000000", Hex.of(buf, 348, 4));
        assertEquals("00040000", Hex.of(buf, 540, 4));

        IdentifyController r = new IdentifyController().wrap(buf, 0);
        assertEquals("SN1", r.serialNumber());
        assertEquals("Model", r.modelNumber());
        assertEquals("0.1", r.firmwareRevision());
        assertEquals(0x123456, r.ieeeOui());
        assertEquals(32, r.nn());
        assertEquals("nqn.2024-01.io.nvmeof:x", r.subsystemNqn());
        assertEquals(516, r.ioccsz());
    }

    @Test
    void namespaceOffsets() {
        ByteBuffer buf = Flyweight.allocate(4096);
        byte[] nguid = new byte[16];
        for (int i = 0; i < 16; i++) {
            nguid[i] = (byte) (i + 1);
        }
        IdentifyNamespace ns = new IdentifyNamespace().wrap(buf, 0);
        ns.nsze(0x10000).ncap(0x10000).nuse(0x8000).nlbaf(0).flbas(0).lbaFormat(0, 0, 12, 0).nsattr(1).nguid(nguid);
        assertEquals("0000010000000000", Hex.of(buf, 0, 8));
        assertEquals("0000010000000000", Hex.of(buf, 8, 8));
        assertEquals("0080000000000000", Hex.of(buf, 16, 8));
        assertEquals(1, buf.get(99));
        assertEquals("0102030405060708090a0b0c0d0e0f10", Hex.of(buf, 104, 16));
        assertEquals("00000c00", Hex.of(buf, 128, 4));
        IdentifyNamespace r = new IdentifyNamespace().wrap(buf, 0);
        assertEquals(4096, r.blockSize());
        assertEquals(0x10000, r.nsze());
        assertArrayEquals(nguid, r.nguid());
    }
}
