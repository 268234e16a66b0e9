package io.nvmeof.initiator;

import io.netty.channel.EventLoop;
import io.netty.util.internal.PlatformDependent;
import io.nvmeof.fabric.rdma.ConnectParams;
import io.nvmeof.fabric.rdma.MemoryRegion;
import io.nvmeof.fabric.rdma.RdmaConnection;
import io.nvmeof.fabric.rdma.RdmaHandler;
import io.nvmeof.fabric.rdma.RdmaRejectedException;
import io.nvmeof.fabric.rdma.RegisteredBufferPool;
import io.nvmeof.fabric.rdma.WorkCompletion;
import io.nvmeof.protocol.CompletionQueueEntry;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.SubmissionQueueEntry;
import io.nvmeof.protocol.rdma.RdmaCmAccept;
import io.nvmeof.protocol.rdma.RdmaCmReject;
import io.nvmeof.protocol.rdma.RdmaCmRequest;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;

/**
 * The host side of one NVMe/RDMA queue (NVMe/RDMA Transport 1.0): the CM request carries QID,
 * HRQSIZE and HSQSIZE; command capsules go by SEND from registered per-slot buffers (with
 * in-capsule data for small writes on I/O queues); responses arrive by SEND into posted
 * receive buffers, re-posted at once; data moves by the controller's RDMA READ and WRITE
 * against keyed SGL data block descriptors, either through registered bounce buffers from a
 * pool or straight from the caller's buffers registered once through a cache. Confined to the
 * connection's event loop.
 */
final class RdmaQueue extends HostQueue implements RdmaHandler {
    private static final System.Logger LOG = System.getLogger(RdmaQueue.class.getName());
    private static final long SEND = 1L << 32;
    private static final long RECV = 2L << 32;
    /** RDMA READs the controller may have outstanding against this host per queue. */
    private static final int RESPONDER_RESOURCES = 16;

    private final int size;
    private final int capsuleSize;
    private final RdmaResources resources;
    private RegisteredBufferPool pool;
    private RegistrationCache cache;
    private final SubmissionQueueEntry sqe = new SubmissionQueueEntry();
    private final CompletionQueueEntry cqe = new CompletionQueueEntry();
    /** Per slot: the bounce buffer of the command in flight, if it has one. */
    private final RegisteredBufferPool.Buf[] bounce;
    /** Per slot: the cached registration of the caller's buffer the command in flight uses, if any. */
    private final RegistrationCache.Entry[] registered;
    private RdmaConnection connection;
    private MemoryRegion capsules;
    private MemoryRegion responses;
    private boolean disconnected;

    private RdmaQueue(int qid, int depth, int inCapsuleLimit, long commandTimeoutNanos, int connectTimeoutMillis,
                      RdmaResources resources) {
        super(qid, depth, qid == 0 ? 0 : inCapsuleLimit, commandTimeoutNanos, connectTimeoutMillis);
        this.size = depth + 1;
        // the RDMA admin queue carries no in-capsule data; I/O queues up to IOCCSZ
        this.capsuleSize = SubmissionQueueEntry.SIZE + (qid == 0 ? 0 : inCapsuleLimit);
        this.resources = resources;
        this.bounce = new RegisteredBufferPool.Buf[depth];
        this.registered = new RegistrationCache.Entry[depth];
    }

    /**
     * Connects queue {@code qid} with {@code depth} commands outstanding at most (queue size
     * depth + 1). The future completes once the connection is established and the receives
     * are posted; Connect is the caller's next step.
     */
    static CompletableFuture<HostQueue> open(RdmaResources resources, InetSocketAddress address, int qid, int depth, int inCapsuleLimit,
                                             int cntlid, long commandTimeoutNanos, int connectTimeoutMillis) {
        RdmaQueue q = new RdmaQueue(qid, depth, inCapsuleLimit, commandTimeoutNanos, connectTimeoutMillis, resources);
        ByteBuffer pd = Flyweight.allocate(RdmaCmRequest.SIZE);
        new RdmaCmRequest().<RdmaCmRequest>wrap(pd, 0).encode(qid, q.size, q.size - 1, cntlid);
        ConnectParams params = new ConnectParams(pd, 2 * q.size + 2, q.size, RESPONDER_RESOURCES, 1, connectTimeoutMillis);
        resources.provider.connect(address, params, q).whenComplete((c, e) -> {
            if (e != null) {
                q.ready.completeExceptionally(q.connectFailure(address, e));
                return;
            }
            c.eventLoop().execute(() -> q.established(c, address));
        });
        return q.ready;
    }

    private IOException connectFailure(InetSocketAddress address, Throwable e) {
        if (e instanceof RdmaRejectedException) {
            ByteBuffer rej = ((RdmaRejectedException) e).privateData();
            if (rej != null && rej.remaining() >= RdmaCmReject.SIZE) {
                ByteBuffer b = Flyweight.allocate(RdmaCmReject.SIZE);
                b.put(0, rej, rej.position(), RdmaCmReject.SIZE);
                RdmaCmReject r = new RdmaCmReject().wrap(b, 0);
                return new IOException("controller at " + address + " rejected the connect of queue " + qid + ": "
                        + RdmaCmReject.name(r.status()), e);
            }
            return new IOException("controller at " + address + " rejected the connect of queue " + qid, e);
        }
        return e instanceof IOException ? (IOException) e : new IOException(e.toString(), e);
    }

    private void established(RdmaConnection c, InetSocketAddress address) {
        this.connection = c;
        try {
            ByteBuffer acc = c.privateData();
            if (acc != null && acc.remaining() >= RdmaCmAccept.SIZE) {
                ByteBuffer b = Flyweight.allocate(RdmaCmAccept.SIZE);
                b.put(0, acc, acc.position(), RdmaCmAccept.SIZE);
                RdmaCmAccept a = new RdmaCmAccept().wrap(b, 0);
                if (a.crqsize() < size) {
                    throw new IOException("controller at " + address + " accepted queue " + qid + " with CRQSIZE "
                            + a.crqsize() + ", less than the queue size " + size);
                }
            }
            pool = resources.pool(c.pd());
            cache = resources.cache(c.pd());
            capsules = c.pd().register(ByteBuffer.allocateDirect(depth * capsuleSize).order(ByteOrder.LITTLE_ENDIAN),
                    MemoryRegion.LOCAL_WRITE);
            responses = c.pd().register(ByteBuffer.allocateDirect(size * CompletionQueueEntry.SIZE)
                    .order(ByteOrder.LITTLE_ENDIAN), MemoryRegion.LOCAL_WRITE);
            for (int i = 0; i < size; i++) {
                c.postRecv(RECV | i, responses, i * CompletionQueueEntry.SIZE, CompletionQueueEntry.SIZE);
            }
        } catch (IOException | RuntimeException e) {
            ready.completeExceptionally(e instanceof IOException ? e : new IOException(e.toString(), e));
            c.close();
            return;
        }
        startTimeoutChecks(c.eventLoop());
        ready.complete(this);
    }

    @Override
    public EventLoop eventLoop() {
        return connection.eventLoop();
    }

    @Override
    public boolean isOpen() {
        return failure == null && connection != null && connection.isOpen();
    }

    // ---- submission ----

    @Override
    protected void transmit(Command c) {
        int slot = c.cid & SLOT_MASK;
        int at = slot * capsuleSize;
        sqe.wrap(capsules.buffer(), at);
        c.fill(sqe);
        sqe.cid(c.cid);
        int send = SubmissionQueueEntry.SIZE;
        try {
            if (c.direction == Command.NONE || c.length == 0) {
                sqe.sglKeyed(0, 0, 0, Sgl.KEYED_ADDRESS);
            } else if (c.direction == Command.TO_CONTROLLER && c.length <= inCapsuleLimit) {
                ByteBuffer dst = capsules.buffer();
                copy(c.data, 0, dst, at + SubmissionQueueEntry.SIZE, c.length);
                sqe.sgl(0, c.length, Sgl.IN_CAPSULE);
                send += c.length;
            } else {
                mapData(c, slot);
            }
        } catch (IOException | RuntimeException e) {
            releaseData(slot);
            unsent(c, e);
            return;
        }
        connection.postSend(SEND | slot, capsules, at, send, RdmaConnection.NO_INVALIDATE);
    }

    /** Points the keyed SGL at the data: the caller's registered buffer, or a bounce buffer. */
    private void mapData(Command c, int slot) throws IOException {
        RegistrationCache.Entry e = cache != null ? cache.acquire(c.data) : null;
        if (e != null) {
            registered[slot] = e;
            long address = PlatformDependent.directBufferAddress(c.data) + c.data.position();
            sqe.sglKeyed(address, c.length, e.region.rkey(), Sgl.KEYED_ADDRESS);
            return;
        }
        RegisteredBufferPool.Buf b = pool.allocate(c.length);
        bounce[slot] = b;
        if (c.direction == Command.TO_CONTROLLER) {
            copy(c.data, 0, b.region().buffer(), b.regionOffset(0), c.length);
        }
        sqe.sglKeyed(b.address(0), c.length, b.region().rkey(), Sgl.KEYED_ADDRESS);
    }

    private void releaseData(int slot) {
        RegistrationCache.Entry e = registered[slot];
        if (e != null) {
            registered[slot] = null;
            cache.release(e);
        }
        RegisteredBufferPool.Buf b = bounce[slot];
        if (b != null) {
            bounce[slot] = null;
            b.release();
        }
    }

    /** Copies {@code len} bytes from {@code src} ({@code at} past its position) to {@code dst} at absolute {@code to}. */
    private static void copy(ByteBuffer src, int at, ByteBuffer dst, int to, int len) {
        dst.put(to, src, src.position() + at, len);
    }

    @Override
    protected void resetConnection() {
        if (connection != null) {
            connection.close();
        }
    }

    // ---- completions ----

    @Override
    public void onCompletion(long wrId, int opcode, int status, int byteLength, long invalidatedRkey) {
        if (status != WorkCompletion.SUCCESS) {
            LOG.log(System.Logger.Level.DEBUG, "queue {0}: {1} failed: {2}", qid, WorkCompletion.opcodeName(opcode),
                    WorkCompletion.statusName(status));
            abort(new IOException("queue " + qid + ": " + WorkCompletion.opcodeName(opcode) + " failed: "
                    + WorkCompletion.statusName(status)));
            return;
        }
        if ((wrId >>> 32) == 2) {
            response((int) wrId, byteLength, invalidatedRkey);
        }
        // SEND completions: the capsule buffer belongs to its slot, reused only after the response
    }

    private void response(int index, int byteLength, long invalidatedRkey) {
        int at = index * CompletionQueueEntry.SIZE;
        if (byteLength != CompletionQueueEntry.SIZE || invalidatedRkey >= 0) {
            protocolError(byteLength != CompletionQueueEntry.SIZE ? "response of " + byteLength + " bytes"
                    : "the controller invalidated key 0x" + Long.toHexString(invalidatedRkey) + " it was not given");
            return;
        }
        cqe.wrap(responses.buffer(), at);
        int cid = cqe.cid();
        Status status = cqe.status();
        long result = cqe.result();
        connection.postRecv(RECV | index, responses, at, CompletionQueueEntry.SIZE);
        Command c = inFlight(cid);
        if (c == null) {
            protocolError("response for CID " + cid + ", which is not in flight");
            return;
        }
        int slot = cid & SLOT_MASK;
        if (c.direction == Command.FROM_CONTROLLER && status.isSuccess()) {
            // the data came by RDMA WRITE before this SEND (reliable-connection order)
            RegisteredBufferPool.Buf b = bounce[slot];
            if (b != null) {
                ByteBuffer dst = c.data;
                dst.put(dst.position(), b.region().buffer(), b.regionOffset(0), c.length);
            }
            c.received = c.length;
        }
        releaseData(slot);
        responded(c, status, result);
    }

    private void protocolError(String why) {
        LOG.log(System.Logger.Level.WARNING, "queue {0}: {1}; closing the connection", qid, why);
        abort(new IOException("protocol error on queue " + qid + ": " + why));
    }

    /**
     * Ends the connection for {@code cause}. New commands fail at once; those in flight only
     * when the provider reports the queue pair quiet, since until then the controller may
     * still write into their buffers.
     */
    private void abort(IOException cause) {
        if (failure == null) {
            failure = cause;
        }
        connection.close();
    }

    @Override
    public void onDisconnected(Throwable cause) {
        if (disconnected) {
            return;
        }
        disconnected = true;
        connectionEnded(new IOException("connection of queue " + qid + " to " + (connection != null ? connection.peer()
                : "?") + " closed" + (cause != null ? ": " + cause.getMessage() : ""), cause));
        // nothing touches the buffers any more: give them back
        for (int i = 0; i < bounce.length; i++) {
            releaseData(i);
        }
        if (capsules != null) {
            capsules.pd().deregister(capsules);
        }
        if (responses != null) {
            responses.pd().deregister(responses);
        }
    }

    @Override
    public CompletableFuture<Void> close() {
        if (connection == null) {
            return CompletableFuture.completedFuture(null);
        }
        connection.close();
        return ended;
    }
}
