package io.nvmeof.fabric.rdma.verbs;

import static io.nvmeof.fabric.rdma.verbs.Native.MEM;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.nvmeof.fabric.rdma.AbstractRdmaConnection;
import io.nvmeof.fabric.rdma.ConnectParams;
import io.nvmeof.fabric.rdma.ConnectionState;
import io.nvmeof.fabric.rdma.MemoryRegion;
import io.nvmeof.fabric.rdma.ProtectionDomain;
import io.nvmeof.fabric.rdma.RdmaConnection;
import io.nvmeof.fabric.rdma.RdmaHandler;
import io.nvmeof.fabric.rdma.RdmaRejectedException;
import io.nvmeof.fabric.rdma.WorkCompletion;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * One RC queue pair on an rdma_cm id, with one CQ for both queues on a completion channel of
 * its event loop: the verbs of an {@link AbstractRdmaConnection}, which owns the lifecycle.
 *
 * <p>Confinement: after setup, everything runs on {@link #eventLoop()}: CM events are handed to
 * it, completion events ask it to poll. The data path reuses one set of work requests and
 * scatter/gather entries in native memory (ibv_post_send/recv copy them into the queue before
 * returning, so one set per connection is enough) and one array of {@value #BATCH} {@code
 * ibv_wc}: a post or a poll allocates nothing.
 *
 * <p>The send queue holds twice {@code sendDepth} work requests, since a WRITE+SEND takes two
 * (the unsignaled WRITE stays in the queue until the SEND after it completes); the CQ holds
 * every work request that can complete, flushed ones included.
 *
 * <p>Ending: {@code rdma_disconnect} moves the QP to the error state and sends the peer a DREQ;
 * the device flushes what was posted; once nothing is outstanding the QP, CQ, id and native
 * scratch are destroyed, in that order.
 */
final class VerbsConnection extends AbstractRdmaConnection implements VerbsProvider.CmTarget {
    // the native scratch block of a connection
    private static final int WR_WRITE = 0;                                  // ibv_send_wr: RDMA WRITE, chained to WR_SEND
    private static final int WR_SEND = WR_WRITE + Abi.SEND_WR_SIZE;          // ibv_send_wr: SEND / SEND_WITH_INV / RDMA READ
    private static final int SGE_WRITE = WR_SEND + Abi.SEND_WR_SIZE;
    private static final int SGE_SEND = SGE_WRITE + Abi.SGE_SIZE;
    private static final int WR_RECV = SGE_SEND + Abi.SGE_SIZE;             // ibv_recv_wr
    private static final int SGE_RECV = WR_RECV + Abi.RECV_WR_SIZE;
    private static final int BAD_WR = SGE_RECV + Abi.SGE_SIZE;              // ibv_*_wr **bad_wr
    private static final int WC = 384;                                       // ibv_wc[BATCH]
    private static final int SCRATCH_SIZE = WC + BATCH * Abi.WC_SIZE;

    private final VerbsProvider provider;
    private final Native.Libs libs;
    private final EventLoop loop;
    final long id;
    private final boolean busyPoll;

    private VerbsDevice device;
    private CompletionChannel channel;
    private int slot = -1;
    private long cq;
    private long qp;
    private int qpNum;
    private NativeBlock scratch;
    private boolean destroyed;

    private static final System.Logger LOG = System.getLogger(VerbsConnection.class.getName());

    // connecting side only
    private final InetSocketAddress target;
    private final ConnectParams params;
    /** Connecting side: rdma_connect has been sent (before: resolving the address and route). */
    private boolean connectSent;
    private ScheduledFuture<?> timer;

    /** The connecting side, before address resolution. */
    VerbsConnection(VerbsProvider provider, EventLoop loop, RdmaHandler handler, long id, InetSocketAddress target,
                    ConnectParams params, CompletableFuture<RdmaConnection> future) {
        super(loop, handler, future);
        this.provider = provider;
        this.libs = provider.libs;
        this.loop = loop;
        this.id = id;
        this.busyPoll = provider.busyPoll;
        this.target = target;
        this.params = params;
    }

    /** The accepting side, for a connect request on {@code id}. */
    VerbsConnection(VerbsProvider provider, EventLoop loop, RdmaHandler handler, long id, ByteBuffer privateData,
                    int initiatorDepth) {
        super(loop, handler, null);
        this.provider = provider;
        this.libs = provider.libs;
        this.loop = loop;
        this.id = id;
        this.busyPoll = provider.busyPoll;
        this.target = null;
        this.params = null;
        negotiated(privateData, initiatorDepth);
        readAddresses();
    }

    // ---- setup

    /**
     * Creates the scratch block, the CQ (armed unless busy polling) and the QP on the id. On
     * failure the caller tears down with {@link #destroy()}.
     */
    void createQueuePair(VerbsDevice dev, int sendDepth, int recvDepth) throws IOException {
        if (sendDepth < 1 || recvDepth < 1) {
            throw new IllegalArgumentException("queue depths must be positive: send " + sendDepth + ", recv " + recvDepth);
        }
        if (sendDepth > dev.maxQpWr || recvDepth > dev.maxQpWr) {
            throw new IOException("queue depth send " + sendDepth + "/recv " + recvDepth + " exceeds " + dev.name
                    + "'s max_qp_wr " + dev.maxQpWr);
        }
        this.device = dev;
        size(sendDepth, recvDepth);
        this.scratch = new NativeBlock("RDMA connection " + id, SCRATCH_SIZE);
        long s = scratch.at(0, SCRATCH_SIZE);
        MEM.putAddress(s + WR_WRITE + Abi.SEND_WR_NEXT, s + WR_SEND);
        MEM.putAddress(s + WR_WRITE + Abi.SEND_WR_SG_LIST, s + SGE_WRITE);
        MEM.putInt(s + WR_WRITE + Abi.SEND_WR_OPCODE, Abi.WR_RDMA_WRITE);
        MEM.putAddress(s + WR_SEND + Abi.SEND_WR_SG_LIST, s + SGE_SEND);
        MEM.putAddress(s + WR_RECV + Abi.RECV_WR_SG_LIST, s + SGE_RECV);
        MEM.putInt(s + WR_RECV + Abi.RECV_WR_NUM_SGE, 1);

        this.channel = provider.completionChannel(loop, dev);
        this.slot = channel.register(this);
        int sendWrs = Math.min(2 * sendDepth, dev.maxQpWr);
        int cqe = Math.min(sendWrs + recvDepth, dev.maxCqe);
        long c = libs.ib.ibv_create_cq(dev.context, cqe, slot, channel.channel, 0);
        if (c == 0) {
            throw new IOException(libs.error("ibv_create_cq(" + dev.name + ", " + cqe + " entries)"));
        }
        this.cq = c;
        if (!busyPoll) {
            int rc = Native.reqNotifyCq(dev.reqNotifyCqFn, cq);
            if (rc != 0) {
                throw new IOException(libs.describe("ibv_req_notify_cq", rc));
            }
        }
        long attr = Native.calloc(Abi.QP_INIT_ATTR_SIZE);
        try {
            MEM.putAddress(attr + Abi.QP_INIT_SEND_CQ, cq);
            MEM.putAddress(attr + Abi.QP_INIT_RECV_CQ, cq);
            MEM.putInt(attr + Abi.QP_INIT_MAX_SEND_WR, sendWrs);
            MEM.putInt(attr + Abi.QP_INIT_MAX_RECV_WR, recvDepth);
            MEM.putInt(attr + Abi.QP_INIT_MAX_SEND_SGE, 1);
            MEM.putInt(attr + Abi.QP_INIT_MAX_RECV_SGE, 1);
            MEM.putInt(attr + Abi.QP_INIT_MAX_INLINE, 0);
            MEM.putInt(attr + Abi.QP_INIT_QP_TYPE, Abi.QPT_RC);
            MEM.putInt(attr + Abi.QP_INIT_SQ_SIG_ALL, 0);
            if (libs.cm.rdma_create_qp(id, dev.pd, attr) != 0) {
                throw new IOException(libs.error("rdma_create_qp(" + dev.name + ", send " + sendWrs + ", recv "
                        + recvDepth + ")"));
            }
        } finally {
            Native.free(attr);
        }
        this.qp = MEM.getAddress(id + Abi.CM_ID_QP);
        this.qpNum = MEM.getInt(qp + Abi.QP_NUM);
        dev.events.add(qp, this);
        if (busyPoll && target == null) {
            startPolling();                 // the connecting side starts once established
        }
    }

    private void readAddresses() {
        addresses(SockAddr.read(id + Abi.CM_ID_DST_ADDR), SockAddr.read(id + Abi.CM_ID_SRC_ADDR));
    }

    /** Accepting side: the QP exists; sends the accept. Any thread, before the connection is handed out. */
    void accept(ByteBuffer acceptData, int responderResources, int initiatorDepthToSend) throws IOException {
        long param = Native.calloc(Abi.CONN_PARAM_SIZE + 256);
        try {
            putPrivateData(param, acceptData);
            MEM.putByte(param + Abi.CONN_RESPONDER_RESOURCES, (byte) responderResources);
            MEM.putByte(param + Abi.CONN_INITIATOR_DEPTH, (byte) initiatorDepthToSend);
            MEM.putByte(param + Abi.CONN_FLOW_CONTROL, (byte) 1);
            MEM.putByte(param + Abi.CONN_RETRY_COUNT, (byte) 7);
            MEM.putByte(param + Abi.CONN_RNR_RETRY_COUNT, (byte) 7);
            if (libs.cm.rdma_accept(id, param) != 0) {
                throw new IOException(libs.error("rdma_accept from " + peer()));
            }
        } finally {
            Native.free(param);
        }
    }

    /** Copies {@code data}'s remaining bytes behind the conn_param at {@code param} and points at them. */
    private static void putPrivateData(long param, ByteBuffer data) {
        if (data == null || !data.hasRemaining()) {
            return;
        }
        int len = data.remaining();
        if (len > 255) {
            throw new IllegalArgumentException("CM private data is at most 255 bytes, not " + len);
        }
        byte[] b = new byte[len];
        data.duplicate().get(b);
        long at = param + Abi.CONN_PARAM_SIZE;
        MEM.putByteArray(at, b, 0, len);
        MEM.putAddress(param + Abi.CONN_PRIVATE_DATA, at);
        MEM.putByte(param + Abi.CONN_PRIVATE_DATA_LEN, (byte) len);
    }

    // ---- connecting side: address, route, queue pair, connect (on the loop)

    /** Connecting side: starts address resolution and arms its bound. Loop. */
    void startConnect() {
        long sa = 0;
        try {
            sa = SockAddr.allocate(target);
            if (libs.cm.rdma_resolve_addr(id, 0, sa, timeoutMillis()) != 0) {
                connectFailed(new IOException(libs.error("rdma_resolve_addr(" + target + ")")));
                return;
            }
        } catch (IOException | RuntimeException e) {
            connectFailed(e);
            return;
        } finally {
            Native.free(sa);
        }
        armTimer("resolving the address");
    }

    /** Arms the bound on the current connect phase. Loop. */
    private void armTimer(String phase) {
        cancelTimer();
        int ms = timeoutMillis();
        timer = loop.schedule(() -> connectFailed(new IOException("RDMA connect to " + target + " timed out after "
                + ms + " ms " + phase)), ms, TimeUnit.MILLISECONDS);
    }

    /** The bound on each connect phase: the params' timeout, 5 s if none was given. */
    private int timeoutMillis() {
        return params.timeoutMillis() > 0 ? params.timeoutMillis() : 5000;
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    private void connectFailed(Throwable t) {
        cancelTimer();
        failConnect(t);
    }

    private void onConnectingEvent(CmEvent e) {
        switch (e.type()) {
            case Abi.EV_ADDR_RESOLVED:
                if (libs.cm.rdma_resolve_route(id, timeoutMillis()) != 0) {
                    connectFailed(new IOException(libs.error("rdma_resolve_route to " + target)));
                } else {
                    armTimer("resolving the route");
                }
                return;
            case Abi.EV_ROUTE_RESOLVED:
                try {
                    VerbsDevice dev = provider.device(MEM.getAddress(id + Abi.CM_ID_VERBS));
                    createQueuePair(dev, params.sendDepth(), params.recvDepth());
                    connect(dev);
                    connectSent = true;
                    armTimer("waiting for the peer's answer");
                } catch (IOException | RuntimeException x) {
                    connectFailed(x);
                }
                return;
            case Abi.EV_ESTABLISHED:
                if (!connectSent) {
                    break;
                }
                cancelTimer();
                negotiated(e.privateDataBuffer(), e.initiatorDepth() > 0
                        ? Math.min(initiatorDepth(), e.initiatorDepth()) : initiatorDepth());
                readAddresses();
                if (busyPoll) {
                    startPolling();
                }
                established();
                return;
            case Abi.EV_REJECTED:
                String why = e.status() == Abi.REJ_CONSUMER_DEFINED ? "rejected by the peer"
                        : e.status() == Abi.REJ_INVALID_SERVICE_ID ? "refused: nobody listens there (CM reject reason 8)"
                        : "rejected by the peer's CM (reason " + e.status() + ")";
                connectFailed(new RdmaRejectedException("RDMA connect to " + target + " " + why,
                        e.status() == Abi.REJ_CONSUMER_DEFINED ? heapCopy(e.privateData()) : null));
                return;
            default:
                break;
        }
        if (e.type() == Abi.EV_TIMEWAIT_EXIT) {
            return;
        }
        connectFailed(new IOException("RDMA connect to " + target + " failed: rdma_cm " + e.describe()));
    }

    private static ByteBuffer heapCopy(byte[] b) {
        return b == null ? null : ByteBuffer.wrap(b.clone()).order(ByteOrder.LITTLE_ENDIAN);
    }

    private void connect(VerbsDevice dev) throws IOException {
        int resp = Math.min(Math.min(params.responderResources(), dev.maxQpRdAtom), 255);
        int initiatorDepth = Math.min(Math.min(params.initiatorDepth(), dev.maxQpInitRdAtom), 255);
        negotiated(null, initiatorDepth);
        long param = Native.calloc(Abi.CONN_PARAM_SIZE + 256);
        try {
            putPrivateData(param, params.privateData());
            MEM.putByte(param + Abi.CONN_RESPONDER_RESOURCES, (byte) resp);
            MEM.putByte(param + Abi.CONN_INITIATOR_DEPTH, (byte) initiatorDepth);
            MEM.putByte(param + Abi.CONN_FLOW_CONTROL, (byte) 1);
            MEM.putByte(param + Abi.CONN_RETRY_COUNT, (byte) 7);
            MEM.putByte(param + Abi.CONN_RNR_RETRY_COUNT, (byte) 7);
            if (libs.cm.rdma_connect(id, param) != 0) {
                throw new IOException(libs.error("rdma_connect to " + target));
            }
        } finally {
            Native.free(param);
        }
    }

    // ---- CM events

    @Override
    public void onCmEvent(CmEvent e) {
        try {
            loop.execute(() -> handleCmEvent(e));
        } catch (RejectedExecutionException x) {
            // the loop is gone; nothing can be delivered any more
        }
    }

    private void handleCmEvent(CmEvent e) {
        ConnectionState s = state();
        if (s == ConnectionState.CONNECTING && target != null) {
            onConnectingEvent(e);
            return;
        }
        switch (e.type()) {
            case Abi.EV_ESTABLISHED:
                established();
                return;
            case Abi.EV_DISCONNECTED:
                beginClose(null);
                return;
            case Abi.EV_TIMEWAIT_EXIT:
                return;
            default:
                beginClose(new IOException("RDMA connection with " + peer() + " ended: rdma_cm " + e.describe()));
        }
    }

    /** From the device's event thread: an asynchronous event of this connection's queue pair. */
    void onAsyncEvent(int type, String name) {
        Runnable r;
        switch (type) {
            case Abi.EVENT_COMM_EST:            // a message came before the RTU: established, as far as the CM must know
                r = () -> {
                    synchronized (this) {
                        if (!destroyed) {
                            libs.cm.rdma_notify(id, Abi.EVENT_COMM_EST);
                        }
                    }
                };
                break;
            case Abi.EVENT_QP_FATAL:
            case Abi.EVENT_QP_REQ_ERR:
            case Abi.EVENT_QP_ACCESS_ERR:
            case Abi.EVENT_PATH_MIG_ERR:
                IOException why = new IOException("the RDMA device reported " + name + " on " + this
                        + (type == Abi.EVENT_QP_ACCESS_ERR ? " (an RDMA READ or WRITE broke a region's key, bounds or "
                                + "access rights)" : ""));
                r = () -> beginClose(why);
                break;
            default:
                LOG.log(System.Logger.Level.DEBUG, "{0}: {1}", this, name);
                return;
        }
        try {
            loop.execute(r);
        } catch (RejectedExecutionException x) {
            // the loop is gone
        }
    }

    // ---- the queue pair's verbs

    /** {@code rdma_disconnect}: the QP to the error state (everything posted flushes), a DREQ to the peer. */
    @Override
    protected void disconnect() {
        synchronized (this) {
            if (destroyed) {
                return;
            }
            libs.cm.rdma_disconnect(id);    // fails harmlessly when the peer disconnected first
        }
    }

    @Override
    protected void destroy(Runnable done) {
        destroy();
        done.run();
    }

    /** Destroys QP, CQ, id and scratch, in that order; whatever exists. Any thread, idempotent. */
    void destroy() {
        synchronized (this) {
            if (destroyed) {
                return;
            }
            destroyed = true;
        }
        cancelTimer();
        provider.forget(id);
        if (qp != 0) {
            device.events.remove(qp);
            libs.cm.rdma_destroy_qp(id);
            qp = 0;
        }
        if (cq != 0) {
            libs.ib.ibv_destroy_cq(cq);
            cq = 0;
        }
        if (slot >= 0) {
            channel.unregister(slot, this);
            slot = -1;
        }
        libs.cm.rdma_destroy_id(id);
        if (scratch != null) {
            scratch.free();
        }
        provider.untrack(this);
    }

    /** From the completion channel's thread: the CQ has news. */
    void onCompletionEvent() {
        completionsReady();
    }

    @Override
    protected boolean busyPoll() {
        return busyPoll;
    }

    @Override
    protected void arm() throws IOException {
        checkCq();
        int rc = Native.reqNotifyCq(device.reqNotifyCqFn, cq);
        if (rc != 0) {
            throw new IOException(libs.describe("ibv_req_notify_cq on " + this, rc));
        }
    }

    @Override
    protected int poll(int max) throws IOException {
        checkCq();
        long wc = scratch.at(WC, BATCH * Abi.WC_SIZE);
        int n = Native.pollCq(device.pollCqFn, cq, Math.min(max, BATCH), wc);
        if (n < 0) {
            throw new IOException(libs.describe("ibv_poll_cq on " + this, n));
        }
        for (int i = 0; i < n; i++) {
            long w = wc + (long) i * Abi.WC_SIZE;
            int status = MEM.getInt(w + Abi.WC_STATUS);
            long wrId = MEM.getLong(w + Abi.WC_WR_ID);
            long invalidated = -1;
            int byteLen = 0;
            if (status == WorkCompletion.SUCCESS) {
                byteLen = MEM.getInt(w + Abi.WC_BYTE_LEN);
                if ((MEM.getInt(w + Abi.WC_FLAGS) & Abi.WC_WITH_INV) != 0) {
                    invalidated = MEM.getInt(w + Abi.WC_INVALIDATED_RKEY) & 0xffffffffL;
                }
            } else if (status != WorkCompletion.WR_FLUSH_ERR) {
                LOG.log(System.Logger.Level.DEBUG, "{0}: work request {1} failed with status {2}, vendor error 0x{3}",
                        this, wrId, status, Integer.toHexString(MEM.getInt(w + Abi.WC_VENDOR_ERR)));
            }
            complete(wrId, status, byteLen, invalidated);
            if (finishing()) {
                return n;                   // (the scratch holding the rest may be freed)
            }
        }
        return n;
    }

    /** A poll or arm of a destroyed CQ is a use after free: a Java exception, never a native call. */
    private void checkCq() {
        if (cq == 0) {
            throw new IllegalStateException("the completion queue of " + this + " is destroyed");
        }
    }

    private static void sge(long sge, MemoryRegion mr, int offset, int length) {
        MEM.putLong(sge + Abi.SGE_ADDR, mr.address() + offset);
        MEM.putInt(sge + Abi.SGE_LENGTH, length);
        MEM.putInt(sge + Abi.SGE_LKEY, mr.lkey());
    }

    @Override
    protected void doPostRecv(long wrId, MemoryRegion mr, int offset, int length) throws IOException {
        long wr = scratch.at(WR_RECV, Abi.RECV_WR_SIZE);
        MEM.putLong(wr + Abi.RECV_WR_ID, wrId);
        sge(scratch.at(SGE_RECV, Abi.SGE_SIZE), mr, offset, length);
        posted("ibv_post_recv", Native.post(device.postRecvFn, qp, wr, scratch.at(BAD_WR, 8)));
    }

    @Override
    protected void doPostSend(long wrId, MemoryRegion mr, int offset, int length, long invalidateRkey)
            throws IOException {
        prepareSend(wrId, mr, offset, length, invalidateRkey);
        posted("ibv_post_send (SEND)", Native.post(device.postSendFn, qp, scratch.at(WR_SEND, Abi.SEND_WR_SIZE),
                scratch.at(BAD_WR, 8)));
    }

    private void prepareSend(long wrId, MemoryRegion mr, int offset, int length, long invalidateRkey) {
        long wr = scratch.at(WR_SEND, Abi.SEND_WR_SIZE);
        MEM.putLong(wr + Abi.SEND_WR_ID, wrId);
        MEM.putInt(wr + Abi.SEND_WR_NUM_SGE, length == 0 ? 0 : 1);
        MEM.putInt(wr + Abi.SEND_WR_OPCODE, invalidateRkey >= 0 ? Abi.WR_SEND_WITH_INV : Abi.WR_SEND);
        MEM.putInt(wr + Abi.SEND_WR_FLAGS, Abi.SEND_SIGNALED);
        MEM.putInt(wr + Abi.SEND_WR_INVALIDATE_RKEY, invalidateRkey >= 0 ? (int) invalidateRkey : 0);
        sge(scratch.at(SGE_SEND, Abi.SGE_SIZE), mr, offset, length);
    }

    @Override
    protected void doPostRead(long wrId, MemoryRegion mr, int offset, int length, long remoteAddress, int rkey)
            throws IOException {
        long wr = scratch.at(WR_SEND, Abi.SEND_WR_SIZE);
        MEM.putLong(wr + Abi.SEND_WR_ID, wrId);
        MEM.putInt(wr + Abi.SEND_WR_NUM_SGE, 1);
        MEM.putInt(wr + Abi.SEND_WR_OPCODE, Abi.WR_RDMA_READ);
        MEM.putInt(wr + Abi.SEND_WR_FLAGS, Abi.SEND_SIGNALED);
        MEM.putInt(wr + Abi.SEND_WR_INVALIDATE_RKEY, 0);
        MEM.putLong(wr + Abi.SEND_WR_REMOTE_ADDR, remoteAddress);
        MEM.putInt(wr + Abi.SEND_WR_RKEY, rkey);
        sge(scratch.at(SGE_SEND, Abi.SGE_SIZE), mr, offset, length);
        posted("ibv_post_send (RDMA READ)", Native.post(device.postSendFn, qp, wr, scratch.at(BAD_WR, 8)));
    }

    @Override
    protected void doPostWriteAndSend(long wrId, MemoryRegion mr, int offset, int length, long remoteAddress, int rkey,
                                      MemoryRegion msg, int msgOffset, int msgLength, long invalidateRkey)
            throws IOException {
        long w = scratch.at(WR_WRITE, Abi.SEND_WR_SIZE);
        MEM.putLong(w + Abi.SEND_WR_ID, wrId | WRITE_PART);
        MEM.putInt(w + Abi.SEND_WR_NUM_SGE, length == 0 ? 0 : 1);
        MEM.putInt(w + Abi.SEND_WR_FLAGS, 0);                          // unsignaled: the SEND's completion covers it
        MEM.putLong(w + Abi.SEND_WR_REMOTE_ADDR, remoteAddress);
        MEM.putInt(w + Abi.SEND_WR_RKEY, rkey);
        sge(scratch.at(SGE_WRITE, Abi.SGE_SIZE), mr, offset, length);
        prepareSend(wrId, msg, msgOffset, msgLength, invalidateRkey);
        posted("ibv_post_send (RDMA WRITE + SEND)", Native.post(device.postSendFn, qp, w, scratch.at(BAD_WR, 8)));
    }

    private void posted(String what, int rc) throws IOException {
        if (rc != 0) {
            String why = rc == 12 ? what + ": the send or receive queue is full (ENOMEM)" : libs.describe(what, rc);
            throw new IOException(why + " on " + this);
        }
    }

    // ---- accessors

    @Override
    public ProtectionDomain pd() {
        return device;
    }

    @Override
    public String toString() {
        return "verbs connection " + localAddress() + " -> " + peer() + (device != null ? " on " + device.name : "")
                + (qpNum != 0 ? " qp " + qpNum : "");
    }
}
