package io.nvmeof.nbd;

/** The NBD protocol's numbers (the NBD project's doc/proto.md): fixed newstyle negotiation and transmission. */
final class NbdProtocol {
    private NbdProtocol() {
    }

    // ---- handshake ----
    static final long NBDMAGIC = 0x4e42444d41474943L; // "NBDMAGIC"
    static final long IHAVEOPT = 0x49484156454f5054L; // "IHAVEOPT"
    static final long OPTION_REPLY_MAGIC = 0x3e889045565a9L;
    static final int FLAG_FIXED_NEWSTYLE = 1;
    static final int FLAG_NO_ZEROES = 1 << 1;
    static final int CLIENT_FIXED_NEWSTYLE = 1;
    static final int CLIENT_NO_ZEROES = 1 << 1;

    static final int OPT_EXPORT_NAME = 1;
    static final int OPT_ABORT = 2;
    static final int OPT_LIST = 3;
    static final int OPT_STARTTLS = 5;
    static final int OPT_INFO = 6;
    static final int OPT_GO = 7;
    static final int OPT_STRUCTURED_REPLY = 8;
    static final int OPT_LIST_META_CONTEXT = 9;
    static final int OPT_SET_META_CONTEXT = 10;

    static final int REP_ACK = 1;
    static final int REP_SERVER = 2;
    static final int REP_INFO = 3;
    static final int REP_ERR_UNSUP = 0x80000001;
    static final int REP_ERR_INVALID = 0x80000003;
    static final int REP_ERR_UNKNOWN = 0x80000006;
    static final int REP_ERR_SHUTDOWN = 0x80000007;

    static final int INFO_EXPORT = 0;
    static final int INFO_NAME = 1;
    static final int INFO_DESCRIPTION = 2;
    static final int INFO_BLOCK_SIZE = 3;

    // ---- transmission flags ----
    static final int TF_HAS_FLAGS = 1;
    static final int TF_READ_ONLY = 1 << 1;
    static final int TF_SEND_FLUSH = 1 << 2;
    static final int TF_SEND_FUA = 1 << 3;
    static final int TF_SEND_TRIM = 1 << 5;
    static final int TF_SEND_WRITE_ZEROES = 1 << 6;
    static final int TF_SEND_DF = 1 << 7;
    static final int TF_CAN_MULTI_CONN = 1 << 8;

    // ---- requests ----
    static final int REQUEST_MAGIC = 0x25609513;
    static final int REQUEST_HEADER = 28;
    static final int CMD_READ = 0;
    static final int CMD_WRITE = 1;
    static final int CMD_DISC = 2;
    static final int CMD_FLUSH = 3;
    static final int CMD_TRIM = 4;
    static final int CMD_WRITE_ZEROES = 6;
    static final int CMD_FLAG_FUA = 1;
    static final int CMD_FLAG_NO_HOLE = 1 << 1;
    static final int CMD_FLAG_DF = 1 << 2;
    static final int CMD_FLAG_FAST_ZERO = 1 << 4;

    // ---- replies ----
    static final int SIMPLE_REPLY_MAGIC = 0x67446698;
    static final int SIMPLE_REPLY_HEADER = 16;
    static final int STRUCTURED_REPLY_MAGIC = 0x668e33ef;
    static final int STRUCTURED_REPLY_HEADER = 20;
    static final int REPLY_FLAG_DONE = 1;
    static final int REPLY_TYPE_NONE = 0;
    static final int REPLY_TYPE_OFFSET_DATA = 1;
    static final int REPLY_TYPE_ERROR = 0x8001;

    // ---- errors (Linux errno values, as the protocol fixes them) ----
    static final int EPERM = 1;
    static final int EIO = 5;
    static final int EINVAL = 22;
    static final int ENOSPC = 28;

    /** The longest option payload taken (names are at most 4096 bytes): a longer one ends the connection. */
    static final int MAX_OPTION = 64 * 1024;
    /** The most bytes one request may move: larger reads and writes get EOVERFLOW/EINVAL. */
    static final int MAX_REQUEST = 32 << 20;
}
