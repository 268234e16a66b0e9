package io.nvmeof.protocol;

/** One Error Information log entry (NVMe Base 2.0, 5.16.1.2, Figure 206), 64 bytes. */
public final class ErrorLogEntry extends Flyweight {
    public static final int SIZE = 64;
    public static final int ERROR_COUNT_OFFSET = 0;
    public static final int SQID_OFFSET = 8;
    public static final int CID_OFFSET = 10;
    public static final int STATUS_OFFSET = 12;
    public static final int PARAMETER_LOCATION_OFFSET = 14;
    public static final int LBA_OFFSET = 16;
    public static final int NSID_OFFSET = 24;
    public static final int TRTYPE_OFFSET = 29;
    /** Parameter Error Location: not specific to a field. */
    public static final int LOCATION_NONE = 0xffff;

    @Override
    public int length() {
        return SIZE;
    }

    /** The controller's error count when this entry was made (unique, increasing; 0: an empty entry). */
    public long errorCount() {
        return u64(ERROR_COUNT_OFFSET);
    }

    public ErrorLogEntry errorCount(long n) {
        put64(ERROR_COUNT_OFFSET, n);
        return this;
    }

    public int sqid() {
        return u16(SQID_OFFSET);
    }

    public int cid() {
        return u16(CID_OFFSET);
    }

    /** The status field as in the CQE's DW3 bits 31:17 (without the phase tag). */
    public int statusField() {
        return u16(STATUS_OFFSET);
    }

    public int parameterLocation() {
        return u16(PARAMETER_LOCATION_OFFSET);
    }

    public long lba() {
        return u64(LBA_OFFSET);
    }

    public int nsid() {
        return i32(NSID_OFFSET);
    }

    public int trtype() {
        return u8(TRTYPE_OFFSET);
    }

    /** The command that failed: queue, command, status, where (LBA for I/O), namespace, transport. */
    public ErrorLogEntry command(int sqid, int cid, int statusField, long lba, int nsid, int trtype) {
        put16(SQID_OFFSET, sqid);
        put16(CID_OFFSET, cid);
        put16(STATUS_OFFSET, statusField);
        put16(PARAMETER_LOCATION_OFFSET, LOCATION_NONE);
        put64(LBA_OFFSET, lba);
        put32(NSID_OFFSET, nsid & 0xffffffffL);
        put8(TRTYPE_OFFSET, trtype);
        return this;
    }
}
