package io.nvmeof.protocol;

/**
 * The 16-byte completion queue entry (NVMe Base 2.0, 4.2.2, Figure 97).
 *
 * <pre>
 * 00-03 DW0 (command specific)   04-07 DW1 (command specific)
 * 08-09 SQHD   10-11 SQID   12-13 CID   14-15 Status (bit 0 phase tag)
 * </pre>
 */
public final class CompletionQueueEntry extends Flyweight {
    public static final int SIZE = 16;
    public static final int DW0_OFFSET = 0;
    public static final int DW1_OFFSET = 4;
    public static final int SQHD_OFFSET = 8;
    public static final int SQID_OFFSET = 10;
    public static final int CID_OFFSET = 12;
    public static final int STATUS_OFFSET = 14;

    @Override
    public int length() {
        return SIZE;
    }

    public int dw0() {
        return i32(DW0_OFFSET);
    }

    public CompletionQueueEntry dw0(int v) {
        put32(DW0_OFFSET, v);
        return this;
    }

    public int dw1() {
        return i32(DW1_OFFSET);
    }

    /** DW0 and DW1 as one 64-bit value (Property Get returns 8-byte properties here). */
    public long result() {
        return u64(DW0_OFFSET);
    }

    public CompletionQueueEntry result(long v) {
        put64(DW0_OFFSET, v);
        return this;
    }

    public int sqhd() {
        return u16(SQHD_OFFSET);
    }

    public CompletionQueueEntry sqhd(int v) {
        put16(SQHD_OFFSET, v);
        return this;
    }

    public int sqid() {
        return u16(SQID_OFFSET);
    }

    public CompletionQueueEntry sqid(int v) {
        put16(SQID_OFFSET, v);
        return this;
    }

    public int cid() {
        return u16(CID_OFFSET);
    }

    public CompletionQueueEntry cid(int v) {
        put16(CID_OFFSET, v);
        return this;
    }

    /** The raw 16-bit Status field including the phase tag. */
    public int statusField() {
        return u16(STATUS_OFFSET);
    }

    public Status status() {
        return Status.fromField(statusField());
    }

    public CompletionQueueEntry status(Status s) {
        put16(STATUS_OFFSET, s.field());
        return this;
    }

    @Override
    public String toString() {
        return "CQE{dw0=" + Integer.toHexString(dw0()) + " dw1=" + Integer.toHexString(dw1()) + " sqhd=" + sqhd()
                + " sqid=" + sqid() + " cid=" + cid() + " status=" + status() + "}";
    }
}
