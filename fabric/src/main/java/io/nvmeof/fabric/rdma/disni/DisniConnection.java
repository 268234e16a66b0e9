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
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * One reliable-connected queue pair over DiSNI.
 *
 * <p>Posting: one prepared {@code SVCPostSend} per kind (SEND, RDMA READ, and the WRITE+SEND
 * chain as one two-request list) is built on first use and then only modified in place (wr_id,
 * flags, SGE, remote address and key) and executed again: {@code ibv_post_send} copies the work
 * requests, so one prepared call per kind suffices on the one loop that posts. Receives keep
 * one prepared {@code SVCPostRecv} per id and buffer ({@link RecvCache}). A SEND with
 * Invalidate is the one post that builds its call each time: DiSNI cannot change the {@code
 * invalidate_rkey} (its {@code imm_data}) of a prepared call.
 *
 * <p>Ending: on {@link #close}, a failed completion or the peer's disconnect the connection
 * stops delivering, disconnects (which moves the queue pair to the error state, so everything
 * posted flushes), waits until every posted work request has completed (bounded), destroys the
 * queue pair and the CM id on the CM thread and then tells the handler. Flushed completions are
 * not delivered; a completion that failed otherwise is, and ends the connection.
 */
final class DisniConnection implements RdmaConnection, DisniProvider.CmEndpoint {
    private static final System.Logger LOG = System.getLogger(DisniConnection.class.getName());
    private static final int FLUSH_TIMEOUT_MS = 5000;
    private static final byte RETRY_COUNT = 7;
    /** 7: retry for ever, as the Linux and SPDK NVMe/RDMA hosts and targets do. */
    private static final byte RNR_RETRY_COUNT = 7;
    private static final AtomicIntegerFieldUpdater<DisniConnection> WAKE =
            AtomicIntegerFieldUpdater.newUpdater(DisniConnection.class, "wakeScheduled");

    private final DisniProvider provider;
    private final EventLoop loop;
    final RdmaCmId id;
    private final boolean active;
    private final int sendDepth;
    private final int recvDepth;
    private final int initiatorDepth;
    private volatile RdmaHandler handler;

    // active side
    private final InetSocketAddress target;
    private final ConnectParams params;
    private final int timeoutMs;
    private final CompletableFuture<RdmaConnection> connecting;
    private ScheduledFuture<?> connectTimer;

    // set on the CM thread before the connection is handed out
    private DisniDevice device;
    private CompletionQueue cq;
    private int tag;
    private int reservedCqes;
    private IbvQP qp;
    private volatile InetSocketAddress peer;
    private volatile InetSocketAddress local;
    private volatile boolean established;
    private volatile boolean endedFlag;

    // CM thread
    private boolean disconnected;
    private boolean destroyed;

    // completion queue thread
    boolean inBatch;
    private volatile int wakeScheduled;
    private volatile boolean ringOverflow;
    private final CompletionRing ring;
    private final Runnable drainTask = this::drain;

    // event loop
    private final SendSlots sends;
    private final RecvCache<SVCPostRecv> recvs;
    private SVCPostSend sendCall;
    private SVCPostSend readCall;
    private SVCPostSend writeSendCall;
    private boolean ended;
    private boolean finishing;
    private Throwable cause;
    private ScheduledFuture<?> flushTimer;

    /** Accepting side. */
    DisniConnection(DisniProvider provider, EventLoop loop, RdmaCmId id, int sendDepth, int recvDepth, int initiatorDepth,
                    RdmaHandler handler, InetSocketAddress peer, InetSocketAddress local) {
        this(provider, loop, id, false, sendDepth, recvDepth, initiatorDepth, handler, null, null, 0, null);
        this.peer = peer;
        this.local = local;
    }

    /** Connecting side. */
    DisniConnection(DisniProvider provider, EventLoop loop, RdmaCmId id, InetSocketAddress target, ConnectParams params,
                    int timeoutMs, RdmaHandler handler, CompletableFuture<RdmaConnection> connecting) {
        this(provider, loop, id, true, params.sendDepth(), params.recvDepth(), Math.max(1, params.initiatorDepth()),
                handler, target, params, timeoutMs, connecting);
        this.peer = target;
    }

    private DisniConnection(DisniProvider provider, EventLoop loop, RdmaCmId id, boolean active, int sendDepth,
                            int recvDepth, int initiatorDepth, RdmaHandler handler, InetSocketAddress target,
                            ConnectParams params, int timeoutMs, CompletableFuture<RdmaConnection> connecting) {
        this.provider = provider;
        this.loop = loop;
        this.id = id;
        this.active = active;
        this.sendDepth = sendDepth;
        this.recvDepth = recvDepth;
        this.initiatorDepth = initiatorDepth;
        this.handler = handler;
        this.target = target;
        this.params = params;
        this.timeoutMs = timeoutMs;
        this.connecting = connecting;
        this.sends = new SendSlots(sendDepth);
        this.recvs = new RecvCache<>(2 * recvDepth + 16, SVCPostRecv::free);
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
        connectTimer = loop.schedule(this::connectTimedOut, timeoutMs, TimeUnit.MILLISECONDS);
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
                    if (active && !connecting.isDone()) {
                        id.resolveRoute(timeoutMs);
                    }
                    return;
                case CmEvents.ROUTE_RESOLVED:
                    if (active && !connecting.isDone()) {
                        connectNow();
                    }
                    return;
                case CmEvents.ESTABLISHED:
                    local = DisniProvider.socketAddress(id.getSource(), local);
                    peer = DisniProvider.socketAddress(id.getDestination(), peer);
                    established = true;
                    if (active) {
                        loop.execute(this::connected);
                    }
                    return;
                case CmEvents.DISCONNECTED:
                    disconnect();
                    endFromCm(new IOException("disconnected by the peer " + peer));
                    return;
                case CmEvents.TIMEWAIT_EXIT:
                case CmEvents.ADDR_CHANGE:
                case CmEvents.CONNECT_RESPONSE:
                    LOG.log(System.Logger.Level.DEBUG, "{0} on {1}", CmEvents.name(event), this);
                    return;
                default:
                    if (CmEvents.isConnectFailure(event)) {
                        failed(event);
                    } else {
                        LOG.log(System.Logger.Level.DEBUG, "{0} on {1}", CmEvents.name(event), this);
                    }
            }
        } catch (IOException | RuntimeException e) {
            if (active && !established) {
                failConnect(new IOException("cannot connect to " + target + " (DiSNI): "
                        + String.valueOf(e.getMessage()).trim(), e));
            } else {
                endFromCm(e instanceof IOException ? (IOException) e : new IOException(e.toString(), e));
            }
        }
    }

    private void failed(int event) {
        if (active && !established) {
            IOException e = event == CmEvents.REJECTED
                    ? new RdmaRejectedException("connect to " + target + " rejected (DiSNI passes on neither the reject's "
                            + "private data nor its reason)", null)
                    : new IOException("cannot connect to " + target + ": " + CmEvents.name(event));
            failConnect(e);
        } else {
            disconnect();
            endFromCm(new IOException(CmEvents.name(event) + " on the connection with " + peer));
        }
    }

    /** CM thread: fail the connect attempt, once, and destroy what it made. */
    private void failConnect(IOException e) {
        loop.execute(() -> {
            if (connecting.completeExceptionally(e)) {
                cancelConnectTimer();
                markEnded();
                provider.cmExecute(this::destroy);
            }
        });
    }

    /** Event loop: the connect was established. */
    private void connected() {
        cancelConnectTimer();
        if (!connecting.complete(this)) {
            // timed out or failed meanwhile: this connection was never handed out
            markEnded();
            provider.cmExecute(() -> {
                disconnect();
                destroy();
            });
        }
    }

    private void connectTimedOut() {
        if (connecting.completeExceptionally(new IOException("no answer to the connect request to " + target + " within "
                + timeoutMs + " ms (rejected or unreachable: a DiSNI connect that the peer rejects may never return)"))) {
            markEnded();
            provider.cmExecute(() -> {
                disconnect();
                destroy();
            });
        }
    }

    private void cancelConnectTimer() {
        if (connectTimer != null) {
            connectTimer.cancel(false);
        }
    }

    private void markEnded() {
        ended = true;
        endedFlag = true;
    }

    /** CM thread: {@code rdma_disconnect}, once; moves the queue pair to the error state. */
    private void disconnect() {
        if (!disconnected && !destroyed) {
            disconnected = true;
            try {
                id.disconnect();
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "disconnect of {0}: {1}", this, e.getMessage());
            }
        }
    }

    /** CM thread: destroys the queue pair and the CM id and gives back the completion queue room. Idempotent. */
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
        provider.connections.remove(this);
    }

    @Override
    public void abandon() {
        endedFlag = true;
        disconnect();
        destroy();
    }

    private void endFromCm(IOException e) {
        try {
            loop.execute(() -> end(e));
        } catch (RuntimeException rejected) {
            // the loop is gone: nobody to tell
            destroy();
        }
    }

    // ---- completions ----

    /** Completion queue thread: one work completion of this connection. */
    void completed(long wrId, int status, int byteLen, int flags, int imm) {
        if (!ring.offer(wrId, status, byteLen, flags, imm)) {
            ringOverflow = true;
        }
    }

    /** Completion queue thread: completions were added; drain them on the loop. */
    void wake() {
        if (WAKE.compareAndSet(this, 0, 1)) {
            try {
                loop.execute(drainTask);
            } catch (RuntimeException e) {
                WAKE.set(this, 0);
            }
        }
    }

    private void drain() {
        WAKE.set(this, 0);
        CompletionRing r = ring;
        while (r.next()) {
            long wrId = r.currentWrId;
            int status = r.currentStatus;
            if (WrIds.isRecv(wrId)) {
                RecvCache.Entry<SVCPostRecv> e = recvs.complete(WrIds.indexOf(wrId));
                if (e != null && !ended) {
                    deliver(e.wrId, WorkCompletion.RECV, status, status == WorkCompletion.SUCCESS ? r.currentByteLen : 0,
                            DisniWc.invalidatedRkey(status, r.currentFlags, r.currentImm), WorkCompletion.RECV);
                }
                continue;
            }
            int slot = WrIds.indexOf(wrId);
            if (!sends.inUse(slot)) {
                continue;
            }
            if (WrIds.isWritePart(wrId)) {
                sends.writeCompleted(slot, status);
                continue;
            }
            long userId = sends.wrId(slot);
            int op = sends.opcode(slot);
            int st = sends.status(slot, status);
            int len = op == WorkCompletion.RDMA_READ && st == WorkCompletion.SUCCESS ? sends.length(slot) : 0;
            int failedOp = sends.writeFailed(slot) ? WorkCompletion.RDMA_WRITE : op;
            sends.release(slot);
            if (!ended) {
                deliver(userId, op, st, len, -1, failedOp);
            }
        }
        if (ringOverflow && !ended) {
            end(new IOException("completion ring of " + this + " overflowed"));
        }
        if (ended) {
            finishIfQuiet();
        }
    }

    /** Hands one completion to the handler; {@code failedOp} names the work request that failed, if one did. */
    private void deliver(long wrId, int op, int status, int byteLen, long invalidated, int failedOp) {
        if (DisniWc.isFlush(status)) {
            end(new IOException(DisniWc.failure(failedOp, status) + " on " + this + ": the queue pair is in the error state"));
            return;
        }
        RdmaHandler h = handler;
        try {
            h.onCompletion(wrId, op, status, byteLen, invalidated);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "completion handler of " + this + " failed; closing", e);
            end(new IOException("completion handler failed: " + e, e));
            return;
        }
        if (status != WorkCompletion.SUCCESS) {
            end(new IOException(DisniWc.failure(failedOp, status) + " on " + this));
        }
    }

    // ---- ending (event loop) ----

    private void end(Throwable why) {
        if (ended) {
            return;
        }
        markEnded();
        cause = why;
        provider.cmExecute(this::disconnect);
        finishIfQuiet();
        if (!finishing) {
            flushTimer = loop.schedule(this::finish, FLUSH_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
    }

    private void finishIfQuiet() {
        if (!finishing && sends.inUse() == 0 && recvs.posted() == 0) {
            finish();
        }
    }

    private void finish() {
        if (finishing) {
            return;
        }
        finishing = true;
        if (flushTimer != null) {
            flushTimer.cancel(false);
        }
        provider.cmExecute(() -> {
            disconnect();
            destroy();
            try {
                loop.execute(this::disconnected);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "event loop of {0} is gone", this);
            }
        });
    }

    private boolean endDelivered;

    /** This connection's place in the common lifecycle. */
    ConnectionState state() {
        return !ended ? (established ? ConnectionState.ESTABLISHED : ConnectionState.CONNECTING)
                : endDelivered ? ConnectionState.CLOSED : ConnectionState.DRAINING;
    }

    private void disconnected() {
        freeCall(sendCall);
        freeCall(readCall);
        freeCall(writeSendCall);
        sendCall = readCall = writeSendCall = null;
        recvs.clear();
        RdmaHandler h = handler;
        handler = null;
        endDelivered = true;
        if (h != null) {
            try {
                h.onDisconnected(cause);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "disconnect handler of " + this + " failed", e);
            }
        }
    }

    private static void freeCall(SVCPostSend c) {
        if (c != null) {
            c.free();
        }
    }

    @Override
    public void close() {
        if (loop.inEventLoop()) {
            end(null);
            return;
        }
        try {
            loop.execute(() -> end(null));
        } catch (RejectedExecutionException e) {
            // the event loop is shut down: nobody is left to tell, just release the queue pair
            provider.cmExecute(this::abandon);
        }
    }

    @Override
    public boolean isOpen() {
        return established && !endedFlag;
    }

    // ---- posting (event loop) ----

    @Override
    public void postRecv(long wrId, MemoryRegion mr, int offset, int length) {
        checkLocal(mr, offset, length);
        if (!state().admitsPost(this)) {
            return;
        }
        if (recvs.posted() >= recvDepth) {
            throw new IllegalStateException("receive queue full (" + recvDepth + " work requests)");
        }
        RecvCache.Entry<SVCPostRecv> e = recvs.post(wrId, mr, offset, length);
        try {
            if (e.prepared == null) {
                e.prepared = prepareRecv(WrIds.id(tag, WrIds.RECV, e.index), mr, offset, length);
            }
            e.prepared.execute();
        } catch (IOException ex) {
            recvs.unpost(e);
            end(ex);
        }
    }

    @Override
    public void postSend(long wrId, MemoryRegion mr, int offset, int length, long invalidateRkey) {
        checkLocal(mr, offset, length);
        if (!state().admitsPost(this)) {
            return;
        }
        int slot = takeSlot(wrId, WorkCompletion.SEND, 0);
        try {
            send(WrIds.id(tag, 0, slot), mr, offset, length, invalidateRkey);
        } catch (IOException e) {
            sends.release(slot);
            end(e);
        }
    }

    @Override
    public void postRead(long wrId, MemoryRegion mr, int offset, int length, long remoteAddress, int rkey) {
        checkLocal(mr, offset, length);
        if ((mr.access() & MemoryRegion.LOCAL_WRITE) == 0) {
            throw new IllegalArgumentException("RDMA READ into a region without local write access");
        }
        if (!state().admitsPost(this)) {
            return;
        }
        int slot = takeSlot(wrId, WorkCompletion.RDMA_READ, length);
        try {
            SVCPostSend c = readCall;
            if (c == null) {
                c = readCall = qp.postSend(List.of(workRequest(0, IbvSendWR.IBV_WR_RDMA_READ, IbvSendWR.IBV_SEND_SIGNALED,
                        0, 0, 0, 0, 0, 0)), null);
            }
            SVCPostSend.SendWRMod m = c.getWrMod(0);
            m.setWr_id(WrIds.id(tag, 0, slot));
            sge(m, mr, offset, length);
            SVCPostSend.RdmaMod rdma = m.getRdmaMod();
            rdma.setRemote_addr(remoteAddress);
            rdma.setRkey(rkey);
            c.execute();
        } catch (IOException e) {
            sends.release(slot);
            end(e);
        }
    }

    @Override
    public void postWriteAndSend(long wrId, MemoryRegion mr, int offset, int length, long remoteAddress, int rkey,
                                 MemoryRegion msg, int msgOffset, int msgLength, long invalidateRkey) {
        checkLocal(mr, offset, length);
        checkLocal(msg, msgOffset, msgLength);
        if (!state().admitsPost(this)) {
            return;
        }
        int slot = takeSlot(wrId, WorkCompletion.SEND, 0);
        long nid = WrIds.id(tag, 0, slot);
        try {
            if (length == 0) {
                send(nid, msg, msgOffset, msgLength, invalidateRkey);
            } else if (invalidateRkey >= 0) {
                SVCPostSend c = qp.postSend(List.of(
                        workRequest(nid | WrIds.WRITE_PART, IbvSendWR.IBV_WR_RDMA_WRITE, 0, mr.address() + offset, length,
                                mr.lkey(), remoteAddress, rkey, 0),
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
                w.setWr_id(nid | WrIds.WRITE_PART);
                sge(w, mr, offset, length);
                SVCPostSend.RdmaMod rdma = w.getRdmaMod();
                rdma.setRemote_addr(remoteAddress);
                rdma.setRkey(rkey);
                SVCPostSend.SendWRMod s = c.getWrMod(1);
                s.setWr_id(nid);
                sge(s, msg, msgOffset, msgLength);
                c.execute();
            }
        } catch (IOException e) {
            sends.release(slot);
            end(e);
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

    private int takeSlot(long wrId, int op, int length) {
        int slot = sends.take(wrId, op, length);
        if (slot < 0) {
            throw new IllegalStateException("send queue full (" + sendDepth + " work requests)");
        }
        return slot;
    }

    private void checkLocal(MemoryRegion mr, int offset, int length) {
        mr.checkLocal(device.domain, offset, length, loop.inEventLoop());
    }

    // ---- RdmaConnection ----

    @Override
    public EventLoop eventLoop() {
        return loop;
    }

    @Override
    public ProtectionDomain pd() {
        return device.domain;
    }

    @Override
    public InetSocketAddress peer() {
        return peer;
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    /** Always null: DiSNI shows Java neither a request's nor an accept's private data. */
    @Override
    public ByteBuffer privateData() {
        return null;
    }

    @Override
    public int initiatorDepth() {
        return initiatorDepth;
    }

    @Override
    public String toString() {
        return "DiSNI RDMA connection " + local + " <-> " + peer;
    }
}
