package io.nvmeof.fabric.rdma.verbs;

import static io.nvmeof.fabric.rdma.verbs.Native.MEM;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The asynchronous events of one device ({@code ibv_get_async_event} on the context's async
 * fd) and the daemon thread that reads them: {@code poll} (bounded, so that closing is
 * noticed), read, find the queue pair's connection, acknowledge, then hand the event to the
 * connection, which acts on its event loop. The connection is looked up before the
 * acknowledgement: {@code ibv_destroy_qp} waits for the events of its queue pair to be
 * acknowledged, so until then the queue pair (and its address) cannot belong to another.
 *
 * <p>What the events mean for a connection: {@code COMM_EST} (a message arrived before the
 * connection manager's RTU) is passed to {@code rdma_notify}, as nvmet-rdma does, so the
 * connection is established even if the RTU was lost; {@code QP_FATAL}, {@code QP_REQ_ERR}
 * and {@code QP_ACCESS_ERR} (this side's queue pair went to the error state, for instance as
 * the responder of a peer's RDMA WRITE or READ that broke the region's key, bounds or rights)
 * end the connection with a cause that names the event; device-wide errors are logged.
 */
final class AsyncEvents extends FdWatcher {
    private static final System.Logger LOG = System.getLogger(AsyncEvents.class.getName());

    private final VerbsDevice device;
    /** Connections by {@code ibv_qp*}, while their queue pair exists. */
    private final Map<Long, VerbsConnection> byQp = new ConcurrentHashMap<>();

    AsyncEvents(Native.Libs libs, VerbsDevice device) {
        super(libs, "verbs-async-" + device.name);
        this.device = device;
        start();
    }

    /** The queue pair {@code qp} of {@code c} exists: its events go to {@code c}. */
    void add(long qp, VerbsConnection c) {
        byQp.put(qp, c);
    }

    /** Before {@code qp} is destroyed. */
    void remove(long qp) {
        byQp.remove(qp);
    }

    @Override
    int fd() {
        return MEM.getInt(device.context + Abi.CONTEXT_ASYNC_FD);
    }

    @Override
    int scratchSize() {
        return Abi.ASYNC_EVENT_SIZE;
    }

    @Override
    void readable(long ev) {
        if (libs.ib.ibv_get_async_event(device.context, ev) != 0) {
            return;
        }
        int type = MEM.getInt(ev + Abi.ASYNC_EVENT_TYPE);
        long element = MEM.getAddress(ev + Abi.ASYNC_EVENT_ELEMENT);
        VerbsConnection c = isQpEvent(type) ? byQp.get(element) : null;
        libs.ib.ibv_ack_async_event(ev);
        dispatch(type, c);
    }

    private static boolean isQpEvent(int type) {
        return type >= Abi.EVENT_QP_FATAL && type <= Abi.EVENT_PATH_MIG_ERR || type == Abi.EVENT_QP_LAST_WQE_REACHED;
    }

    private void dispatch(int type, VerbsConnection c) {
        String name = libs.ib.ibv_event_type_str(type);
        if (c != null) {
            try {
                c.onAsyncEvent(type, name);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "verbs: handling " + name + " on " + c + " failed", e);
            }
            return;
        }
        LOG.log(type == Abi.EVENT_DEVICE_FATAL || type == Abi.EVENT_CQ_ERR ? System.Logger.Level.ERROR
                : isQpEvent(type) ? System.Logger.Level.DEBUG : System.Logger.Level.INFO,
                "verbs: {0}: asynchronous event {1} ({2})", device.name, name, type);
    }

    /** Stops the thread and waits for it: the context may be closed after this. */
    void close() {
        stopAndJoin();
    }
}
