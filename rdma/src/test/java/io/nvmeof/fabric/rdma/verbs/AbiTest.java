package io.nvmeof.fabric.rdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every number in {@link Abi} against the installed rdma-core headers: compiles a C program of
 * {@code offsetof}/{@code sizeof}/enum values with gcc and compares. Skipped where gcc or the
 * headers (libibverbs-dev, librdmacm-dev) are missing.
 */
class AbiTest {
    private static final Map<String, String> C = new LinkedHashMap<>();

    static {
        C.put("CONTEXT_DEVICE", "offsetof(struct ibv_context, device)");
        C.put("CONTEXT_OPS", "offsetof(struct ibv_context, ops)");
        C.put("OPS_POLL_CQ", "offsetof(struct ibv_context_ops, poll_cq)");
        C.put("OPS_REQ_NOTIFY_CQ", "offsetof(struct ibv_context_ops, req_notify_cq)");
        C.put("OPS_POST_SEND", "offsetof(struct ibv_context_ops, post_send)");
        C.put("OPS_POST_RECV", "offsetof(struct ibv_context_ops, post_recv)");
        C.put("DEVICE_NAME", "offsetof(struct ibv_device, name)");
        C.put("SEND_WR_SIZE", "sizeof(struct ibv_send_wr)");
        C.put("SEND_WR_ID", "offsetof(struct ibv_send_wr, wr_id)");
        C.put("SEND_WR_NEXT", "offsetof(struct ibv_send_wr, next)");
        C.put("SEND_WR_SG_LIST", "offsetof(struct ibv_send_wr, sg_list)");
        C.put("SEND_WR_NUM_SGE", "offsetof(struct ibv_send_wr, num_sge)");
        C.put("SEND_WR_OPCODE", "offsetof(struct ibv_send_wr, opcode)");
        C.put("SEND_WR_FLAGS", "offsetof(struct ibv_send_wr, send_flags)");
        C.put("SEND_WR_INVALIDATE_RKEY", "offsetof(struct ibv_send_wr, invalidate_rkey)");
        C.put("SEND_WR_REMOTE_ADDR", "offsetof(struct ibv_send_wr, wr.rdma.remote_addr)");
        C.put("SEND_WR_RKEY", "offsetof(struct ibv_send_wr, wr.rdma.rkey)");
        C.put("RECV_WR_SIZE", "sizeof(struct ibv_recv_wr)");
        C.put("RECV_WR_ID", "offsetof(struct ibv_recv_wr, wr_id)");
        C.put("RECV_WR_NEXT", "offsetof(struct ibv_recv_wr, next)");
        C.put("RECV_WR_SG_LIST", "offsetof(struct ibv_recv_wr, sg_list)");
        C.put("RECV_WR_NUM_SGE", "offsetof(struct ibv_recv_wr, num_sge)");
        C.put("SGE_SIZE", "sizeof(struct ibv_sge)");
        C.put("SGE_ADDR", "offsetof(struct ibv_sge, addr)");
        C.put("SGE_LENGTH", "offsetof(struct ibv_sge, length)");
        C.put("SGE_LKEY", "offsetof(struct ibv_sge, lkey)");
        C.put("WC_SIZE", "sizeof(struct ibv_wc)");
        C.put("WC_WR_ID", "offsetof(struct ibv_wc, wr_id)");
        C.put("WC_STATUS", "offsetof(struct ibv_wc, status)");
        C.put("WC_OPCODE", "offsetof(struct ibv_wc, opcode)");
        C.put("WC_VENDOR_ERR", "offsetof(struct ibv_wc, vendor_err)");
        C.put("WC_BYTE_LEN", "offsetof(struct ibv_wc, byte_len)");
        C.put("WC_INVALIDATED_RKEY", "offsetof(struct ibv_wc, invalidated_rkey)");
        C.put("WC_QP_NUM", "offsetof(struct ibv_wc, qp_num)");
        C.put("WC_FLAGS", "offsetof(struct ibv_wc, wc_flags)");
        C.put("MR_LKEY", "offsetof(struct ibv_mr, lkey)");
        C.put("MR_RKEY", "offsetof(struct ibv_mr, rkey)");
        C.put("QP_NUM", "offsetof(struct ibv_qp, qp_num)");
        C.put("QP_INIT_ATTR_SIZE", "sizeof(struct ibv_qp_init_attr)");
        C.put("QP_INIT_SEND_CQ", "offsetof(struct ibv_qp_init_attr, send_cq)");
        C.put("QP_INIT_RECV_CQ", "offsetof(struct ibv_qp_init_attr, recv_cq)");
        C.put("QP_INIT_MAX_SEND_WR", "offsetof(struct ibv_qp_init_attr, cap.max_send_wr)");
        C.put("QP_INIT_MAX_RECV_WR", "offsetof(struct ibv_qp_init_attr, cap.max_recv_wr)");
        C.put("QP_INIT_MAX_SEND_SGE", "offsetof(struct ibv_qp_init_attr, cap.max_send_sge)");
        C.put("QP_INIT_MAX_RECV_SGE", "offsetof(struct ibv_qp_init_attr, cap.max_recv_sge)");
        C.put("QP_INIT_MAX_INLINE", "offsetof(struct ibv_qp_init_attr, cap.max_inline_data)");
        C.put("QP_INIT_QP_TYPE", "offsetof(struct ibv_qp_init_attr, qp_type)");
        C.put("QP_INIT_SQ_SIG_ALL", "offsetof(struct ibv_qp_init_attr, sq_sig_all)");
        C.put("COMP_CHANNEL_FD", "offsetof(struct ibv_comp_channel, fd)");
        C.put("CONTEXT_ASYNC_FD", "offsetof(struct ibv_context, async_fd)");
        C.put("ASYNC_EVENT_SIZE", "sizeof(struct ibv_async_event)");
        C.put("ASYNC_EVENT_ELEMENT", "offsetof(struct ibv_async_event, element)");
        C.put("ASYNC_EVENT_TYPE", "offsetof(struct ibv_async_event, event_type)");
        C.put("EVENT_CQ_ERR", "IBV_EVENT_CQ_ERR");
        C.put("EVENT_QP_FATAL", "IBV_EVENT_QP_FATAL");
        C.put("EVENT_QP_REQ_ERR", "IBV_EVENT_QP_REQ_ERR");
        C.put("EVENT_QP_ACCESS_ERR", "IBV_EVENT_QP_ACCESS_ERR");
        C.put("EVENT_COMM_EST", "IBV_EVENT_COMM_EST");
        C.put("EVENT_SQ_DRAINED", "IBV_EVENT_SQ_DRAINED");
        C.put("EVENT_PATH_MIG", "IBV_EVENT_PATH_MIG");
        C.put("EVENT_PATH_MIG_ERR", "IBV_EVENT_PATH_MIG_ERR");
        C.put("EVENT_DEVICE_FATAL", "IBV_EVENT_DEVICE_FATAL");
        C.put("EVENT_QP_LAST_WQE_REACHED", "IBV_EVENT_QP_LAST_WQE_REACHED");
        C.put("DEVICE_ATTR_SIZE", "sizeof(struct ibv_device_attr)");
        C.put("DEVICE_ATTR_MAX_QP_WR", "offsetof(struct ibv_device_attr, max_qp_wr)");
        C.put("DEVICE_ATTR_MAX_SGE", "offsetof(struct ibv_device_attr, max_sge)");
        C.put("DEVICE_ATTR_MAX_CQE", "offsetof(struct ibv_device_attr, max_cqe)");
        C.put("DEVICE_ATTR_MAX_QP_RD_ATOM", "offsetof(struct ibv_device_attr, max_qp_rd_atom)");
        C.put("DEVICE_ATTR_MAX_QP_INIT_RD_ATOM", "offsetof(struct ibv_device_attr, max_qp_init_rd_atom)");
        C.put("CM_ID_VERBS", "offsetof(struct rdma_cm_id, verbs)");
        C.put("CM_ID_QP", "offsetof(struct rdma_cm_id, qp)");
        C.put("CM_ID_SRC_ADDR", "offsetof(struct rdma_cm_id, route.addr.src_addr)");
        C.put("CM_ID_DST_ADDR", "offsetof(struct rdma_cm_id, route.addr.dst_addr)");
        C.put("CM_EVENT_ID", "offsetof(struct rdma_cm_event, id)");
        C.put("CM_EVENT_LISTEN_ID", "offsetof(struct rdma_cm_event, listen_id)");
        C.put("CM_EVENT_EVENT", "offsetof(struct rdma_cm_event, event)");
        C.put("CM_EVENT_STATUS", "offsetof(struct rdma_cm_event, status)");
        C.put("CM_EVENT_CONN", "offsetof(struct rdma_cm_event, param.conn)");
        C.put("CONN_PARAM_SIZE", "sizeof(struct rdma_conn_param)");
        C.put("CONN_PRIVATE_DATA", "offsetof(struct rdma_conn_param, private_data)");
        C.put("CONN_PRIVATE_DATA_LEN", "offsetof(struct rdma_conn_param, private_data_len)");
        C.put("CONN_RESPONDER_RESOURCES", "offsetof(struct rdma_conn_param, responder_resources)");
        C.put("CONN_INITIATOR_DEPTH", "offsetof(struct rdma_conn_param, initiator_depth)");
        C.put("CONN_FLOW_CONTROL", "offsetof(struct rdma_conn_param, flow_control)");
        C.put("CONN_RETRY_COUNT", "offsetof(struct rdma_conn_param, retry_count)");
        C.put("CONN_RNR_RETRY_COUNT", "offsetof(struct rdma_conn_param, rnr_retry_count)");
        C.put("EVENT_CHANNEL_FD", "offsetof(struct rdma_event_channel, fd)");
        C.put("EV_ADDR_RESOLVED", "RDMA_CM_EVENT_ADDR_RESOLVED");
        C.put("EV_ADDR_ERROR", "RDMA_CM_EVENT_ADDR_ERROR");
        C.put("EV_ROUTE_RESOLVED", "RDMA_CM_EVENT_ROUTE_RESOLVED");
        C.put("EV_ROUTE_ERROR", "RDMA_CM_EVENT_ROUTE_ERROR");
        C.put("EV_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_REQUEST");
        C.put("EV_CONNECT_RESPONSE", "RDMA_CM_EVENT_CONNECT_RESPONSE");
        C.put("EV_CONNECT_ERROR", "RDMA_CM_EVENT_CONNECT_ERROR");
        C.put("EV_UNREACHABLE", "RDMA_CM_EVENT_UNREACHABLE");
        C.put("EV_REJECTED", "RDMA_CM_EVENT_REJECTED");
        C.put("EV_ESTABLISHED", "RDMA_CM_EVENT_ESTABLISHED");
        C.put("EV_DISCONNECTED", "RDMA_CM_EVENT_DISCONNECTED");
        C.put("EV_DEVICE_REMOVAL", "RDMA_CM_EVENT_DEVICE_REMOVAL");
        C.put("EV_ADDR_CHANGE", "RDMA_CM_EVENT_ADDR_CHANGE");
        C.put("EV_TIMEWAIT_EXIT", "RDMA_CM_EVENT_TIMEWAIT_EXIT");
        C.put("WR_RDMA_WRITE", "IBV_WR_RDMA_WRITE");
        C.put("WR_SEND", "IBV_WR_SEND");
        C.put("WR_RDMA_READ", "IBV_WR_RDMA_READ");
        C.put("WR_SEND_WITH_INV", "IBV_WR_SEND_WITH_INV");
        C.put("SEND_SIGNALED", "IBV_SEND_SIGNALED");
        C.put("WC_WITH_INV", "IBV_WC_WITH_INV");
        C.put("QPT_RC", "IBV_QPT_RC");
        C.put("PS_TCP", "RDMA_PS_TCP");
        C.put("AF_INET", "AF_INET");
        C.put("AF_INET6", "AF_INET6");
        C.put("SOCKADDR_IN_SIZE", "sizeof(struct sockaddr_in)");
        C.put("SOCKADDR_IN6_SIZE", "sizeof(struct sockaddr_in6)");
        C.put("POLLIN", "POLLIN");
    }

    @Test
    void everyConstantMatchesTheHeaders(@TempDir Path dir) throws Exception {
        Assumptions.assumeTrue(Files.exists(Path.of("/usr/include/infiniband/verbs.h"))
                && Files.exists(Path.of("/usr/include/rdma/rdma_cma.h")), "rdma-core headers not installed");
        StringBuilder src = new StringBuilder("#include <stdio.h>\n#include <stddef.h>\n#include <poll.h>\n"
                + "#include <netinet/in.h>\n#include <infiniband/verbs.h>\n#include <rdma/rdma_cma.h>\nint main(void) {\n");
        for (Map.Entry<String, String> e : C.entrySet()) {
            src.append("  printf(\"").append(e.getKey()).append(" %ld\\n\", (long) (").append(e.getValue()).append("));\n");
        }
        src.append("  return 0;\n}\n");
        Path c = dir.resolve("abi.c");
        Path exe = dir.resolve("abi");
        Files.writeString(c, src);
        String out;
        try {
            run(dir, "gcc", "-o", exe.toString(), c.toString());
            out = run(dir, exe.toString());
        } catch (IOException noGcc) {
            Assumptions.abort("cannot compile against the headers: " + noGcc.getMessage());
            return;
        }
        int checked = 0;
        for (String line : out.split("\n")) {
            String[] kv = line.trim().split(" ");
            Field f = Abi.class.getDeclaredField(kv[0]);
            f.setAccessible(true);
            assertEquals(Long.parseLong(kv[1]), f.getInt(null), kv[0] + " (" + C.get(kv[0]) + ")");
            checked++;
        }
        assertEquals(C.size(), checked);
    }

    private static String run(Path dir, String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + out);
        }
        return out;
    }
}
