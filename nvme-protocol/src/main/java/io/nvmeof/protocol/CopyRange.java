package io.nvmeof.protocol;

/**
 * Copy's source range entry, descriptor format 0 (NVM Command Set 1.0+): 32 bytes, SLBA at 8,
 * NLB (0's based, 16 bits) at 16; the command's CDW10-11 is SDLBA, CDW12 bits 7:0 NR (ranges, 0's
 * based), 11:8 DESFMT, 15:12 PRINFOR, 29:26 PRINFOW, 30 FUA, 31 LR.
 */
public final class CopyRange {
    public static final int SIZE = 32;
    public static final int SLBA_OFFSET = 8;
    public static final int NLB_OFFSET = 16;

    private CopyRange() {
    }

    /** Ranges (NR + 1) of CDW12. */
    public static int ranges(int cdw12) {
        return (cdw12 & 0xff) + 1;
    }

    /** Descriptor format (DESFMT) of CDW12. */
    public static int format(int cdw12) {
        return cdw12 >>> 8 & 0xf;
    }
}
