package io.nvmeof.protocol;

/**
 * The fields of the reservation commands and their data (NVMe Base 2.x, 7.x and 8.19), shared by
 * the target and the initiator: Register's CDW10 is RREGA (bits 2:0), IEKEY (bit 3) and CPTPL
 * (bits 31:30) with 16 bytes of keys (current, new); Acquire's is RACQA, IEKEY and RTYPE (bits
 * 15:8) with 16 bytes (current, preempt); Release's is RRELA, IEKEY and RTYPE with 8 bytes
 * (current); Report's CDW10 is NUMD and CDW11 bit 0 EDS. The extended report is a 64-byte header
 * (generation at 0, RTYPE at 4, REGCTL at 5, PTPLS at 9) and a 64-byte entry per registrant
 * (controller ID at 0, RCSTS at 2, key at 8, the 128-bit Host Identifier at 16).
 */
public final class Reservation {
    private Reservation() {
    }

    /** Reservation types (RTYPE). */
    public static final int WRITE_EXCLUSIVE = 1;
    public static final int EXCLUSIVE_ACCESS = 2;
    public static final int WRITE_EXCLUSIVE_REGISTRANTS_ONLY = 3;
    public static final int EXCLUSIVE_ACCESS_REGISTRANTS_ONLY = 4;
    public static final int WRITE_EXCLUSIVE_ALL_REGISTRANTS = 5;
    public static final int EXCLUSIVE_ACCESS_ALL_REGISTRANTS = 6;

    /** Register actions (RREGA), Acquire actions (RACQA), Release actions (RRELA). */
    public static final int REGISTER = 0;
    public static final int UNREGISTER = 1;
    public static final int REPLACE = 2;
    public static final int ACQUIRE = 0;
    public static final int PREEMPT = 1;
    public static final int PREEMPT_AND_ABORT = 2;
    public static final int RELEASE = 0;
    public static final int CLEAR = 1;
    /** IEKEY: ignore the current key (CDW10 bit 3). */
    public static final int IEKEY = 1 << 3;

    /** Change Persist Through Power Loss State (CPTPL) of Register: no change, (01b reserved), clear, set. */
    public static final int CPTPL_NO_CHANGE = 0;
    public static final int CPTPL_CLEAR = 2;
    public static final int CPTPL_SET = 3;

    /** Reservation Notification log page types. */
    public static final int REGISTRATION_PREEMPTED = 1;
    public static final int RESERVATION_RELEASED = 2;
    public static final int RESERVATION_PREEMPTED = 3;

    /** Report's extended data structure: header and entry sizes. */
    public static final int EXTENDED_HEADER = 64;
    public static final int EXTENDED_ENTRY = 64;

    /** CDW10 of Register, Acquire or Release. */
    public static int cdw10(int action, boolean iekey, int typeOrCptpl, boolean register) {
        return action | (iekey ? IEKEY : 0) | (register ? typeOrCptpl << 30 : typeOrCptpl << 8);
    }
}
