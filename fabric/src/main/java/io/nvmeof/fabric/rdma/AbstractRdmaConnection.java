package io.nvmeof.fabric.rdma;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * The life of one RDMA connection, the same for every provider. A provider brings the
 * connection up (its connection manager) and supplies the queue pair's verbs: post, poll,
 * disconnect and destroy. Everything else is here, once.
 *
 * <p><b>State</b> ({@link ConnectionState}): CONNECTING until the connection manager's
 * exchange is done ({@link #established()}; the accepting side may post and receive
 * completions already, since its receive ring is posted before the accept leaves);
 * ESTABLISHED; DRAINING from the first sign of the end (a {@link #close}, the peer's
 * disconnect, a failed completion) until the queue pair is quiet and destroyed; CLOSED, when
 * the handler's {@link RdmaHandler#onDisconnected} is called, exactly once, on the loop.
 *
 * <p><b>Work request ids</b>: the caller's ids stay in this class's tables (send slots and
 * receive entries). The provider posts each work request under an id whose low 32 bits are
 * its slot or receive index, with {@link #RECV} set for a receive and {@link #WRITE_PART} for
 * the RDMA WRITE of a WRITE+SEND chain; bits from 40 up are the provider's own (DiSNI tags
 * the connection there, its completion queue being shared). So a completion is reported with
 * the opcode and length it was posted with (a failed completion's own are undefined in
 * verbs), a late or foreign completion is recognised and dropped, and the connection knows at
 * every moment how many work requests the device still holds.
 *
 * <p><b>Completions</b> reach the handler on the connection's event loop only: the provider
 * says {@link #completionsReady()} from whatever thread learns of them, and this class runs
 * {@link #poll} on the loop in batches, re-arming ({@link #arm}) and polling once more to
 * close the race with the arming, or re-scheduling itself when the provider busy-polls. A
 * provider that learns of completions on the loop itself calls {@link #complete} directly. A
 * failed completion is delivered (with the opcode of the work request that failed) and ends
 * the connection with a cause that names the status; a flushed one ends it without being
 * delivered.
 *
 * <p><b>Ending</b>: {@link #beginClose} disconnects ({@link #disconnect}: the queue pair goes
 * to the error state, so the device flushes everything posted), absorbs completions without
 * delivering them until no work request is outstanding (or {@value #QUIET_WAIT_MS} ms have
 * passed, or the provider reports the queue pair flushed), then {@link #destroy}s the queue
 * pair and only then tells the handler: by then nothing can touch a buffer that was posted,
 * and every post throws.
 */
public abstract class AbstractRdmaConnection implements RdmaConnection {
    private static final System.Logger LOG = System.getLogger(AbstractRdmaConnection.class.getName());

    /** Id bit of a receive work request. */
    public static final long RECV = 1L << 39;
    /** Id bit of the RDMA WRITE half of a WRITE+SEND chain (unsignaled: it completes only when it fails). */
    public static final long WRITE_PART = 1L << 38;
    /** The bits of an id that are this class's; the provider may use the others. */
    public static final long ID_MASK = (1L << 40) - 1;
    /** How long an ending connection waits for its queue pair to flush before it destroys it anyway. */
    public static final int QUIET_WAIT_MS = 3000;
    /** Completions polled at once. */
    protected static final int BATCH = 16;

    private static final AtomicIntegerFieldUpdater<AbstractRdmaConnection> WAKE =
            AtomicIntegerFieldUpdater.newUpdater(AbstractRdmaConnection.class, "wakeScheduled");

    private final CompletableFuture<RdmaConnection> connecting;
    private EventLoop loop;
    private volatile ConnectionState state = ConnectionState.CONNECTING;
    private RdmaHandler handler;
    private Throwable cause;
    private SendSlots sends = new SendSlots(0);
    private RecvTable recvs = new RecvTable(0);
    private int recvDepth;
    private boolean finishing;
    private ScheduledFuture<?> quietTimer;
    private volatile int wakeScheduled;
    private final Runnable drainTask = this::drain;
    private volatile RdmaEnds ends = RdmaEnds.NONE;

    /**
     * @param loop       the connection's event loop (null: set later with {@link #eventLoop(EventLoop)})
     * @param handler    where completions and the end go (null: set at the accept)
     * @param connecting the connecting side's future, completed by {@link #established()} or
     *                   {@link #failConnect}; null on the accepting side
     */
    protected AbstractRdmaConnection(EventLoop loop, RdmaHandler handler, CompletableFuture<RdmaConnection> connecting) {
        this.loop = loop;
        this.handler = handler;
        this.connecting = connecting;
    }

    // ---- what a provider supplies

    /** Posts a receive under {@code id}. Loop; the connection is not DRAINING or CLOSED. */
    protected abstract void doPostRecv(long id, MemoryRegion mr, int offset, int length) throws IOException;

    /** Posts a signaled SEND (with Invalidate when {@code invalidateRkey} >= 0) under {@code id}. */
    protected abstract void doPostSend(long id, MemoryRegion mr, int offset, int length, long invalidateRkey)
            throws IOException;

    /** Posts a signaled RDMA READ under {@code id}. */
    protected abstract void doPostRead(long id, MemoryRegion mr, int offset, int length, long remoteAddress, int rkey)
            throws IOException;

    /**
     * Posts an unsignaled RDMA WRITE (its id, should it fail: {@code id | WRITE_PART}) chained
     * to a signaled SEND under {@code id}; a WRITE of no bytes may be left out.
     */
    protected abstract void doPostWriteAndSend(long id, MemoryRegion mr, int offset, int length, long remoteAddress,
                                               int rkey, MemoryRegion msg, int msgOffset, int msgLength,
                                               long invalidateRkey) throws IOException;

    /**
     * Polls up to {@code max} completions from the provider's completion queue, handing each to
     * {@link #complete}; returns how many. Loop. Providers that call {@link #complete} on their
     * own keep the default, which polls nothing.
     */
    protected int poll(int max) throws IOException {
        return 0;
    }

    /** Asks to be told ({@link #completionsReady}) of the next completion. Loop. */
    protected void arm() throws IOException {
    }

    /** Whether the loop polls without ever arming (a core given to the connection). */
    protected boolean busyPoll() {
        return false;
    }

    /** Starts the end on the wire: the queue pair to the error state, a disconnect to the peer. Loop, once. */
    protected abstract void disconnect();

    /**
     * Releases the queue pair and everything native of the connection (idempotent), then runs
     * {@code done} (on any thread). Called once nothing is outstanding or the wait for it is
     * over, before the handler hears of the end.
     */
    protected abstract void destroy(Runnable done);

    // ---- for the provider

    /** Records the two ends' addresses (a connecting side knows the peer first, both once routed). */
    protected final void addresses(InetSocketAddress peer, InetSocketAddress local) {
        ends = ends.withAddresses(peer, local);
    }

    /** Records what the peer said while connecting: its private data (kept, not copied) and the initiator depth. */
    protected final void negotiated(ByteBuffer privateData, int initiatorDepth) {
        ends = ends.withNegotiated(privateData, initiatorDepth);
    }

    @Override
    public final RdmaEnds ends() {
        return ends;
    }

    /** Sizes the work request tables (when the queue pair is created). */
    protected final void size(int sendDepth, int recvDepth) {
        if (sendDepth < 1 || recvDepth < 1) {
            throw new IllegalArgumentException("queue pair depths must be positive: send " + sendDepth + ", recv "
                    + recvDepth);
        }
        this.sends = new SendSlots(sendDepth);
        this.recvs = new RecvTable(2 * recvDepth + 16);
        this.recvDepth = recvDepth;
    }

    /** Sets the event loop when it was not known at construction. */
    protected final void eventLoop(EventLoop l) {
        this.loop = l;
    }

    /** Sets the handler (the accepting side, at the accept). */
    protected final void handler(RdmaHandler h) {
        this.handler = h;
    }

    /** The connecting side's future, null on the accepting side. */
    protected final CompletableFuture<RdmaConnection> connecting() {
        return connecting;
    }

    public final ConnectionState state() {
        return state;
    }

    /**
     * The connection manager's exchange is done: ESTABLISHED. The connecting side hands the
     * connection out now (and ends it if the caller gave up meanwhile). Loop.
     */
    protected final void established() {
        if (state != ConnectionState.CONNECTING) {
            return;
        }
        state = ConnectionState.ESTABLISHED;
        if (connecting != null && !connecting.complete(this)) {
            beginClose(null);
        }
    }

    /** The connecting side failed before it was handed out: destroy, fail the future. Loop. */
    protected final void failConnect(Throwable t) {
        if (state != ConnectionState.CONNECTING || connecting == null) {
            return;
        }
        state = ConnectionState.CLOSED;
        finishing = true;
        destroy(() -> connecting.completeExceptionally(t));
    }

    /** Any thread: the completion queue has news; {@link #poll} runs on the loop soon. */
    protected final void completionsReady() {
        if (WAKE.compareAndSet(this, 0, 1)) {
            try {
                loop.execute(drainTask);
            } catch (RejectedExecutionException e) {
                WAKE.set(this, 0);            // the loop is gone
            }
        }
    }

    /**
     * One completion of the work request posted under {@code id} (the provider's bits masked
     * off or not). Loop. {@code byteLength} counts for a receive; an RDMA READ reports the
     * length it was posted with; {@code invalidatedRkey} (or -1) for a receive of a SEND with
     * Invalidate.
     */
    protected final void complete(long id, int status, int byteLength, long invalidatedRkey) {
        long wrId;
        int op;
        int st = status;
        int len = 0;
        int failedOp;
        if ((id & RECV) != 0) {
            int i = (int) id;
            if (!recvs.isPosted(i)) {
                return;
            }
            wrId = recvs.complete(i);
            op = failedOp = WorkCompletion.RECV;
            len = byteLength;
        } else {
            int slot = (int) id;
            if (!sends.inUse(slot)) {
                return;
            }
            if ((id & WRITE_PART) != 0) {
                sends.writeCompleted(slot, status);
                return;
            }
            wrId = sends.wrId(slot);
            op = sends.opcode(slot);
            st = sends.status(slot, status);
            failedOp = sends.writeFailed(slot) ? WorkCompletion.RDMA_WRITE : op;
            if (op == WorkCompletion.RDMA_READ) {
                len = sends.length(slot);
            }
            sends.release(slot);
        }
        ConnectionState s = state;
        if (s == ConnectionState.DRAINING) {
            finishIfQuiet();
            return;
        }
        if (s == ConnectionState.CLOSED) {
            return;
        }
        if (st == WorkCompletion.SUCCESS) {
            deliver(wrId, op, st, len, op == WorkCompletion.RECV ? invalidatedRkey : -1);
            return;
        }
        IOException why = new IOException(WorkCompletion.failure(failedOp, st) + " on " + this
                + (st == WorkCompletion.WR_FLUSH_ERR ? ": the queue pair is in the error state" : ""));
        if (cause == null) {
            cause = why;                      // (the handler may close the connection as it hears of it)
        }
        if (st != WorkCompletion.WR_FLUSH_ERR) {
            deliver(wrId, op, st, 0, -1);
        }
        beginClose(why);
    }

    private void deliver(long wrId, int op, int status, int len, long invalidated) {
        try {
            handler.onCompletion(wrId, op, status, len, invalidated);
        } catch (RuntimeException | Error x) {
            LOG.log(System.Logger.Level.WARNING, "the completion handler of " + this + " failed; closing", x);
            beginClose(new IOException("completion handler failed: " + x, x));
        }
    }

    /**
     * Ends the connection (first call wins; {@code why} null: an orderly end): DRAINING, the
     * provider disconnects, and once the queue pair is quiet it is destroyed and the handler
     * told. Before the connecting side was handed out: the connect fails. Loop.
     */
    protected final void beginClose(Throwable why) {
        ConnectionState s = state;
        if (s == ConnectionState.DRAINING || s == ConnectionState.CLOSED) {
            return;
        }
        if (s == ConnectionState.CONNECTING && connecting != null) {
            failConnect(why != null ? why : new IOException(this + " was closed before it was established"));
            return;
        }
        state = ConnectionState.DRAINING;
        if (cause == null) {
            cause = why;
        }
        try {
            disconnect();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "disconnecting {0}: {1}", this, e.toString());
        }
        if (!finishIfQuiet()) {
            quietTimer = loop.schedule(this::finish, QUIET_WAIT_MS, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * The queue pair will complete nothing more (a software provider's stream closed): every
     * outstanding work request is gone without a completion. Loop.
     */
    protected final void queuePairFlushed() {
        sends.clear();
        recvs.clear();
        if (state == ConnectionState.DRAINING) {
            finishIfQuiet();
        }
    }

    /** Whether the end is under way past the wait: nothing may be polled from the provider any more. */
    protected final boolean finishing() {
        return finishing;
    }

    private boolean finishIfQuiet() {
        if (!finishing && sends.inUse() == 0 && recvs.posted() == 0) {
            finish();
        }
        return finishing;
    }

    private void finish() {
        if (finishing) {
            return;
        }
        finishing = true;
        if (quietTimer != null) {
            quietTimer.cancel(false);
            quietTimer = null;
        }
        destroy(this::destroyed);
    }

    /** The handler hears of the end in a task of its own, never inside one of its own calls (a close, a completion). */
    private void destroyed() {
        try {
            loop.execute(this::ended);
        } catch (RejectedExecutionException e) {
            state = ConnectionState.CLOSED;   // the loop is gone: nobody to tell
        }
    }

    private void ended() {
        if (state == ConnectionState.CLOSED) {
            return;
        }
        state = ConnectionState.CLOSED;
        sends.clear();
        recvs.clear();
        RdmaHandler h = handler;
        handler = null;
        if (h != null) {
            try {
                h.onDisconnected(cause);
            } catch (RuntimeException | Error x) {
                LOG.log(System.Logger.Level.WARNING, "onDisconnected of " + this + " threw", x);
            }
        }
    }

    /**
     * The provider closes: end this connection from any thread; at once, without telling the
     * handler, when its loop is gone.
     */
    public final void shutdown(Throwable why) {
        try {
            loop.execute(() -> beginClose(why));
        } catch (RejectedExecutionException e) {
            abandon();
        }
    }

    /** Disconnects and destroys now, from any thread, telling nobody: the loop is gone. */
    protected final void abandon() {
        synchronized (this) {
            if (state == ConnectionState.CLOSED) {
                return;
            }
            state = ConnectionState.CLOSED;
            finishing = true;
        }
        try {
            disconnect();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "disconnecting {0}: {1}", this, e.toString());
        }
        destroy(() -> { });
    }

    // ---- drain

    private void drain() {
        WAKE.set(this, 0);
        boolean armed = false;
        while (!finishing && state != ConnectionState.CLOSED) {
            int n;
            try {
                n = poll(BATCH);
            } catch (IOException e) {
                beginClose(e);
                return;
            }
            if (finishing) {
                return;                       // the queue pair is gone (or going): nothing to arm
            }
            if (n == BATCH) {
                continue;
            }
            if (busyPoll()) {
                try {
                    loop.execute(drainTask);
                } catch (RejectedExecutionException x) {
                    // the loop is shutting down
                }
                return;
            }
            if (armed) {
                if (n == 0) {
                    return;
                }
                continue;
            }
            try {
                arm();
            } catch (IOException e) {
                beginClose(e);
                return;
            }
            armed = true;
        }
    }

    /** Starts polling on the loop (busy-polling providers, once the queue pair exists). */
    protected final void startPolling() {
        try {
            loop.execute(drainTask);
        } catch (RejectedExecutionException e) {
            // the loop is gone
        }
    }

    // ---- RdmaConnection

    @Override
    public final EventLoop eventLoop() {
        return loop;
    }

    @Override
    public final void postRecv(long wrId, MemoryRegion mr, int offset, int length) {
        if (!loop.inEventLoop()) {
            loop.execute(() -> postRecv(wrId, mr, offset, length));
            return;
        }
        mr.checkLocal(pd(), offset, length, true);
        if (!state.admitsPost(this)) {
            return;
        }
        if (recvs.posted() >= recvDepth) {
            throw new IllegalStateException("receive queue full (" + recvDepth + " work requests)");
        }
        int i = recvs.post(wrId);
        try {
            doPostRecv(RECV | i, mr, offset, length);
        } catch (IOException e) {
            recvs.unpost(i);
            beginClose(e);
        } catch (RuntimeException e) {
            recvs.unpost(i);
            throw e;
        }
    }

    @Override
    public final void postSend(long wrId, MemoryRegion mr, int offset, int length, long invalidateRkey) {
        if (!loop.inEventLoop()) {
            loop.execute(() -> postSend(wrId, mr, offset, length, invalidateRkey));
            return;
        }
        mr.checkLocal(pd(), offset, length, true);
        if (!state.admitsPost(this)) {
            return;
        }
        int slot = takeSlot(wrId, WorkCompletion.SEND, 0);
        try {
            doPostSend(slot, mr, offset, length, invalidateRkey);
        } catch (IOException e) {
            sends.release(slot);
            beginClose(e);
        } catch (RuntimeException e) {
            sends.release(slot);
            throw e;
        }
    }

    @Override
    public final void postRead(long wrId, MemoryRegion mr, int offset, int length, long remoteAddress, int rkey) {
        if (!loop.inEventLoop()) {
            loop.execute(() -> postRead(wrId, mr, offset, length, remoteAddress, rkey));
            return;
        }
        mr.checkLocal(pd(), offset, length, true);
        if ((mr.access() & MemoryRegion.LOCAL_WRITE) == 0) {
            throw new IllegalArgumentException("RDMA READ into a region without local write access: " + mr);
        }
        if (!state.admitsPost(this)) {
            return;
        }
        int slot = takeSlot(wrId, WorkCompletion.RDMA_READ, length);
        try {
            doPostRead(slot, mr, offset, length, remoteAddress, rkey);
        } catch (IOException e) {
            sends.release(slot);
            beginClose(e);
        } catch (RuntimeException e) {
            sends.release(slot);
            throw e;
        }
    }

    @Override
    public final void postWriteAndSend(long wrId, MemoryRegion mr, int offset, int length, long remoteAddress, int rkey,
                                       MemoryRegion msg, int msgOffset, int msgLength, long invalidateRkey) {
        if (!loop.inEventLoop()) {
            loop.execute(() -> postWriteAndSend(wrId, mr, offset, length, remoteAddress, rkey, msg, msgOffset,
                    msgLength, invalidateRkey));
            return;
        }
        mr.checkLocal(pd(), offset, length, true);
        msg.checkLocal(pd(), msgOffset, msgLength, true);
        if (!state.admitsPost(this)) {
            return;
        }
        int slot = takeSlot(wrId, WorkCompletion.SEND, 0);
        try {
            doPostWriteAndSend(slot, mr, offset, length, remoteAddress, rkey, msg, msgOffset, msgLength, invalidateRkey);
        } catch (IOException e) {
            sends.release(slot);
            beginClose(e);
        } catch (RuntimeException e) {
            sends.release(slot);
            throw e;
        }
    }

    private int takeSlot(long wrId, int op, int length) {
        int slot = sends.take(wrId, op, length);
        if (slot < 0) {
            throw new IllegalStateException("send queue full (" + sends.capacity() + " work requests)");
        }
        return slot;
    }

    @Override
    public final void close() {
        if (loop.inEventLoop()) {
            beginClose(null);
            return;
        }
        try {
            loop.execute(() -> beginClose(null));
        } catch (RejectedExecutionException e) {
            abandon();
        }
    }

    /** Established (or, on the accepting side, accepted) and not ending. */
    @Override
    public final boolean isOpen() {
        ConnectionState s = state;
        return s == ConnectionState.ESTABLISHED || s == ConnectionState.CONNECTING && connecting == null;
    }
}
