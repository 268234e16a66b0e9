package io.nvmeof.target;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.nvmeof.fabric.rdma.MemoryRegion;
import io.nvmeof.fabric.rdma.ProtectionDomain;
import io.nvmeof.fabric.rdma.RdmaConnection;
import io.nvmeof.fabric.rdma.RdmaHandler;
import io.nvmeof.fabric.rdma.RegisteredBufferPool;
import io.nvmeof.fabric.rdma.WorkCompletion;
import io.nvmeof.protocol.CompletionQueueEntry;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.SubmissionQueueEntry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * The controller side of one NVMe/RDMA queue (NVMe/RDMA Transport 1.0): command capsules arrive
 * by SEND into posted receive buffers (SQE plus in-capsule data), host data is pulled with RDMA
 * READ from the host's keyed SGL (at most the negotiated initiator depth at once), read data is
 * placed with an RDMA WRITE chained before the response SEND, and the response is a SEND with
 * Invalidate when the host's descriptor asked for it. Confined to the connection's event loop.
 */
final class RdmaQueue implements QueueTransport, RdmaHandler {
    private static final System.Logger LOG = System.getLogger(RdmaQueue.class.getName());
    private static final long RECV = 1L << 32;
    private static final long SEND = 2L << 32;
    private static final long READ = 3L << 32;

    private final Target target;
    private final QueuePair queue;
    private RegisteredBufferPool pool;
    private Runnable onEnd;
    /** The CM request's QID and queue size, or -1 when the provider could not see the request. */
    private final int expectedQid;
    private final int queueSize;
    private final int capsuleSize;
    private final int sendSlots;
    private RdmaConnection connection;
    /**
     * The connection as {@link #abort()} sees it from another thread (the data path reads the
     * plain field), and whether it was aborted before there was one: then it ends as it starts.
     */
    private volatile RdmaConnection started;
    private volatile boolean aborted;
    private InetSocketAddress peer;
    private InetSocketAddress local;
    // receive buffers for capsules, one region
    private MemoryRegion recvRegion;
    private ByteBuf recvView;
    // response capsules (CQEs), one per send slot, and what each send slot holds until it completes
    private MemoryRegion respRegion;
    private final CompletionQueueEntry cqe = new CompletionQueueEntry();
    private final ByteBuf[] held;
    private final int[] freeSendSlots;
    private int freeSendCount;
    // RDMA READs: outstanding and waiting for depth
    private int readsOutstanding;
    private final ArrayDeque<Request> readWaiting;
    private boolean closed;

    RdmaQueue(Target target, Port port, int expectedQid, int queueSize, int capsuleSize) {
        this.target = target;
        this.expectedQid = expectedQid;
        this.queueSize = queueSize;
        this.capsuleSize = capsuleSize;
        this.queue = new QueuePair(target, this, port);
        // every request may hold a send slot for its response while a new one is being answered
        // (a response's slot frees when its SEND completes, which may be after the host already
        // saw it and sent the next command)
        this.sendSlots = 2 * queueSize;
        this.held = new ByteBuf[sendSlots];
        this.freeSendSlots = new int[sendSlots];
        for (int i = 0; i < sendSlots; i++) {
            freeSendSlots[i] = i;
        }
        this.freeSendCount = sendSlots;
        this.readWaiting = new ArrayDeque<>(queueSize);
    }

    /** Send work requests the queue pair needs: a response SEND plus a WRITE or READ per command. */
    int sendDepth() {
        return 2 * sendSlots + queueSize + 1;
    }

    int recvDepth() {
        return queueSize;
    }

    /** Registers the capsule and response buffers (before accept, so a failure can still reject). */
    void prepare(ProtectionDomain pd, RegisteredBufferPool pool) throws IOException {
        this.pool = pool;
        ByteBuffer recv = ByteBuffer.allocateDirect(queueSize * capsuleSize).order(ByteOrder.LITTLE_ENDIAN);
        recvRegion = pd.register(recv, MemoryRegion.LOCAL_WRITE);
        recvView = Unpooled.wrappedBuffer(recvRegion.buffer());
        ByteBuffer resp = ByteBuffer.allocateDirect(sendSlots * CompletionQueueEntry.SIZE).order(ByteOrder.LITTLE_ENDIAN);
        respRegion = pd.register(resp, MemoryRegion.LOCAL_WRITE);
    }

    /** The connection is accepted: post every receive buffer. Runs on the connection's loop. */
    void start(RdmaConnection c, Runnable onEnd) {
        this.onEnd = onEnd;
        this.connection = c;
        this.peer = c.peer();
        this.local = c.localAddress();
        for (int i = 0; i < queueSize; i++) {
            c.postRecv(RECV | i, recvRegion, i * capsuleSize, capsuleSize);
        }
        // as over TCP: a peer that does not send its Fabrics Connect in time loses the queue
        long deadline = target.tuning().connectTimeoutMillis();
        c.eventLoop().schedule(() -> {
            if (!closed && !queue.admitted()) {
                fail("not " + (queue.qid() < 0 ? "connected" : "authenticated") + " within " + deadline + " ms");
            }
        }, deadline, TimeUnit.MILLISECONDS);
        started = c;
        if (aborted) {
            c.close(); // displaced while its accept was under way (abort() saw no connection yet)
        }
    }

    /** Counts the connection against its peer address's pending connections ({@link QueuePair#admitFrom}). */
    void admitFrom(InetAddress peer) {
        queue.admitFrom(peer);
    }

    /** Its place in the target's connection counts ({@link QueuePair#slot}). */
    void slot(Admission.ConnectionSlot slot) {
        queue.slot(slot);
    }

    /** The connection was never accepted: it no longer counts as pending. */
    void abandoned() {
        queue.closed();
    }

    /** Frees the registrations when nothing can touch them any more. */
    void release() {
        if (recvRegion != null) {
            recvRegion.pd().deregister(recvRegion);
            recvRegion = null;
        }
        if (respRegion != null) {
            respRegion.pd().deregister(respRegion);
            respRegion = null;
        }
    }

    // ---- completions ----

    @Override
    public void onCompletion(long wrId, int opcode, int status, int byteLength, long invalidatedRkey) {
        if (closed) {
            return;
        }
        if (status != WorkCompletion.SUCCESS) {
            fail(WorkCompletion.opcodeName(opcode) + " failed: " + WorkCompletion.statusName(status));
            return;
        }
        int index = (int) wrId;
        switch ((int) (wrId >>> 32)) {
            case 1:
                capsule(index, byteLength);
                break;
            case 2:
                sent(index);
                break;
            case 3:
                readDone(index);
                break;
            default:
                fail("completion of unknown work request " + Long.toHexString(wrId));
        }
    }

    private void capsule(int slot, int byteLength) {
        int at = slot * capsuleSize;
        if (byteLength < SubmissionQueueEntry.SIZE) {
            fail("command capsule of " + byteLength + " bytes");
            return;
        }
        Request r = queue.acquire();
        if (r == null) {
            fail("more commands in flight than the queue holds");
            return;
        }
        r.loadSqe(recvView, at);
        int inCapsule = byteLength - SubmissionQueueEntry.SIZE;
        if (inCapsule > 0) {
            r.data = allocateData(r, inCapsule);
            if (r.data == null) {
                queue.release(r);
                fail("no buffer for in-capsule data");
                return;
            }
            r.data.setBytes(r.dataOffset, recvView, at + SubmissionQueueEntry.SIZE, inCapsule);
            r.received = inCapsule;
        }
        // the capsule is copied out: the buffer can take the next one
        connection.postRecv(RECV | slot, recvRegion, at, capsuleSize);
        queue.start(r);
    }

    private void sent(int slot) {
        ByteBuf b = held[slot];
        if (b != null) {
            held[slot] = null;
            b.release();
        }
        freeSendSlots[freeSendCount++] = slot;
    }

    private void readDone(int tag) {
        readsOutstanding--;
        Request r = queue.byTag(tag);
        if (r != null && r.state == Request.State.TRANSFERRING_H2C) {
            r.received = r.length;
            queue.dataReceived(r);
        }
        issueReads();
    }

    @Override
    public void onDisconnected(Throwable cause) {
        if (cause != null && !closed) {
            LOG.log(System.Logger.Level.WARNING, "RDMA connection from {0} ended: {1}", peer, cause.getMessage());
        }
        closed = true;
        Request r;
        while ((r = readWaiting.pollFirst()) != null) {
            r.releaseData();
        }
        for (int i = 0; i < held.length; i++) {
            if (held[i] != null) {
                held[i].release();
                held[i] = null;
            }
        }
        queue.closed();
        release();
        if (onEnd != null) {
            onEnd.run();
        }
    }

    private void fail(String why) {
        LOG.log(System.Logger.Level.WARNING, "closing RDMA connection from {0}: {1}", peer, why);
        connection.close();
    }

    // ---- QueueTransport ----

    @Override
    public EventLoop eventLoop() {
        return connection.eventLoop();
    }

    @Override
    public ByteBuf allocateData(Request r, int length) {
        r.dataOffset = 0;
        try {
            return pool.allocate(length);
        } catch (IOException | RuntimeException e) {
            // registration refused (the locked-memory limit, say): this command fails, retryably
            LOG.log(System.Logger.Level.WARNING, "no registered buffer of {0} bytes for {1}: {2}", length, peer,
                    e.getMessage());
            return null;
        }
    }

    @Override
    public void fetchData(Request r) {
        if (readsOutstanding >= Math.max(1, connection.initiatorDepth())) {
            readWaiting.addLast(r);
            return;
        }
        postRead(r);
    }

    private void postRead(Request r) {
        RegisteredBufferPool.Buf b = RegisteredBufferPool.of(r.data);
        SubmissionQueueEntry sqe = r.sqe;
        int length = r.length - r.received;
        readsOutstanding++;
        connection.postRead(READ | r.tag, b.region(), b.regionOffset(r.dataOffset + r.received), length,
                sqe.sglAddress() + r.received, (int) sqe.sglKey());
    }

    private void issueReads() {
        while (!readWaiting.isEmpty() && readsOutstanding < Math.max(1, connection.initiatorDepth())) {
            Request r = readWaiting.pollFirst();
            if (r.state == Request.State.TRANSFERRING_H2C) {
                postRead(r);
            }
        }
    }

    @Override
    public void sendCompletion(Request r) {
        if (closed) {
            queue.release(r);
            return;
        }
        if (freeSendCount == 0) {
            // a host with more commands outstanding than its queue size gets nothing more
            queue.release(r);
            fail("no send slot for a response");
            return;
        }
        int slot = freeSendSlots[--freeSendCount];
        int at = slot * CompletionQueueEntry.SIZE;
        cqe.wrap(respRegion.buffer(), at);
        cqe.result(r.result).sqhd(queue.sqhd()).sqid(Math.max(queue.qid(), 0)).cid(r.cid()).status(r.status);
        SubmissionQueueEntry sqe = r.sqe;
        boolean keyed = Sgl.type(sqe.sglIdentifier()) == Sgl.TYPE_KEYED_DATA_BLOCK;
        long invalidate = keyed && Sgl.subtype(sqe.sglIdentifier()) == Sgl.SUBTYPE_INVALIDATE_KEY
                ? sqe.sglKey() : RdmaConnection.NO_INVALIDATE;
        if (r.c2hLength > 0 && r.status.isSuccess()) {
            ByteBuf d = r.data;
            r.data = null; // the send slot holds it until the WRITE is done
            held[slot] = d;
            RegisteredBufferPool.Buf b = RegisteredBufferPool.of(d);
            int len = r.c2hLength;
            int offset = b.regionOffset(r.dataOffset);
            long address = sqe.sglAddress();
            int key = (int) sqe.sglKey();
            queue.release(r);
            connection.postWriteAndSend(SEND | slot, b.region(), offset, len, address, key, respRegion, at,
                    CompletionQueueEntry.SIZE, invalidate);
            return;
        }
        queue.release(r);
        connection.postSend(SEND | slot, respRegion, at, CompletionQueueEntry.SIZE, invalidate);
    }

    @Override
    public void close() {
        if (connection != null) {
            connection.close();
        }
    }

    @Override
    public void abort() {
        aborted = true;
        RdmaConnection c = started;
        if (c != null) {
            c.close();
        }
    }

    @Override
    public String peer() {
        return String.valueOf(peer);
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return peer;
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public boolean acceptsDataDescriptor(int id) {
        return id == Sgl.KEYED_ADDRESS || id == Sgl.KEYED_INVALIDATE;
    }

    @Override
    public int inCapsuleDataSize() {
        return capsuleSize - SubmissionQueueEntry.SIZE;
    }

    @Override
    public String checkConnect(int qid, int sqsize) {
        if (expectedQid >= 0 && qid != expectedQid) {
            return "QID " + qid + " but the RDMA connect request said " + expectedQid;
        }
        if (sqsize + 1 > queueSize) {
            return "SQSIZE " + sqsize + " larger than the RDMA queue of " + queueSize;
        }
        return null;
    }
}
