package io.nvmeof.protocol;

import java.util.HashMap;
import java.util.Map;

/**
 * A completion status: Status Code Type, Status Code, More and Do Not Retry
 * (NVMe Base 2.0, 4.2.3 "Status Field Definition"). Immutable and small; the common
 * values are constants so the data path never allocates one.
 */
public final class Status {
    /** Status Code Types (Base 2.0, Figure 100). */
    public static final int SCT_GENERIC = 0x0;
    public static final int SCT_COMMAND_SPECIFIC = 0x1;
    public static final int SCT_MEDIA = 0x2;
    public static final int SCT_PATH = 0x3;
    public static final int SCT_VENDOR = 0x7;

    private static final Map<Integer, String> NAMES = new HashMap<>();
    private static final Map<Integer, Status> CANONICAL = new HashMap<>();

    // Generic command status (Base 2.0, Figure 101 and the NVM command set's 0x80+ codes).
    public static final Status SUCCESS = define(SCT_GENERIC, 0x00, "Successful Completion", false);
    public static final Status INVALID_OPCODE = define(SCT_GENERIC, 0x01, "Invalid Command Opcode", true);
    public static final Status INVALID_FIELD = define(SCT_GENERIC, 0x02, "Invalid Field in Command", true);
    public static final Status COMMAND_ID_CONFLICT = define(SCT_GENERIC, 0x03, "Command ID Conflict", true);
    public static final Status DATA_TRANSFER_ERROR = define(SCT_GENERIC, 0x04, "Data Transfer Error", false);
    public static final Status POWER_LOSS_ABORT = define(SCT_GENERIC, 0x05, "Commands Aborted due to Power Loss Notification", false);
    public static final Status INTERNAL_ERROR = define(SCT_GENERIC, 0x06, "Internal Error", false);
    public static final Status ABORT_REQUESTED = define(SCT_GENERIC, 0x07, "Command Abort Requested", false);
    public static final Status ABORTED_SQ_DELETION = define(SCT_GENERIC, 0x08, "Command Aborted due to SQ Deletion", false);
    public static final Status ABORTED_FUSED_FAILED = define(SCT_GENERIC, 0x09, "Command Aborted due to Failed Fused Command", false);
    public static final Status ABORTED_FUSED_MISSING = define(SCT_GENERIC, 0x0A, "Command Aborted due to Missing Fused Command", false);
    public static final Status INVALID_NAMESPACE = define(SCT_GENERIC, 0x0B, "Invalid Namespace or Format", true);
    public static final Status COMMAND_SEQUENCE_ERROR = define(SCT_GENERIC, 0x0C, "Command Sequence Error", true);
    public static final Status INVALID_SGL_SEGMENT = define(SCT_GENERIC, 0x0D, "Invalid SGL Segment Descriptor", true);
    public static final Status INVALID_SGL_COUNT = define(SCT_GENERIC, 0x0E, "Invalid Number of SGL Descriptors", true);
    public static final Status DATA_SGL_LENGTH_INVALID = define(SCT_GENERIC, 0x0F, "Data SGL Length Invalid", true);
    public static final Status METADATA_SGL_LENGTH_INVALID = define(SCT_GENERIC, 0x10, "Metadata SGL Length Invalid", true);
    public static final Status SGL_DESCRIPTOR_TYPE_INVALID = define(SCT_GENERIC, 0x11, "SGL Descriptor Type Invalid", true);
    public static final Status SGL_OFFSET_INVALID = define(SCT_GENERIC, 0x16, "SGL Offset Invalid", true);
    public static final Status HOST_ID_INCONSISTENT = define(SCT_GENERIC, 0x18, "Host Identifier Inconsistent Format", true);
    public static final Status KEEP_ALIVE_EXPIRED = define(SCT_GENERIC, 0x19, "Keep Alive Timer Expired", false);
    public static final Status KEEP_ALIVE_INVALID = define(SCT_GENERIC, 0x1A, "Keep Alive Timeout Invalid", true);
    public static final Status PREEMPT_ABORTED = define(SCT_GENERIC, 0x1B, "Command Aborted due to Preempt and Abort", true);
    public static final Status NAMESPACE_WRITE_PROTECTED = define(SCT_GENERIC, 0x20, "Namespace is Write Protected", true);
    public static final Status COMMAND_INTERRUPTED = define(SCT_GENERIC, 0x21, "Command Interrupted", false);
    public static final Status TRANSIENT_TRANSPORT_ERROR = define(SCT_GENERIC, 0x22, "Transient Transport Error", false);
    public static final Status LBA_OUT_OF_RANGE = define(SCT_GENERIC, 0x80, "LBA Out of Range", true);
    public static final Status CAPACITY_EXCEEDED = define(SCT_GENERIC, 0x81, "Capacity Exceeded", true);
    public static final Status NAMESPACE_NOT_READY = define(SCT_GENERIC, 0x82, "Namespace Not Ready", false);
    public static final Status RESERVATION_CONFLICT = define(SCT_GENERIC, 0x83, "Reservation Conflict", true);

    // Command specific status (Base 2.0, Figure 102; NVMe-oF 1.1, Figure 30 for Fabrics commands).
    // Codes 80h-83h mean one thing for Connect and another for NVM commands (NVM Command Set
    // 1.0, Figure 18); a status carries no command, so both names are given.
    public static final Status INVALID_QUEUE_ID = define(SCT_COMMAND_SPECIFIC, 0x01, "Invalid Queue Identifier", true);
    public static final Status INVALID_QUEUE_SIZE = define(SCT_COMMAND_SPECIFIC, 0x02, "Invalid Queue Size", true);
    public static final Status ABORT_LIMIT_EXCEEDED = define(SCT_COMMAND_SPECIFIC, 0x03, "Abort Command Limit Exceeded", false);
    public static final Status AER_LIMIT_EXCEEDED = define(SCT_COMMAND_SPECIFIC, 0x05, "Asynchronous Event Request Limit Exceeded", false);
    public static final Status INVALID_LOG_PAGE = define(SCT_COMMAND_SPECIFIC, 0x09, "Invalid Log Page", true);
    public static final Status FEATURE_NOT_SAVEABLE = define(SCT_COMMAND_SPECIFIC, 0x0D, "Feature Identifier Not Saveable", true);
    public static final Status FEATURE_NOT_CHANGEABLE = define(SCT_COMMAND_SPECIFIC, 0x0E, "Feature Not Changeable", true);
    public static final Status CONNECT_INCOMPATIBLE_FORMAT = define(SCT_COMMAND_SPECIFIC, 0x80, "Connect Incompatible Format / Conflicting Attributes", true);
    public static final Status CONNECT_CONTROLLER_BUSY = define(SCT_COMMAND_SPECIFIC, 0x81, "Connect Controller Busy / Invalid Protection Information", false);
    public static final Status CONNECT_INVALID_PARAMETERS = define(SCT_COMMAND_SPECIFIC, 0x82, "Connect Invalid Parameters / Attempted Write to Read Only Range", true);
    public static final Status CONNECT_RESTART_DISCOVERY = define(SCT_COMMAND_SPECIFIC, 0x83, "Connect Restart Discovery / Command Size Limit Exceeded", true);
    /** SCT 1h, 83h for the Copy command: a range, the range count or the total past MSSRL, MSRC or MCL. */
    public static final Status COMMAND_SIZE_LIMIT_EXCEEDED = CONNECT_RESTART_DISCOVERY;
    public static final Status CONNECT_INVALID_HOST = define(SCT_COMMAND_SPECIFIC, 0x84, "Connect Invalid Host", true);
    public static final Status AUTHENTICATION_REQUIRED = define(SCT_COMMAND_SPECIFIC, 0x91, "Authentication Required", true);
    /** Discovery Information Management (TP8010): the data is malformed or names what cannot be registered. */
    public static final Status INVALID_DISCOVERY_INFO = define(SCT_COMMAND_SPECIFIC, 0x2F, "Invalid Discovery Information", true);
    /** Discovery Information Management (TP8010): the discovery controller has no room for the registration. */
    public static final Status INSUFFICIENT_DISCOVERY_RESOURCES = define(SCT_COMMAND_SPECIFIC, 0x32,
            "Insufficient Discovery Resources", true);

    // Media and data integrity errors (Base 2.0, Figure 103).
    public static final Status WRITE_FAULT = define(SCT_MEDIA, 0x80, "Write Fault", false);
    public static final Status UNRECOVERED_READ_ERROR = define(SCT_MEDIA, 0x81, "Unrecovered Read Error", false);
    public static final Status COMPARE_FAILURE = define(SCT_MEDIA, 0x85, "Compare Failure", true);
    public static final Status ACCESS_DENIED = define(SCT_MEDIA, 0x86, "Access Denied", true);
    // Path related (Base 2.0, Figure 104): the path cannot serve the command now, another may
    public static final Status INTERNAL_PATH_ERROR = define(SCT_PATH, 0x00, "Internal Path Error", false);
    public static final Status ANA_PERSISTENT_LOSS = define(SCT_PATH, 0x01, "Asymmetric Access Persistent Loss", false);
    public static final Status ANA_INACCESSIBLE = define(SCT_PATH, 0x02, "Asymmetric Access Inaccessible", false);
    public static final Status ANA_TRANSITION = define(SCT_PATH, 0x03, "Asymmetric Access Transition", false);

    private final int sct;
    private final int sc;
    private final boolean more;
    private final boolean dnr;

    private Status(int sct, int sc, boolean more, boolean dnr) {
        this.sct = sct;
        this.sc = sc;
        this.more = more;
        this.dnr = dnr;
    }

    private static Status define(int sct, int sc, String name, boolean dnr) {
        Status s = new Status(sct, sc, false, dnr);
        NAMES.put(key(sct, sc), name);
        CANONICAL.put(s.field(), s);
        return s;
    }

    private static int key(int sct, int sc) {
        return sct << 8 | sc;
    }

    /** A status with the given code type and code; the common ones are shared constants. */
    public static Status of(int sct, int sc, boolean more, boolean dnr) {
        if (sct < 0 || sct > 7 || sc < 0 || sc > 0xff) {
            throw new IllegalArgumentException("status out of range: sct=" + sct + " sc=" + sc);
        }
        Status s = CANONICAL.get(encode(sct, sc, more, dnr));
        return s != null ? s : new Status(sct, sc, more, dnr);
    }

    /**
     * Decodes the 15 status bits of a CQE's Status field as it sits in CQE bytes 14-15
     * (bit 0, the phase tag, is ignored).
     */
    public static Status fromField(int field) {
        int sc = (field >>> 1) & 0xff;
        int sct = (field >>> 9) & 0x7;
        boolean more = (field & (1 << 14)) != 0;
        boolean dnr = (field & (1 << 15)) != 0;
        Status s = CANONICAL.get(field & 0xfffe);
        return s != null ? s : new Status(sct, sc, more, dnr);
    }

    private static int encode(int sct, int sc, boolean more, boolean dnr) {
        return (sc << 1) | (sct << 9) | (more ? 1 << 14 : 0) | (dnr ? 1 << 15 : 0);
    }

    /** The 16-bit CQE Status field with phase tag 0. */
    public int field() {
        return encode(sct, sc, more, dnr);
    }

    public int sct() {
        return sct;
    }

    public int sc() {
        return sc;
    }

    public boolean more() {
        return more;
    }

    public boolean dnr() {
        return dnr;
    }

    public boolean isSuccess() {
        return sct == SCT_GENERIC && sc == 0;
    }

    /** This status with DNR set or cleared. */
    public Status withDnr(boolean doNotRetry) {
        return doNotRetry == dnr ? this : of(sct, sc, more, doNotRetry);
    }

    /** The spec's name for this status, or a generic description. */
    public String name() {
        String n = NAMES.get(key(sct, sc));
        return n != null ? n : String.format("Unknown Status (SCT %#x, SC %#04x)", sct, sc);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Status s && s.field() == field();
    }

    @Override
    public int hashCode() {
        return field();
    }

    @Override
    public String toString() {
        return String.format("%s (SCT %#x SC %#04x%s%s)", name(), sct, sc, more ? " M" : "", dnr ? " DNR" : "");
    }

    /**
     * As {@link #toString()}, with the name a command-specific code has for the command that got
     * it: codes 80h to 83h of SCT 1 mean one thing for a Fabrics command (Connect Invalid
     * Parameters) and another for the others (Attempted Write to Read Only Range).
     */
    public String toString(boolean fabricsCommand) {
        String n = name();
        int slash = n.indexOf(" / ");
        if (sct == SCT_COMMAND_SPECIFIC && slash > 0) {
            n = fabricsCommand ? n.substring(0, slash) : n.substring(slash + 3);
        }
        return String.format("%s (SCT %#x SC %#04x%s%s)", n, sct, sc, more ? " M" : "", dnr ? " DNR" : "");
    }
}
