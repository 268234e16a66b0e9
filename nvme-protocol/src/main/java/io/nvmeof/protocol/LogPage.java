package io.nvmeof.protocol;

/**
 * Log page identifiers (NVMe Base 2.0, Figure 202; NVMe-oF 1.1, 5.3) and the Get Log Page
 * fields of CDW10-13: LID 7:0, LSP 14:8, RAE 15, NUMDL 31:16; NUMDU CDW11 15:0;
 * LPOL/LPOU CDW12/13 (byte offset).
 */
public final class LogPage {
    public static final int ERROR_INFORMATION = 0x01;
    public static final int SMART_HEALTH = 0x02;
    public static final int FIRMWARE_SLOT = 0x03;
    public static final int CHANGED_NAMESPACE_LIST = 0x04;
    public static final int COMMANDS_SUPPORTED_AND_EFFECTS = 0x05;
    /** Asymmetric Namespace Access (Base 2.0, 5.16.1.12). */
    public static final int ANA = 0x0C;
    public static final int DISCOVERY = 0x70;
    /** Reservation Notification (Base 2.x, 5.16.1.x): one 64-byte entry per read. */
    public static final int RESERVATION_NOTIFICATION = 0x80;
    public static final int RESERVATION_NOTIFICATION_SIZE = 64;

    /** Error Information entries are 64 bytes; SMART and firmware slot pages 512; the others 4096. */
    public static final int ERROR_ENTRY_SIZE = 64;
    public static final int SMART_SIZE = 512;
    public static final int FIRMWARE_SLOT_SIZE = 512;
    public static final int CHANGED_NAMESPACE_LIST_SIZE = 4096;
    public static final int COMMANDS_EFFECTS_SIZE = 4096;

    private LogPage() {
    }

    public static int lid(SubmissionQueueEntry sqe) {
        return sqe.cdw10() & 0xff;
    }

    /** RAE: retain asynchronous event (the log read does not clear the event). */
    public static boolean retainAsyncEvent(SubmissionQueueEntry sqe) {
        return (sqe.cdw10() & (1 << 15)) != 0;
    }

    /** LSP, the log specific field (CDW10 bits 11:8); for the ANA log bit 0 is RGO, return groups only. */
    public static int lsp(SubmissionQueueEntry sqe) {
        return (sqe.cdw10() >>> 8) & 0xf;
    }

    /** Bytes requested: (NUMDU:NUMDL + 1) dwords. */
    public static long length(SubmissionQueueEntry sqe) {
        long numd = (sqe.cdw11() & 0xffffL) << 16 | (sqe.cdw10() >>> 16);
        return (numd + 1) * 4;
    }

    /** Byte offset into the log page. */
    public static long offset(SubmissionQueueEntry sqe) {
        return sqe.cdw(12) | sqe.cdw(13) << 32;
    }

    /** Fills CDW10-13 of a Get Log Page for {@code length} bytes (a multiple of 4) at {@code offset}. */
    public static void request(SubmissionQueueEntry sqe, int lid, long offset, long length, boolean rae) {
        long numd = length / 4 - 1;
        sqe.cdw(10, (lid & 0xff) | (rae ? 1 << 15 : 0) | (numd & 0xffff) << 16);
        sqe.cdw(11, numd >>> 16 & 0xffff);
        sqe.cdw(12, offset & 0xffffffffL);
        sqe.cdw(13, offset >>> 32);
    }
}
