package io.nvmeof.protocol;

/**
 * Identify Controller data structure, 4096 bytes (NVMe Base 2.0, 5.17.2.1, Figure 275;
 * Fabrics fields at 1792-2047 from NVMe-oF 1.1, Figure 28). Only the fields this stack
 * sets or reads have accessors; the rest stay zero.
 */
public final class IdentifyController extends Flyweight {
    public static final int SIZE = 4096;
    public static final int VID_OFFSET = 0;
    public static final int SSVID_OFFSET = 2;
    public static final int SN_OFFSET = 4;
    public static final int SN_LENGTH = 20;
    public static final int MN_OFFSET = 24;
    public static final int MN_LENGTH = 40;
    public static final int FR_OFFSET = 64;
    public static final int FR_LENGTH = 8;
    public static final int RAB_OFFSET = 72;
    public static final int IEEE_OFFSET = 73;
    public static final int CMIC_OFFSET = 76;
    public static final int MDTS_OFFSET = 77;
    public static final int CNTLID_OFFSET = 78;
    public static final int VER_OFFSET = 80;
    public static final int OAES_OFFSET = 92;
    public static final int CTRATT_OFFSET = 96;
    public static final int CNTRLTYPE_OFFSET = 111;
    public static final int OACS_OFFSET = 256;
    public static final int ACL_OFFSET = 258;
    public static final int AERL_OFFSET = 259;
    public static final int FRMW_OFFSET = 260;
    public static final int LPA_OFFSET = 261;
    public static final int ELPE_OFFSET = 262;
    public static final int NPSS_OFFSET = 263;
    public static final int KAS_OFFSET = 320;
    public static final int ANATT_OFFSET = 342;
    public static final int ANACAP_OFFSET = 343;
    public static final int ANAGRPMAX_OFFSET = 344;
    public static final int NANAGRPID_OFFSET = 348;
    public static final int CQT_OFFSET = 386;
    public static final int SQES_OFFSET = 512;
    public static final int CQES_OFFSET = 513;
    public static final int MAXCMD_OFFSET = 514;
    public static final int NN_OFFSET = 516;
    public static final int ONCS_OFFSET = 520;
    public static final int FUSES_OFFSET = 522;
    public static final int VWC_OFFSET = 525;
    public static final int ACWU_OFFSET = 532;
    /** OCFS: Copy source range descriptor formats supported (bit n: format n). */
    public static final int OCFS_OFFSET = 534;
    public static final int SGLS_OFFSET = 536;
    public static final int MNAN_OFFSET = 540;
    public static final int SUBNQN_OFFSET = 768;
    public static final int SUBNQN_LENGTH = 256;
    public static final int IOCCSZ_OFFSET = 1792;
    public static final int IORCSZ_OFFSET = 1796;
    public static final int ICDOFF_OFFSET = 1800;
    public static final int FCATT_OFFSET = 1802;
    public static final int MSDBD_OFFSET = 1803;
    /** DCTYPE, a discovery controller's type (TP8010; Base 2.0c, Figure 275 byte 1806). */
    public static final int DCTYPE_OFFSET = 1806;
    public static final int DCTYPE_NOT_REPORTED = 0;
    /** A direct discovery controller: it tells of its own subsystem's ports. */
    public static final int DCTYPE_DDC = 1;
    /** A central discovery controller: it tells of what others registered with it. */
    public static final int DCTYPE_CDC = 2;
    public static final int PSD0_OFFSET = 2048;

    /** CNTRLTYPE values (Base 2.0, Figure 275 byte 111). */
    public static final int CNTRLTYPE_IO = 1;
    public static final int CNTRLTYPE_DISCOVERY = 2;

    @Override
    public int length() {
        return SIZE;
    }

    public int vid() { return u16(VID_OFFSET); }
    public IdentifyController vid(int v) { put16(VID_OFFSET, v); return this; }
    public int ssvid() { return u16(SSVID_OFFSET); }
    public IdentifyController ssvid(int v) { put16(SSVID_OFFSET, v); return this; }
    public String serialNumber() { return ascii(SN_OFFSET, SN_LENGTH); }
    public IdentifyController serialNumber(String s) { putAscii(SN_OFFSET, SN_LENGTH, s, (byte) ' ', "serial"); return this; }
    public String modelNumber() { return ascii(MN_OFFSET, MN_LENGTH); }
    public IdentifyController modelNumber(String s) { putAscii(MN_OFFSET, MN_LENGTH, s, (byte) ' ', "model"); return this; }
    public String firmwareRevision() { return ascii(FR_OFFSET, FR_LENGTH); }
    public IdentifyController firmwareRevision(String s) { putAscii(FR_OFFSET, FR_LENGTH, s, (byte) ' ', "firmware"); return this; }
    public int rab() { return u8(RAB_OFFSET); }
    public IdentifyController rab(int v) { put8(RAB_OFFSET, v); return this; }

    /** IEEE OUI, 24 bits, little-endian on the wire. */
    public int ieeeOui() { return u16(IEEE_OFFSET) | u8(IEEE_OFFSET + 2) << 16; }
    public IdentifyController ieeeOui(int oui) {
        put16(IEEE_OFFSET, oui & 0xffff);
        put8(IEEE_OFFSET + 2, oui >>> 16);
        return this;
    }

    public int cmic() { return u8(CMIC_OFFSET); }
    public IdentifyController cmic(int v) { put8(CMIC_OFFSET, v); return this; }
    /** MDTS: max transfer is 2^MDTS minimum-size pages; 0 means no limit. */
    public int mdts() { return u8(MDTS_OFFSET); }
    public IdentifyController mdts(int v) { put8(MDTS_OFFSET, v); return this; }
    public int cntlid() { return u16(CNTLID_OFFSET); }
    public IdentifyController cntlid(int v) { put16(CNTLID_OFFSET, v); return this; }
    public int version() { return i32(VER_OFFSET); }
    public IdentifyController version(int v) { put32(VER_OFFSET, v); return this; }
    public int oaes() { return i32(OAES_OFFSET); }
    public IdentifyController oaes(int v) { put32(OAES_OFFSET, v); return this; }
    public int ctratt() { return i32(CTRATT_OFFSET); }
    public IdentifyController ctratt(int v) { put32(CTRATT_OFFSET, v); return this; }
    public int controllerType() { return u8(CNTRLTYPE_OFFSET); }
    public IdentifyController controllerType(int v) { put8(CNTRLTYPE_OFFSET, v); return this; }
    public int oacs() { return u16(OACS_OFFSET); }
    public IdentifyController oacs(int v) { put16(OACS_OFFSET, v); return this; }
    /** ACL: abort command limit, 0's based. */
    public int acl() { return u8(ACL_OFFSET); }
    public IdentifyController acl(int v) { put8(ACL_OFFSET, v); return this; }
    /** AERL: asynchronous event request limit, 0's based. */
    public int aerl() { return u8(AERL_OFFSET); }
    public IdentifyController aerl(int v) { put8(AERL_OFFSET, v); return this; }
    public int frmw() { return u8(FRMW_OFFSET); }
    public IdentifyController frmw(int v) { put8(FRMW_OFFSET, v); return this; }
    public int lpa() { return u8(LPA_OFFSET); }
    public IdentifyController lpa(int v) { put8(LPA_OFFSET, v); return this; }
    /** ELPE: error log page entries, 0's based. */
    public int elpe() { return u8(ELPE_OFFSET); }
    public IdentifyController elpe(int v) { put8(ELPE_OFFSET, v); return this; }
    /** KAS: keep alive granularity in 100 ms units; 0 means keep alive is not supported. */
    /** ANATT: seconds a namespace may stay in the ANA change state. */
    public int anatt() { return u8(ANATT_OFFSET); }
    public IdentifyController anatt(int v) { put8(ANATT_OFFSET, v); return this; }
    /** ANACAP: the ANA states the controller reports (bits 0-4), ANAGRPID fixed while attached (bit 6). */
    public int anacap() { return u8(ANACAP_OFFSET); }
    public IdentifyController anacap(int v) { put8(ANACAP_OFFSET, v); return this; }
    public int anagrpmax() { return i32(ANAGRPMAX_OFFSET); }
    public IdentifyController anagrpmax(int v) { put32(ANAGRPMAX_OFFSET, v); return this; }
    public int nanagrpid() { return i32(NANAGRPID_OFFSET); }
    public IdentifyController nanagrpid(int v) { put32(NANAGRPID_OFFSET, v); return this; }
    /**
     * CQT (NVMe 2.0 and later): the most milliseconds the controller takes to stop every command of
     * an association after it notices the association's loss; 0 means not reported.
     */
    public int cqt() { return u16(CQT_OFFSET); }
    public IdentifyController cqt(int v) { put16(CQT_OFFSET, v); return this; }
    /** MNAN: the most namespaces the NVM subsystem has (sizes a host's ANA log buffer). */
    public int mnan() { return i32(MNAN_OFFSET); }
    public IdentifyController mnan(int v) { put32(MNAN_OFFSET, v); return this; }
    public int kas() { return u16(KAS_OFFSET); }
    public IdentifyController kas(int v) { put16(KAS_OFFSET, v); return this; }
    public int sqes() { return u8(SQES_OFFSET); }
    public IdentifyController sqes(int v) { put8(SQES_OFFSET, v); return this; }
    public int cqes() { return u8(CQES_OFFSET); }
    public IdentifyController cqes(int v) { put8(CQES_OFFSET, v); return this; }
    public int maxcmd() { return u16(MAXCMD_OFFSET); }
    public IdentifyController maxcmd(int v) { put16(MAXCMD_OFFSET, v); return this; }
    /** NN: the largest namespace identifier. */
    public long nn() { return u32(NN_OFFSET); }
    public IdentifyController nn(long v) { put32(NN_OFFSET, v); return this; }
    public int ocfs() { return u16(OCFS_OFFSET); }
    public IdentifyController ocfs(int v) { put16(OCFS_OFFSET, v); return this; }
    public int oncs() { return u16(ONCS_OFFSET); }
    public IdentifyController oncs(int v) { put16(ONCS_OFFSET, v); return this; }
    public int fuses() { return u16(FUSES_OFFSET); }
    public IdentifyController fuses(int v) { put16(FUSES_OFFSET, v); return this; }
    public int vwc() { return u8(VWC_OFFSET); }
    public IdentifyController vwc(int v) { put8(VWC_OFFSET, v); return this; }
    /** ACWU: atomic compare and write unit in blocks, 0's based. */
    public int acwu() { return u16(ACWU_OFFSET); }
    public IdentifyController acwu(int v) { put16(ACWU_OFFSET, v); return this; }
    public int sgls() { return i32(SGLS_OFFSET); }
    public IdentifyController sgls(int v) { put32(SGLS_OFFSET, v); return this; }
    public String subsystemNqn() { return ascii(SUBNQN_OFFSET, SUBNQN_LENGTH); }
    public IdentifyController subsystemNqn(String s) { putAscii(SUBNQN_OFFSET, SUBNQN_LENGTH, s, (byte) 0, "subnqn"); return this; }
    /** IOCCSZ: I/O queue command capsule size in 16-byte units (SQE included). */
    public long ioccsz() { return u32(IOCCSZ_OFFSET); }
    public IdentifyController ioccsz(long v) { put32(IOCCSZ_OFFSET, v); return this; }
    /** IORCSZ: I/O queue response capsule size in 16-byte units. */
    public long iorcsz() { return u32(IORCSZ_OFFSET); }
    public IdentifyController iorcsz(long v) { put32(IORCSZ_OFFSET, v); return this; }
    /** ICDOFF: in-capsule data offset in 16-byte units after the SQE. */
    public int icdoff() { return u16(ICDOFF_OFFSET); }
    public IdentifyController icdoff(int v) { put16(ICDOFF_OFFSET, v); return this; }
    public int fcatt() { return u8(FCATT_OFFSET); }
    public IdentifyController fcatt(int v) { put8(FCATT_OFFSET, v); return this; }
    /** MSDBD: maximum SGL data block descriptors per command. */
    public int msdbd() { return u8(MSDBD_OFFSET); }
    public IdentifyController msdbd(int v) { put8(MSDBD_OFFSET, v); return this; }
    public int dctype() { return u8(DCTYPE_OFFSET); }
    public IdentifyController dctype(int v) { put8(DCTYPE_OFFSET, v); return this; }

    @Override
    public String toString() {
        return "IdentifyController{sn=" + serialNumber() + " mn=" + modelNumber() + " fr=" + firmwareRevision()
                + " cntlid=" + cntlid() + " ver=" + Registers.versionString(version()) + " mdts=" + mdts()
                + " nn=" + nn() + " subnqn=" + subsystemNqn() + " ioccsz=" + ioccsz() + "}";
    }
}
