package io.nvmeof.protocol;

/**
 * Identify Namespace data structure for the NVM command set, 4096 bytes (NVM Command Set
 * 1.0, 4.1.5.1, Figure 97). LBA formats are 4 bytes each from byte 128: MS 15:0,
 * LBADS 23:16 (log2 of the block size), RP 25:24.
 */
public final class IdentifyNamespace extends Flyweight {
    public static final int SIZE = 4096;
    public static final int NSZE_OFFSET = 0;
    public static final int NCAP_OFFSET = 8;
    public static final int NUSE_OFFSET = 16;
    public static final int NSFEAT_OFFSET = 24;
    public static final int NLBAF_OFFSET = 25;
    public static final int FLBAS_OFFSET = 26;
    public static final int NMIC_OFFSET = 30;
    /** Reservation Capabilities: bit 0 PTPL, bits 1-6 the six types, bit 7 IEKEY as NVMe 1.3 has it. */
    public static final int RESCAP_OFFSET = 31;
    public static final int DLFEAT_OFFSET = 33;
    /** Copy limits: MSSRL (blocks per source range), MCL (blocks per command), MSRC (ranges, 0's based). */
    public static final int MSSRL_OFFSET = 74;
    public static final int MCL_OFFSET = 76;
    public static final int MSRC_OFFSET = 80;
    public static final int ANAGRPID_OFFSET = 92;
    public static final int NSATTR_OFFSET = 99;
    public static final int NGUID_OFFSET = 104;
    public static final int EUI64_OFFSET = 120;
    public static final int LBAF0_OFFSET = 128;

    @Override
    public int length() {
        return SIZE;
    }

    public long nsze() { return u64(NSZE_OFFSET); }
    public IdentifyNamespace nsze(long v) { put64(NSZE_OFFSET, v); return this; }
    public long ncap() { return u64(NCAP_OFFSET); }
    public IdentifyNamespace ncap(long v) { put64(NCAP_OFFSET, v); return this; }
    public long nuse() { return u64(NUSE_OFFSET); }
    public IdentifyNamespace nuse(long v) { put64(NUSE_OFFSET, v); return this; }
    public int nsfeat() { return u8(NSFEAT_OFFSET); }
    public IdentifyNamespace nsfeat(int v) { put8(NSFEAT_OFFSET, v); return this; }
    /** NLBAF: number of LBA formats, 0's based. */
    public int nlbaf() { return u8(NLBAF_OFFSET); }
    public IdentifyNamespace nlbaf(int v) { put8(NLBAF_OFFSET, v); return this; }
    public int flbas() { return u8(FLBAS_OFFSET); }
    public IdentifyNamespace flbas(int v) { put8(FLBAS_OFFSET, v); return this; }
    public int nmic() { return u8(NMIC_OFFSET); }
    public IdentifyNamespace nmic(int v) { put8(NMIC_OFFSET, v); return this; }
    public int mssrl() { return u16(MSSRL_OFFSET); }
    public IdentifyNamespace mssrl(int v) { put16(MSSRL_OFFSET, v); return this; }
    public long mcl() { return u32(MCL_OFFSET); }
    public IdentifyNamespace mcl(long v) { put32(MCL_OFFSET, v); return this; }
    public int msrc() { return u8(MSRC_OFFSET); }
    public IdentifyNamespace msrc(int v) { put8(MSRC_OFFSET, v); return this; }
    public int rescap() { return u8(RESCAP_OFFSET); }
    public IdentifyNamespace rescap(int v) { put8(RESCAP_OFFSET, v); return this; }
    public int dlfeat() { return u8(DLFEAT_OFFSET); }
    public IdentifyNamespace dlfeat(int v) { put8(DLFEAT_OFFSET, v); return this; }
    /** NSATTR bit 0: the namespace is write protected. */
    /** ANAGRPID: the ANA group the namespace belongs to (0: none reported). */
    public int anagrpid() { return i32(ANAGRPID_OFFSET); }
    public IdentifyNamespace anagrpid(int v) { put32(ANAGRPID_OFFSET, v); return this; }
    public int nsattr() { return u8(NSATTR_OFFSET); }
    public IdentifyNamespace nsattr(int v) { put8(NSATTR_OFFSET, v); return this; }
    public byte[] nguid() { return bytes(NGUID_OFFSET, 16); }
    public IdentifyNamespace nguid(byte[] v) { putBytes(NGUID_OFFSET, v, 16); return this; }
    public byte[] eui64() { return bytes(EUI64_OFFSET, 8); }
    public IdentifyNamespace eui64(byte[] v) { putBytes(EUI64_OFFSET, v, 8); return this; }

    /** LBADS of LBA format {@code index}: log2 of the logical block size. */
    public int lbaDataSizeLog2(int index) {
        return u8(LBAF0_OFFSET + 4 * index + 2);
    }

    public IdentifyNamespace lbaFormat(int index, int metadataSize, int lbadsLog2, int relativePerformance) {
        int at = LBAF0_OFFSET + 4 * index;
        put16(at, metadataSize);
        put8(at + 2, lbadsLog2);
        put8(at + 3, relativePerformance & 0x3);
        return this;
    }

    /** The formatted LBA size in bytes: from the LBA format that FLBAS bits 3:0 select. */
    public int blockSize() {
        return 1 << lbaDataSizeLog2(flbas() & 0xf);
    }

    @Override
    public String toString() {
        return "IdentifyNamespace{nsze=" + nsze() + " ncap=" + ncap() + " nuse=" + nuse() + " nlbaf=" + nlbaf()
                + " flbas=" + flbas() + " lbads=" + blockSize() + " nsattr=" + nsattr() + "}";
    }
}
