package io.nvmeof.protocol;

/**
 * Controller properties reached through Fabrics Property Get/Set (NVMe Base 2.0, 3.1.3,
 * Figure 33): offsets, sizes and the fields of CAP, VS, CC and CSTS.
 */
public final class Registers {
    public static final int CAP = 0x00;
    public static final int VS = 0x08;
    public static final int CC = 0x14;
    public static final int CSTS = 0x1C;
    public static final int NSSR = 0x20;

    /** NVMe 1.3: MJR 1, MNR 3 (VS bits 31:16 / 15:8). */
    public static final int VERSION_1_3 = 0x00010300;
    /** NVMe 1.4. */
    public static final int VERSION_1_4 = 0x00010400;

    private Registers() {
    }

    /** Size in bytes of the property at {@code offset}, or -1 if none starts there. */
    public static int sizeOf(long offset) {
        if (offset == CAP) {
            return 8;
        }
        if (offset == VS || offset == CC || offset == CSTS || offset == NSSR) {
            return 4;
        }
        return -1;
    }

    // ---- CAP (Base 2.0, Figure 36) ----

    /**
     * Builds CAP. {@code maxQueueEntries} is 1-based (stored 0's based in MQES);
     * {@code timeoutHalfSeconds} is CAP.TO in 500 ms units.
     */
    public static long cap(int maxQueueEntries, int timeoutHalfSeconds) {
        long v = (maxQueueEntries - 1) & 0xffffL;       // MQES 15:0
        v |= 1L << 16;                                  // CQR: queues must be contiguous
        v |= (long) (timeoutHalfSeconds & 0xff) << 24;  // TO 31:24
        v |= 1L << 37;                                  // CSS bit 0: NVM command set
        // DSTRD 0, MPSMIN 0 and MPSMAX 0 (4 KiB pages)
        return v;
    }

    /** CAP.MQES + 1: the largest queue size the controller supports. */
    public static int capMaxQueueEntries(long cap) {
        return (int) (cap & 0xffff) + 1;
    }

    public static int capTimeoutMillis(long cap) {
        return (int) ((cap >>> 24) & 0xff) * 500;
    }

    public static int capMpsMin(long cap) {
        return (int) ((cap >>> 48) & 0xf);
    }

    // ---- CC (Base 2.0, Figure 41) ----

    public static final int CC_EN = 1;
    public static final int CC_SHN_SHIFT = 14;
    public static final int CC_SHN_MASK = 0x3 << CC_SHN_SHIFT;
    public static final int CC_SHN_NORMAL = 1 << CC_SHN_SHIFT;
    public static final int CC_SHN_ABRUPT = 2 << CC_SHN_SHIFT;

    /** CC for enabling: NVM command set, 4 KiB pages, round robin, SQE 2^6 and CQE 2^4 bytes. */
    public static int ccEnable() {
        return CC_EN | ccIosqes(6) | ccIocqes(4);
    }

    public static int ccIosqes(int log2) {
        return (log2 & 0xf) << 16;
    }

    public static int ccIocqes(int log2) {
        return (log2 & 0xf) << 20;
    }

    public static boolean ccEnabled(int cc) {
        return (cc & CC_EN) != 0;
    }

    public static int ccCss(int cc) {
        return (cc >>> 4) & 0x7;
    }

    public static int ccMps(int cc) {
        return (cc >>> 7) & 0xf;
    }

    public static int ccShn(int cc) {
        return (cc >>> CC_SHN_SHIFT) & 0x3;
    }

    public static int ccIosqesLog2(int cc) {
        return (cc >>> 16) & 0xf;
    }

    public static int ccIocqesLog2(int cc) {
        return (cc >>> 20) & 0xf;
    }

    // ---- CSTS (Base 2.0, Figure 42) ----

    public static final int CSTS_RDY = 1;
    public static final int CSTS_CFS = 1 << 1;
    public static final int CSTS_SHST_SHIFT = 2;
    public static final int CSTS_SHST_MASK = 0x3 << CSTS_SHST_SHIFT;
    public static final int CSTS_SHST_OCCURRING = 1 << CSTS_SHST_SHIFT;
    public static final int CSTS_SHST_COMPLETE = 2 << CSTS_SHST_SHIFT;

    public static boolean cstsReady(int csts) {
        return (csts & CSTS_RDY) != 0;
    }

    public static int cstsShst(int csts) {
        return (csts >>> CSTS_SHST_SHIFT) & 0x3;
    }

    public static String versionString(int vs) {
        int ter = vs & 0xff;
        return (vs >>> 16) + "." + ((vs >>> 8) & 0xff) + (ter != 0 ? "." + ter : "");
    }
}
