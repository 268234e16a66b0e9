package io.nvmeof.fabric.rdma;

/** Work completion opcodes and statuses, numbered as libibverbs' {@code ibv_wc_opcode} / {@code ibv_wc_status}. */
public final class WorkCompletion {
    public static final int SEND = 0;
    public static final int RDMA_WRITE = 1;
    public static final int RDMA_READ = 2;
    public static final int RECV = 128;

    public static final int SUCCESS = 0;
    public static final int LOC_LEN_ERR = 1;
    public static final int LOC_QP_OP_ERR = 2;
    public static final int LOC_PROT_ERR = 4;
    public static final int WR_FLUSH_ERR = 5;
    public static final int REM_INV_REQ_ERR = 9;
    public static final int REM_ACCESS_ERR = 10;
    public static final int REM_OP_ERR = 11;
    public static final int RETRY_EXC_ERR = 12;
    public static final int RNR_RETRY_EXC_ERR = 13;

    private WorkCompletion() {
    }

    public static String statusName(int status) {
        switch (status) {
            case SUCCESS: return "success";
            case LOC_LEN_ERR: return "local length error";
            case LOC_QP_OP_ERR: return "local QP operation error";
            case LOC_PROT_ERR: return "local protection error";
            case WR_FLUSH_ERR: return "work request flushed";
            case REM_INV_REQ_ERR: return "remote invalid request";
            case REM_ACCESS_ERR: return "remote access error";
            case REM_OP_ERR: return "remote operation error";
            case RETRY_EXC_ERR: return "transport retry counter exceeded";
            case RNR_RETRY_EXC_ERR: return "RNR retry counter exceeded";
            default: return "work completion status " + status;
        }
    }

    /** What a failed work request says as it ends its connection: "RDMA READ failed: remote access error (ibv_wc_status 10)". */
    public static String failure(int opcode, int status) {
        return opcodeName(opcode) + " failed: " + statusName(status) + " (ibv_wc_status " + status + ")";
    }

    public static String opcodeName(int opcode) {
        switch (opcode) {
            case SEND: return "SEND";
            case RDMA_WRITE: return "RDMA WRITE";
            case RDMA_READ: return "RDMA READ";
            case RECV: return "RECV";
            default: return "opcode " + opcode;
        }
    }
}
