package io.nvmeof.fabric.rdma.disni;

import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.internal.PlatformDependent;
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
import java.lang.ref.Reference;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * One reliable-connected queue pair over DiSNI: the verbs of an {@link AbstractRdmaConnection},
 * which owns the lifecycle.
 *
 * <p>Threads: connection management and the queue pair's creation and destruction on the
 * provider's CM thread; completions arrive on the completion queue's thread, which puts them in
 * a preallocated ring and asks the loop to poll it; posts and delivery on the event loop.
 *
 * <p>Posting: one prepared {@code SVCPostSend} per kind (SEND, RDMA READ, and the WRITE+SEND
 * chain as one two-request list) is built on first use and then only modified in place (wr_id,
 * flags, SGE, remote address and key) and executed again: {@code ibv_post_send} copies the work
 * requests, so one prepared call per kind suffices on the one loop that posts. Receives keep
 * one prepared {@code SVCPostRecv} per receive index (stable per caller id) and buffer. A SEND
 * with Invalidate is the one post that builds its call each time: DiSNI cannot change the
 * {@code invalidate_rkey} (its {@code imm_data}) of a prepared call.
 */
final class DisniConnection extends AbstractRdmaConnection implements DisniProvider.CmEndpoint {
    private static final System.Logger LOG = System.getLogger(DisniConnection.class.getName());
    private static final byte RETRY_COUNT = 7;
    /** 7: retry for ever, as the Linux and SPDK NVMe/RDMA hosts and targets do. */
    private static final byte RNR_RETRY_COUNT = 7;

    private final DisniProvider provider;
    final RdmaCmId id;
    private final int sendDepth;
    private final int recvDepth;

    // connecting side
    private final InetSocketAddress target;
    private final ConnectParams params;
    private final int timeoutMs;
    private ScheduledFuture<?> connectTimer;

    // set on the CM thread before the connection is handed out
    private DisniDevice device;
    private CompletionQueue cq;
    private int tag;
    private int reservedCqes;
    private IbvQP qp;

    // CM thread
    private boolean disconnected;
    private boolean destroyed;

    // completion queue thread -> loop
    /** Completion queue thread: this connection has completions in the batch being dispatched. */
    boolean inBatch;
    private volatile boolean ringOverflow;
    private final CompletionRing ring;

    // event loop
    private SVCPostSend sendCall;
    private SVCPostSend readCall;
    private SVCPostSend writeSendCall;
    private SVCPostRecv[] recvCalls = new SVCPostRecv[0];
    private MemoryRegion[] recvMr = new MemoryRegion[0];
    private long[] recvRange = new long[0];       // offset << 32 | length the call was prepared for

    /** Accepting side. */
    DisniConnection(DisniProvider provider, EventLoop loop, RdmaCmId id, int sendDepth, int recvDepth, int initiatorDepth,
                    RdmaHandler handler, InetSocketAddress peer, InetSocketAddress local) {
        this(provider, loop, id, sendDepth, recvDepth, initiatorDepth, handler, null, null, 0, null);
        addresses(peer, local);
    }

    /** Connecting side. */
    DisniConnection(DisniProvider provider, EventLoop loop, RdmaCmId id, InetSocketAddress target, ConnectParams params,
                    int timeoutMs, RdmaHandler handler, CompletableFuture<RdmaConnection> connecting) {
        this(provider, loop, id, params.sendDepth(), params.recvDepth(), Math.max(1, params.initiatorDepth()),
                handler, target, params, timeoutMs, connecting);
        addresses(target, null);
    }

    private DisniConnection(DisniProvider provider, EventLoop loop, RdmaCmId id, int sendDepth, int recvDepth,
                            int initiatorDepth, RdmaHandler handler, InetSocketAddress target, ConnectParams params,
                            int timeoutMs, CompletableFuture<RdmaConnection> connecting) {
        super(loop, handler, connecting);
        this.provider = provider;
        this.id = id;
        this.sendDepth = sendDepth;
        this.recvDepth = recvDepth;
        negotiated(null, initiatorDepth);
        this.target = target;
        this.params = params;
        this.timeoutMs = timeoutMs;
        size(sendDepth, recvDepth);
        // every posted work request completes at most once: a chain's WRITE only when it fails
        this.ring = new CompletionRing(2 * sendDepth + recvDepth);
    }

    // ---- set-up (CM thread) ----

    /** Called by {@link CompletionQueue#register}. */
    void bind(CompletionQueue q, int t) {
        this.cq = q;
        this.tag = t;
    }

    int tag() {
        return tag;
    }

    /**
     * Reserves room on a completion queue of {@code d} and creates the queue pair: twice {@code
     * sendDepth} send work requests (a WRITE+SEND post takes two), {@code recvDepth} receive
     * ones, one SGE each, signaled per work request.
     */
    void createQp(DisniDevice d) throws IOException {
        this.device = d;
        int cqes = 2 * sendDepth + recvDepth;
        CompletionQueue q = d.reserve(cqes);
        try {
            q.register(this);
        } catch (RuntimeException e) {
            d.release(q, cqes);
            throw e;
        }
        reservedCqes = cqes;
        provider.connections.add(this);
        IbvQPInitAttr attr = new IbvQPInitAttr();
        attr.setQp_type(IbvQP.IBV_QPT_RC);
        attr.setSend_cq(q.cq);
        attr.setRecv_cq(q.cq);
        attr.cap().setMax_send_wr(2 * sendDepth);
        attr.cap().setMax_recv_wr(recvDepth);
        attr.cap().setMax_send_sge(1);
        attr.cap().setMax_recv_sge(1);
        attr.cap().setMax_inline_data(0);
        qp = id.createQP(d.pd, attr);
    }

    /** Accepting side: {@code rdma_accept}, without private data (DiSNI sends none). */
    void accept() throws IOException {
        RdmaConnParam p = new RdmaConnParam();
        p.setRetry_count(RETRY_COUNT);
        p.setRnr_retry_count(RNR_RETRY_COUNT);
        id.accept(p);
    }

    /** Connecting side: resolve the address; the rest follows the CM events, bounded by the timeout. */
    void startConnect() throws IOException {
        connectTimer = eventLoop().schedule(this::connectTimedOut, timeoutMs, TimeUnit.MILLISECONDS);
        id.resolveAddr(null, target, timeoutMs);
    }

    private void connectNow() throws IOException {
        createQp(provider.device(id.getVerbs()));
        RdmaConnParam p = new RdmaConnParam();
        p.setRetry_count(RETRY_COUNT);
        p.setRnr_retry_count(RNR_RETRY_COUNT);
        ByteBuffer data = null;
        ByteBuffer pd = params.privateData();
        if (pd != null && pd.hasRemaining()) {
            data = ByteBuffer.allocateDirect(pd.remaining());
            data.put(pd.duplicate()).flip();
            p.setPrivate_data(PlatformDependent.directBufferAddress(data));
            p.setPrivate_data_len((byte) data.remaining());
        }
        try {
            id.connect(p); // rdma_connect copies the private data
        } finally {
            Reference.reachabilityFence(data);
        }
    }

    // ---- CM events (CM thread) ----

    @Override
    public void onCmEvent(int event) {
        try {
            switch (event) {
                case CmEvents.ADDR_RESOLVED:
                    if (target != null && !connecting().isDone()) {
                        id.resolveRoute(timeoutMs);
                    }
                    return;
                case CmEvents.ROUTE_RESOLVED:
                    if (target != null && !connecting().isDone()) {
                        connectNow();
                    }
                    return;
                case CmEvents.ESTABLISHED:
                    addresses(DisniProvider.socketAddress(id.getDestination(), peer()),
                            DisniProvider.socketAddress(id.getSource(), localAddress()));
                    onLoop(() -> {
                        cancelConnectTimer();
                        established();
                    });
                    return;
                case CmEvents.DISCONNECTED:
                    onLoop(() -> beginClose(null));
                    return;
                case CmEvents.TIMEWAIT_EXIT:
                case CmEvents.ADDR_CHANGE:
                case CmEvents.CONNECT_RESPONSE:
                    LOG.log(System.Logger.Level.DEBUG, "{0} on {1}", CmEvents.name(event), this);
                    return;
                default:
                    if (CmEvents.isConnectFailure(event)) {
                        failed(event == CmEvents.REJECTED && target != null
                                ? new RdmaRejectedException("connect to " + target + " rejected (DiSNI passes on neither "
                                        + "the reject's private data nor its reason)", null)
                                : new IOException(CmEvents.name(event) + " on " + this));
                    } else {
                        LOG.log(System.Logger.Level.DEBUG, "{0} on {1}", CmEvents.name(event), this);
                    }
            }
        } catch (IOException | RuntimeException e) {
            failed(new IOException((target != null ? "cannot connect to " + target : this.toString()) + " (DiSNI): "
                    + String.valueOf(e.getMessage()).trim(), e));
        }
    }

    /** CM thread: the connect attempt failed, or the connection ended. */
    private void failed(IOException e) {
        onLoop(() -> {
            cancelConnectTimer();
            if (state() == ConnectionState.CONNECTING && target != null) {
                failConnect(e);
            } else {
                beginClose(e);
            }
        });
    }

    private void connectTimedOut() {
        failConnect(new IOException("no answer to the connect request to " + target + " within " + timeoutMs
                + " ms (rejected or unreachable: a DiSNI connect that the peer rejects may never return)"));
    }

    private void cancelConnectTimer() {
        if (connectTimer != null) {
            connectTimer.cancel(false);
        }
    }

    private void onLoop(Runnable r) {
        try {
            eventLoop().execute(r);
        } catch (RejectedExecutionException e) {
            abandon();                      // the loop is gone: nobody to tell
        }
    }

    // ---- the queue pair's verbs ----

    @Override
    protected void disconnect() {
        provider.onCm(this::disconnectNow);
    }

    /** CM thread: {@code rdma_disconnect}, once; moves the queue pair to the error state. */
    private void disconnectNow() {
        if (!disconnected && !destroyed) {
            disconnected = true;
            try {
                id.disconnect();
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "disconnect of {0}: {1}", this, e.getMessage());
            }
        }
    }

    @Override
    protected void destroy(Runnable done) {
        provider.onCm(() -> {
            disconnectNow();
            destroy();
            done.run();
        });
    }

    /**
     * CM thread: destroys the queue pair and the CM id, gives back the completion queue room
     * and frees the prepared calls (no post comes any more: the connection is past its end).
     * Idempotent.
     */
    void destroy() {
        if (destroyed) {
            return;
        }
        destroyed = true;
        provider.forget(id, this);
        if (qp != null) {
            try {
                id.destroyQP();
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "destroying the queue pair of {0}: {1}", this, e.getMessage());
            }
        }
        DisniProvider.destroyQuietly(id);
        if (cq != null) {
            cq.unregister(this);
            device.release(cq, reservedCqes);
        }
        freeCall(sendCall);
        freeCall(readCall);
        freeCall(writeSendCall);
        sendCall = readCall = writeSendCall = null;
        for (int i = 0; i < recvCalls.length; i++) {
            if (recvCalls[i] != null) {
                recvCalls[i].free();
                recvCalls[i] = null;
            }
        }
        provider.connections.remove(this);
    }

    @Override
    public void abandonOnClose() {
        abandon();
    }

    private static void freeCall(SVCPostSend c) {
        if (c != null) {
            c.free();
        }
    }

    // ---- completions ----

    /** Completion queue thread: one work completion of this connection. */
    void completed(long wrId, int status, int byteLen, int flags, int imm) {
        if (!ring.offer(wrId, status, byteLen, flags, imm)) {
            ringOverflow = true;
        }
    }

    /** Completion queue thread: completions were added; poll them on the loop. */
    void wake() {
        completionsReady();
    }

    @Override
    protected int poll(int max) throws IOException {
        if (ringOverflow) {
            throw new IOException("completion ring of " + this + " overflowed");
        }
        CompletionRing r = ring;
        int n = 0;
        while (n < max && r.next()) {
            n++;
            int status = r.currentStatus;
            complete(r.currentWrId, status, status == WorkCompletion.SUCCESS ? r.currentByteLen : 0,
                    DisniWc.invalidatedRkey(status, r.currentFlags, r.currentImm));
        }
        return n;
    }

    // ---- posting (event loop) ----

    @Override
    protected void doPostRecv(long wrId, MemoryRegion mr, int offset, int length) throws IOException {
        int i = (int) wrId;
        if (i >= recvCalls.length) {
            int n = Math.max(i + 1, 2 * recvCalls.length);
            recvCalls = Arrays.copyOf(recvCalls, n);
            recvMr = Arrays.copyOf(recvMr, n);
            recvRange = Arrays.copyOf(recvRange, n);
        }
        long range = (long) offset << 32 | length;
        SVCPostRecv c = recvCalls[i];
        if (c == null || recvMr[i] != mr || recvRange[i] != range) {
            if (c != null) {
                c.free();
                recvCalls[i] = null;
            }
            c = recvCalls[i] = prepareRecv(WrIds.id(tag, wrId), mr, offset, length);
            recvMr[i] = mr;
            recvRange[i] = range;
        }
        c.execute();
    }

    @Override
    protected void doPostSend(long wrId, MemoryRegion mr, int offset, int length, long invalidateRkey)
            throws IOException {
        send(WrIds.id(tag, wrId), mr, offset, length, invalidateRkey);
    }

    @Override
    protected void doPostRead(long wrId, MemoryRegion mr, int offset, int length, long remoteAddress, int rkey)
            throws IOException {
        SVCPostSend c = readCall;
        if (c == null) {
            c = readCall = qp.postSend(List.of(workRequest(0, IbvSendWR.IBV_WR_RDMA_READ, IbvSendWR.IBV_SEND_SIGNALED,
                    0, 0, 0, 0, 0, 0)), null);
        }
        SVCPostSend.SendWRMod m = c.getWrMod(0);
        m.setWr_id(WrIds.id(tag, wrId));
        sge(m, mr, offset, length);
        SVCPostSend.RdmaMod rdma = m.getRdmaMod();
        rdma.setRemote_addr(remoteAddress);
        rdma.setRkey(rkey);
        c.execute();
    }

    @Override
    protected void doPostWriteAndSend(long wrId, MemoryRegion mr, int offset, int length, long remoteAddress, int rkey,
                                      MemoryRegion msg, int msgOffset, int msgLength, long invalidateRkey)
            throws IOException {
        long nid = WrIds.id(tag, wrId);
        long wid = WrIds.id(tag, wrId | WRITE_PART);
        if (length == 0) {
            send(nid, msg, msgOffset, msgLength, invalidateRkey);
        } else if (invalidateRkey >= 0) {
            SVCPostSend c = qp.postSend(List.of(
                    workRequest(wid, IbvSendWR.IBV_WR_RDMA_WRITE, 0, mr.address() + offset, length, mr.lkey(),
                            remoteAddress, rkey, 0),
                    workRequest(nid, DisniWc.WR_SEND_WITH_INV, IbvSendWR.IBV_SEND_SIGNALED, msg.address() + msgOffset,
                            msgLength, msg.lkey(), 0, 0, (int) invalidateRkey)), null);
            try {
                c.execute();
            } finally {
                c.free();
            }
        } else {
            SVCPostSend c = writeSendCall;
            if (c == null) {
                c = writeSendCall = qp.postSend(List.of(
                        workRequest(0, IbvSendWR.IBV_WR_RDMA_WRITE, 0, 0, 0, 0, 0, 0, 0),
                        workRequest(0, IbvSendWR.IBV_WR_SEND, IbvSendWR.IBV_SEND_SIGNALED, 0, 0, 0, 0, 0, 0)), null);
            }
            SVCPostSend.SendWRMod w = c.getWrMod(0);
            w.setWr_id(wid);
            sge(w, mr, offset, length);
            SVCPostSend.RdmaMod rdma = w.getRdmaMod();
            rdma.setRemote_addr(remoteAddress);
            rdma.setRkey(rkey);
            SVCPostSend.SendWRMod s = c.getWrMod(1);
            s.setWr_id(nid);
            sge(s, msg, msgOffset, msgLength);
            c.execute();
        }
    }

    private void send(long nid, MemoryRegion mr, int offset, int length, long invalidateRkey) throws IOException {
        if (invalidateRkey >= 0) {
            SVCPostSend c = qp.postSend(List.of(workRequest(nid, DisniWc.WR_SEND_WITH_INV, IbvSendWR.IBV_SEND_SIGNALED,
                    mr.address() + offset, length, mr.lkey(), 0, 0, (int) invalidateRkey)), null);
            try {
                c.execute();
            } finally {
                c.free();
            }
            return;
        }
        SVCPostSend c = sendCall;
        if (c == null) {
            c = sendCall = qp.postSend(List.of(workRequest(0, IbvSendWR.IBV_WR_SEND, IbvSendWR.IBV_SEND_SIGNALED,
                    0, 0, 0, 0, 0, 0)), null);
        }
        SVCPostSend.SendWRMod m = c.getWrMod(0);
        m.setWr_id(nid);
        sge(m, mr, offset, length);
        c.execute();
    }

    private static void sge(SVCPostSend.SendWRMod m, MemoryRegion mr, int offset, int length) {
        SVCPostSend.SgeMod g = m.getSgeMod(0);
        g.setAddr(mr.address() + offset);
        g.setLength(length);
        g.setLkey(mr.lkey());
    }

    private static IbvSendWR workRequest(long wrId, int opcode, int flags, long addr, int length, int lkey,
                                         long remoteAddress, int rkey, int immOrInvalidate) {
        IbvSge sge = new IbvSge();
        sge.setAddr(addr);
        sge.setLength(length);
        sge.setLkey(lkey);
        LinkedList<IbvSge> sges = new LinkedList<>();
        sges.add(sge);
        IbvSendWR wr = new IbvSendWR();
        wr.setWr_id(wrId);
        wr.setSg_list(sges);
        wr.setNum_sge(1);
        wr.setOpcode(opcode);
        wr.setSend_flags(flags);
        // imm_data shares its place with invalidate_rkey in ibv_send_wr; DiSNI writes it in native order
        wr.setImm_data(immOrInvalidate);
        wr.getRdma().setRemote_addr(remoteAddress);
        wr.getRdma().setRkey(rkey);
        return wr;
    }

    private SVCPostRecv prepareRecv(long nid, MemoryRegion mr, int offset, int length) throws IOException {
        IbvSge sge = new IbvSge();
        sge.setAddr(mr.address() + offset);
        sge.setLength(length);
        sge.setLkey(mr.lkey());
        LinkedList<IbvSge> sges = new LinkedList<>();
        sges.add(sge);
        IbvRecvWR wr = new IbvRecvWR();
        wr.setWr_id(nid);
        wr.setSg_list(sges);
        wr.setNum_sge(1);
        List<IbvRecvWR> list = new ArrayList<>(1);
        list.add(wr);
        return qp.postRecv(list, null);
    }

    // ---- RdmaConnection ----

    @Override
    public ProtectionDomain pd() {
        return device.domain;
    }

    @Override
    public String toString() {
        return "DiSNI RDMA connection " + localAddress() + " <-> " + peer();
    }
}
