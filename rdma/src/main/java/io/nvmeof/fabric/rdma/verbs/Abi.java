package io.nvmeof.fabric.rdma.verbs;

/**
 * The rdma-core ABI this provider speaks: struct offsets and enum values of
 * {@code <infiniband/verbs.h>} and {@code <rdma/rdma_cma.h>} as compiled for x86_64 (rdma-core
 * 44, Debian 12; measured with {@code offsetof}/{@code sizeof}). These structs are part of the
 * libraries' stable ABI (libibverbs.so.1 / librdmacm.so.1), which is why reading them from Java
 * is sound; {@code AbiTest} pins every number.
 */
final class Abi {
    private Abi() {
    }

    // struct ibv_context (verbs.h)
    static final int CONTEXT_DEVICE = 0;                // struct ibv_device *
    static final int CONTEXT_OPS = 8;                   // struct ibv_context_ops, inline
    static final int CONTEXT_ASYNC_FD = 268;            // int: the fd ibv_get_async_event reads
    // struct ibv_context_ops: the fast-path entries the static inline verbs call through
    static final int OPS_POLL_CQ = 88;                  // int (*)(struct ibv_cq *, int, struct ibv_wc *)
    static final int OPS_REQ_NOTIFY_CQ = 96;            // int (*)(struct ibv_cq *, int)
    static final int OPS_POST_SEND = 200;               // int (*)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **)
    static final int OPS_POST_RECV = 208;               // int (*)(struct ibv_qp *, struct ibv_recv_wr *, struct ibv_recv_wr **)
    // struct ibv_async_event, 16 bytes
    static final int ASYNC_EVENT_SIZE = 16;
    static final int ASYNC_EVENT_ELEMENT = 0;           // union: struct ibv_cq * / struct ibv_qp * / int port_num
    static final int ASYNC_EVENT_TYPE = 8;              // enum ibv_event_type
    // enum ibv_event_type
    static final int EVENT_CQ_ERR = 0;
    static final int EVENT_QP_FATAL = 1;
    static final int EVENT_QP_REQ_ERR = 2;
    static final int EVENT_QP_ACCESS_ERR = 3;
    static final int EVENT_COMM_EST = 4;
    static final int EVENT_SQ_DRAINED = 5;
    static final int EVENT_PATH_MIG = 6;
    static final int EVENT_PATH_MIG_ERR = 7;
    static final int EVENT_DEVICE_FATAL = 8;
    static final int EVENT_QP_LAST_WQE_REACHED = 16;

    // struct ibv_device
    static final int DEVICE_NAME = 24;                  // char name[64]

    // struct ibv_send_wr, 128 bytes
    static final int SEND_WR_SIZE = 128;
    static final int SEND_WR_ID = 0;                    // u64
    static final int SEND_WR_NEXT = 8;                  // struct ibv_send_wr *
    static final int SEND_WR_SG_LIST = 16;              // struct ibv_sge *
    static final int SEND_WR_NUM_SGE = 24;              // int
    static final int SEND_WR_OPCODE = 28;               // enum ibv_wr_opcode
    static final int SEND_WR_FLAGS = 32;                // unsigned int send_flags
    static final int SEND_WR_INVALIDATE_RKEY = 36;      // union { __be32 imm_data; u32 invalidate_rkey }
    static final int SEND_WR_REMOTE_ADDR = 40;          // wr.rdma.remote_addr, u64
    static final int SEND_WR_RKEY = 48;                 // wr.rdma.rkey, u32

    // struct ibv_recv_wr, 32 bytes
    static final int RECV_WR_SIZE = 32;
    static final int RECV_WR_ID = 0;
    static final int RECV_WR_NEXT = 8;
    static final int RECV_WR_SG_LIST = 16;
    static final int RECV_WR_NUM_SGE = 24;

    // struct ibv_sge, 16 bytes
    static final int SGE_SIZE = 16;
    static final int SGE_ADDR = 0;                      // u64
    static final int SGE_LENGTH = 8;                    // u32
    static final int SGE_LKEY = 12;                     // u32

    // struct ibv_wc, 48 bytes
    static final int WC_SIZE = 48;
    static final int WC_WR_ID = 0;                      // u64
    static final int WC_STATUS = 8;                     // enum ibv_wc_status
    static final int WC_OPCODE = 12;                    // enum ibv_wc_opcode
    static final int WC_VENDOR_ERR = 16;                // u32
    static final int WC_BYTE_LEN = 20;                  // u32
    static final int WC_INVALIDATED_RKEY = 24;          // union { __be32 imm_data; u32 invalidated_rkey }
    static final int WC_QP_NUM = 28;
    static final int WC_FLAGS = 36;                     // unsigned int wc_flags

    // struct ibv_mr
    static final int MR_LKEY = 36;
    static final int MR_RKEY = 40;

    // struct ibv_qp
    static final int QP_NUM = 52;

    // struct ibv_qp_init_attr, 64 bytes
    static final int QP_INIT_ATTR_SIZE = 64;
    static final int QP_INIT_SEND_CQ = 8;
    static final int QP_INIT_RECV_CQ = 16;
    static final int QP_INIT_MAX_SEND_WR = 32;          // struct ibv_qp_cap cap, 5 x u32
    static final int QP_INIT_MAX_RECV_WR = 36;
    static final int QP_INIT_MAX_SEND_SGE = 40;
    static final int QP_INIT_MAX_RECV_SGE = 44;
    static final int QP_INIT_MAX_INLINE = 48;
    static final int QP_INIT_QP_TYPE = 52;
    static final int QP_INIT_SQ_SIG_ALL = 56;

    // struct ibv_comp_channel
    static final int COMP_CHANNEL_FD = 8;

    // struct ibv_device_attr, 232 bytes
    static final int DEVICE_ATTR_SIZE = 232;
    static final int DEVICE_ATTR_MAX_QP_WR = 112;
    static final int DEVICE_ATTR_MAX_SGE = 120;
    static final int DEVICE_ATTR_MAX_CQE = 132;
    static final int DEVICE_ATTR_MAX_QP_RD_ATOM = 144;
    static final int DEVICE_ATTR_MAX_QP_INIT_RD_ATOM = 156;

    // struct rdma_cm_id (rdma_cma.h)
    static final int CM_ID_VERBS = 0;                   // struct ibv_context *
    static final int CM_ID_QP = 24;                     // struct ibv_qp *
    static final int CM_ID_SRC_ADDR = 32;               // route.addr.src_addr (sockaddr_storage union)
    static final int CM_ID_DST_ADDR = 160;              // route.addr.dst_addr

    // struct rdma_cm_event, 80 bytes
    static final int CM_EVENT_ID = 0;
    static final int CM_EVENT_LISTEN_ID = 8;
    static final int CM_EVENT_EVENT = 16;               // enum rdma_cm_event_type
    static final int CM_EVENT_STATUS = 20;              // int
    static final int CM_EVENT_CONN = 24;                // struct rdma_conn_param param.conn

    // struct rdma_conn_param, 24 bytes
    static final int CONN_PARAM_SIZE = 24;
    static final int CONN_PRIVATE_DATA = 0;             // const void *
    static final int CONN_PRIVATE_DATA_LEN = 8;         // u8
    static final int CONN_RESPONDER_RESOURCES = 9;      // u8
    static final int CONN_INITIATOR_DEPTH = 10;         // u8
    static final int CONN_FLOW_CONTROL = 11;            // u8
    static final int CONN_RETRY_COUNT = 12;             // u8
    static final int CONN_RNR_RETRY_COUNT = 13;         // u8

    // struct rdma_event_channel
    static final int EVENT_CHANNEL_FD = 0;

    // enum rdma_cm_event_type
    static final int EV_ADDR_RESOLVED = 0;
    static final int EV_ADDR_ERROR = 1;
    static final int EV_ROUTE_RESOLVED = 2;
    static final int EV_ROUTE_ERROR = 3;
    static final int EV_CONNECT_REQUEST = 4;
    static final int EV_CONNECT_RESPONSE = 5;
    static final int EV_CONNECT_ERROR = 6;
    static final int EV_UNREACHABLE = 7;
    static final int EV_REJECTED = 8;
    static final int EV_ESTABLISHED = 9;
    static final int EV_DISCONNECTED = 10;
    static final int EV_DEVICE_REMOVAL = 11;
    static final int EV_ADDR_CHANGE = 14;
    static final int EV_TIMEWAIT_EXIT = 15;

    /** IB CM reject reason of a consumer (application) reject (IBTA 12.6.7.2, table 112). */
    static final int REJ_CONSUMER_DEFINED = 28;
    /** IB CM reject reason: nobody listens on the service ID (port). */
    static final int REJ_INVALID_SERVICE_ID = 8;

    // enum ibv_wr_opcode
    static final int WR_RDMA_WRITE = 0;
    static final int WR_SEND = 2;
    static final int WR_RDMA_READ = 4;
    static final int WR_SEND_WITH_INV = 9;
    // enum ibv_send_flags
    static final int SEND_SIGNALED = 2;
    // enum ibv_wc_flags
    static final int WC_WITH_INV = 8;
    // enum ibv_qp_type
    static final int QPT_RC = 2;
    // enum rdma_port_space
    static final int PS_TCP = 0x0106;

    // <sys/socket.h>, <netinet/in.h>, <poll.h>
    static final int AF_INET = 2;
    static final int AF_INET6 = 10;
    static final int SOCKADDR_IN_SIZE = 16;
    static final int SOCKADDR_IN6_SIZE = 28;
    static final int POLLIN = 1;

    static String eventName(int event) {
        switch (event) {
            case EV_ADDR_RESOLVED: return "ADDR_RESOLVED";
            case EV_ADDR_ERROR: return "ADDR_ERROR";
            case EV_ROUTE_RESOLVED: return "ROUTE_RESOLVED";
            case EV_ROUTE_ERROR: return "ROUTE_ERROR";
            case EV_CONNECT_REQUEST: return "CONNECT_REQUEST";
            case EV_CONNECT_RESPONSE: return "CONNECT_RESPONSE";
            case EV_CONNECT_ERROR: return "CONNECT_ERROR";
            case EV_UNREACHABLE: return "UNREACHABLE";
            case EV_REJECTED: return "REJECTED";
            case EV_ESTABLISHED: return "ESTABLISHED";
            case EV_DISCONNECTED: return "DISCONNECTED";
            case EV_DEVICE_REMOVAL: return "DEVICE_REMOVAL";
            case EV_ADDR_CHANGE: return "ADDR_CHANGE";
            case EV_TIMEWAIT_EXIT: return "TIMEWAIT_EXIT";
            default: return "event " + event;
        }
    }
}
