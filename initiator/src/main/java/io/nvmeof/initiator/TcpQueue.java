package io.nvmeof.initiator;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.ScheduledFuture;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.fabric.tcp.PduDecoder;
import io.nvmeof.fabric.tcp.PduException;
import io.nvmeof.fabric.tcp.Wire;
import io.nvmeof.protocol.CompletionQueueEntry;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.SubmissionQueueEntry;
import io.nvmeof.protocol.tcp.CapsuleCommandPdu;
import io.nvmeof.protocol.tcp.CapsuleResponsePdu;
import io.nvmeof.protocol.tcp.DataPdu;
import io.nvmeof.protocol.tcp.FatalErrorStatus;
import io.nvmeof.protocol.tcp.ICReqPdu;
import io.nvmeof.protocol.tcp.ICRespPdu;
import io.nvmeof.protocol.tcp.Pdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.protocol.tcp.R2TPdu;
import io.nvmeof.protocol.tcp.TermReqPdu;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The host side of one NVMe/TCP connection (one queue): ICReq/ICResp, command capsules
 * with in-capsule data for small writes, H2CData in answer to R2T, C2HData into the
 * caller's buffer, response capsules, digests (NVMe/TCP Transport 1.0). Commands wait in
 * a queue when every command ID is in use. Confined to the channel's event loop.
 *
 * <p>SQ flow control holds by construction: at most queue size - 1 commands are outstanding,
 * every outstanding command occupies at most one SQ entry (the controller frees it when it
 * fetches the command, SQHD), so the SQ can never be full when a command is sent.
 */
final class TcpQueue extends PduDecoder implements Queue {
    private static final System.Logger LOG = System.getLogger(TcpQueue.class.getName());
    /** The admin queue accepts 8 KiB in-capsule (for Connect) before IOCCSZ is known. */
    public static final int ADMIN_IN_CAPSULE = 8192;
    /** CID bits 11:0 index the slot, so at most 4096 commands are outstanding per queue. */
    static final int MAX_DEPTH = 4096;
    private static final int SLOT_MASK = 0xfff;
    /** Upper bound of one C2HData payload this side buffers. */
    private static final int MAX_C2H_DATA = 16 << 20;

    private final int qid;
    private final int depth;
    private final boolean wantHeaderDigest;
    private final boolean wantDataDigest;
    private final long commandTimeoutNanos;
    private final int connectTimeoutMillis;
    private final Command[] slots;
    /** Free slots, first in first out, so a slot rests as long as possible before reuse. */
    private final int[] freeSlots;
    private int freeHead;
    private int freeCount;
    /** Per-slot generation in CID bits 15:12, as the Linux host does, to catch stale completions. */
    private final byte[] generation;
    private final ArrayDeque<Command> waiting = new ArrayDeque<>();
    private final CompletableFuture<TcpQueue> ready = new CompletableFuture<>();
    private final SubmissionQueueEntry sqeView = new SubmissionQueueEntry();
    private final CompletionQueueEntry cqeView = new CompletionQueueEntry();
    private final DataPdu dataView = new DataPdu();
    private final R2TPdu r2tView = new R2TPdu();
    private final CapsuleCommandPdu capsuleView = new CapsuleCommandPdu();
    private volatile int inCapsuleLimit;
    private long maxH2cData;
    private ChannelHandlerContext ctx;
    private Channel channel;
    private boolean initialized;
    private boolean flushScheduled;
    private volatile Throwable failure;
    /**
     * Where commands go when the connection dies before they complete: the controller, to be
     * resubmitted after it reconnects. Null: they fail with the connection.
     */
    private volatile java.util.function.BiConsumer<Command, Throwable> orphans;
    /** Asks the controller to abort a command (qid, cid) that passed its timeout. */
    private volatile java.util.function.BiConsumer<Integer, Integer> aborter;
    private ScheduledFuture<?> timeoutCheck;
    private final Runnable flushTask = () -> {
        flushScheduled = false;
        if (ctx != null) {
            ctx.flush();
        }
    };

    private TcpQueue(int qid, int depth, int inCapsuleLimit, boolean hd, boolean dd, long commandTimeoutNanos,
                     int connectTimeoutMillis) {
        this.connectTimeoutMillis = connectTimeoutMillis;
        this.qid = qid;
        this.depth = depth;
        this.inCapsuleLimit = inCapsuleLimit;
        this.wantHeaderDigest = hd;
        this.wantDataDigest = dd;
        this.commandTimeoutNanos = commandTimeoutNanos;
        if (depth < 1 || depth > MAX_DEPTH) {
            throw new IllegalArgumentException("queue depth must be 1.." + MAX_DEPTH + ": " + depth);
        }
        // depth is what may be outstanding: one less than the queue size, so the SQ is never full
        this.slots = new Command[depth];
        this.freeSlots = new int[depth];
        this.generation = new byte[depth];
        for (int i = 0; i < depth; i++) {
            freeSlots[i] = i;
        }
        this.freeCount = depth;
    }

    /**
     * Opens a TCP connection and runs connection initialization. The future completes when
     * the ICResp arrived; command-level Connect is the caller's next step.
     */
    public static CompletableFuture<TcpQueue> open(EventLoopGroup group, InetSocketAddress address, int qid, int depth,
                                                    int inCapsuleLimit, boolean hd, boolean dd, long commandTimeoutNanos,
                                                    int connectTimeoutMillis) {
        TcpQueue q = new TcpQueue(qid, depth, inCapsuleLimit, hd, dd, commandTimeoutNanos, connectTimeoutMillis);
        Bootstrap b = new Bootstrap().group(group).channel(EventLoops.clientChannel())
                .option(ChannelOption.ALLOCATOR, EventLoops.ALLOCATOR)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis)
                .handler(q);
        ChannelFuture f = b.connect(address);
        f.addListener(x -> {
            if (!x.isSuccess()) {
                Throwable c = x.cause();
                q.ready.completeExceptionally(new IOException("cannot connect to " + address + ": "
                        + (c.getMessage() != null ? c.getMessage() : c.toString()), c));
            }
        });
        return q.ready;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.channel = ctx.channel();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        ICReqPdu req = new ICReqPdu().wrap(scratch, 0);
        req.encode(0, wantHeaderDigest, wantDataDigest, 0);
        ByteBuf out = ctx.alloc().directBuffer(ICReqPdu.SIZE);
        Wire.store(scratch, ICReqPdu.SIZE, out);
        ctx.writeAndFlush(out);
        ctx.executor().schedule(() -> {
            if (!ready.isDone()) {
                ready.completeExceptionally(new IOException("no ICResp from " + ctx.channel().remoteAddress() + " within "
                        + connectTimeoutMillis + " ms"));
                ctx.close();
            }
        }, connectTimeoutMillis, TimeUnit.MILLISECONDS);
        long period = Math.max(TimeUnit.NANOSECONDS.toMillis(commandTimeoutNanos) / 10, 20);
        timeoutCheck = ctx.executor().scheduleAtFixedRate(this::checkTimeouts, period, period, TimeUnit.MILLISECONDS);
        super.channelActive(ctx);
    }

    @Override
    public int qid() {
        return qid;
    }

    @Override
    public EventLoop eventLoop() {
        return channel.eventLoop();
    }

    /** Hands commands of a dead connection to {@code handler} instead of failing them. */
    void onOrphans(java.util.function.BiConsumer<Command, Throwable> handler) {
        this.orphans = handler;
    }

    void onTimeout(java.util.function.BiConsumer<Integer, Integer> abort) {
        this.aborter = abort;
    }

    /** Sets the in-capsule data limit learned from Identify Controller (IOCCSZ). */
    public void inCapsuleLimit(int bytes) {
        this.inCapsuleLimit = bytes;
    }

    @Override
    public boolean isOpen() {
        return failure == null && channel.isActive();
    }

    // ---- submission ----

    @Override
    public void submit(Command c) {
        c.deadlineNanos = deadline(c);
        if (channel.eventLoop().inEventLoop()) {
            issue(c);
        } else {
            c.queue = this;
            try {
                channel.eventLoop().execute(c);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                c.completeExceptionally(new IOException("queue " + qid + " is closed"));
            }
        }
    }

    /**
     * The timeout runs from submission (time waiting for a free slot counts), and never past
     * the command's expiry, so the queue gives up before the caller does.
     */
    private long deadline(Command c) {
        long d = System.nanoTime() + commandTimeoutNanos;
        return c.expiresAtNanos != 0 && c.expiresAtNanos - d < 0 ? c.expiresAtNanos : d;
    }

    /**
     * Submits a fused pair: both in one task on the loop, so nothing comes between them on the
     * wire (commands waiting for a slot keep their order, so a waiting pair stays together too).
     */
    public void submitFused(Command first, Command second) {
        if (depth < 2) {
            throw new IllegalStateException("a fused pair needs a queue that holds two commands");
        }
        first.deadlineNanos = deadline(first);
        second.deadlineNanos = deadline(second);
        channel.eventLoop().execute(() -> {
            issue(first);
            issue(second);
        });
    }

    void issueOnLoop(Command c) {
        issue(c);
    }

    private void issue(Command c) {
        Throwable f = failure;
        if (f != null) {
            orphan(c, new IOException("queue " + qid + " is closed: " + f.getMessage(), f));
            return;
        }
        c.received = 0;
        c.dataCorrupt = false;
        if (freeCount == 0 || !waiting.isEmpty() || c.fuse == 1 && freeCount < 2) {
            waiting.addLast(c); // in order; a fused first waits until its second can follow it
            return;
        }
        send(c);
    }

    /** Takes a slot and writes the capsule (a slot is free). */
    private void send(Command c) {
        int slot = freeSlots[freeHead];
        freeHead = freeHead + 1 == depth ? 0 : freeHead + 1;
        freeCount--;
        int gen = (generation[slot] + 1) & 0xf;
        generation[slot] = (byte) gen;
        int cid = gen << 12 | slot;
        slots[slot] = c;
        c.cid = cid;
        boolean inCapsule = c.direction == Command.TO_CONTROLLER && c.length <= inCapsuleLimit;
        int dataLen = inCapsule ? c.length : 0;
        boolean hd = headerDigest;
        boolean dd = dataDigest && dataLen > 0;
        int hdr = CapsuleCommandPdu.SIZE + (hd ? Pdu.DIGEST_SIZE : 0);
        int plen = hdr + dataLen + (dd ? Pdu.DIGEST_SIZE : 0);
        capsuleView.wrap(scratch, 0);
        capsuleView.init(PduType.CAPSULE_CMD, (hd ? Pdu.FLAG_HDGST : 0) | (dd ? Pdu.FLAG_DDGST : 0),
                dataLen > 0 ? hdr : 0, plen);
        SubmissionQueueEntry sqe = capsuleView.sqe(sqeView);
        c.fill(sqe);
        sqe.cid(cid);
        if (c.direction != Command.NONE) {
            sqe.sgl(0, c.length, inCapsule ? Sgl.IN_CAPSULE : Sgl.TCP_TRANSPORT);
        } else {
            sqe.sgl(0, 0, Sgl.TCP_TRANSPORT);
        }
        ByteBuf out = ctx.alloc().directBuffer(plen);
        try {
            Wire.store(scratch, CapsuleCommandPdu.SIZE, out);
            if (hd) {
                out.writeIntLE(crc.compute(out, 0, CapsuleCommandPdu.SIZE));
            }
            if (dataLen > 0) {
                copyOut(c.data, 0, dataLen, out);
                if (dd) {
                    out.writeIntLE(crc.compute(out, hdr, dataLen));
                }
            }
        } catch (RuntimeException e) {
            // the caller's buffer could not be read (say, its limit moved): this command alone fails
            out.release();
            slots[slot] = null;
            retireSlotOnly(slot);
            c.completeExceptionally(new IOException(c.name() + ": " + e, e));
            return;
        }
        write(out);
    }

    /** Frees a slot without issuing waiting commands (the caller is in the middle of issuing). */
    private void retireSlotOnly(int slot) {
        int tail = freeHead + freeCount;
        freeSlots[tail >= depth ? tail - depth : tail] = slot;
        freeCount++;
    }

    private void write(ByteBuf out) {
        ctx.write(out, ctx.voidPromise());
        if (!flushScheduled) {
            flushScheduled = true;
            ctx.executor().execute(flushTask);
        }
    }

    // ---- receive ----

    @Override
    protected boolean allowed(PduType type) {
        if (!initialized) {
            return type == PduType.IC_RESP || type == PduType.C2H_TERM_REQ;
        }
        return type == PduType.CAPSULE_RESP || type == PduType.C2H_DATA || type == PduType.R2T
                || type == PduType.C2H_TERM_REQ;
    }

    @Override
    protected long maxData(PduType type) {
        return type == PduType.C2H_DATA ? MAX_C2H_DATA : 0;
    }

    @Override
    protected void onPdu(ChannelHandlerContext ctx, PduType type, ByteBuf in, int start, int flags,
                         int dataStart, int dataLength) throws PduException {
        switch (type) {
            case IC_RESP:
                icResp(in, start);
                break;
            case CAPSULE_RESP:
                response(in, start);
                break;
            case C2H_DATA:
                c2hData(in, start, flags, dataStart, dataLength);
                break;
            case R2T:
                r2t(in, start);
                break;
            default:
                throw new PduException(FatalErrorStatus.PDU_SEQUENCE_ERROR, 0, "unexpected " + type);
        }
    }

    @Override
    protected void onPeerTermination(FatalErrorStatus fes, long fei) {
        fail(new IOException("controller terminated queue " + qid + ": " + fes + " (field offset " + fei + ")"));
    }

    private void icResp(ByteBuf in, int start) throws PduException {
        ICRespPdu resp = new ICRespPdu().wrap(Wire.load(in, start, ICRespPdu.SIZE, scratch), 0);
        if (resp.pfv() != 0) {
            throw new PduException(FatalErrorStatus.UNSUPPORTED_PARAMETER, ICRespPdu.PFV_OFFSET, "PFV " + resp.pfv());
        }
        if (resp.cpda() != 0) {
            throw new PduException(FatalErrorStatus.UNSUPPORTED_PARAMETER, ICRespPdu.CPDA_OFFSET, "CPDA " + resp.cpda());
        }
        if (resp.maxH2cData() < 4096 || resp.maxH2cData() % 4 != 0) {
            throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, ICRespPdu.MAXH2CDATA_OFFSET,
                    "MAXH2CDATA " + resp.maxH2cData());
        }
        boolean hd = (resp.digest() & ICReqPdu.DGST_HEADER) != 0;
        boolean dd = (resp.digest() & ICReqPdu.DGST_DATA) != 0;
        if (hd != wantHeaderDigest || dd != wantDataDigest) {
            throw new PduException(FatalErrorStatus.UNSUPPORTED_PARAMETER, ICRespPdu.DGST_OFFSET,
                    "controller answered digests " + resp.digest());
        }
        headerDigest = hd;
        dataDigest = dd;
        maxH2cData = resp.maxH2cData();
        initialized = true;
        ready.complete(this);
    }

    private Command inFlight(int cid, int fieldOffset) throws PduException {
        int slot = cid & SLOT_MASK;
        Command c = slot < depth ? slots[slot] : null;
        if (c == null || c.cid != cid) {
            throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, fieldOffset, "no command with CID " + cid);
        }
        return c;
    }

    private void response(ByteBuf in, int start) throws PduException {
        CompletionQueueEntry cqe = cqeView.wrap(Wire.load(in, start + CapsuleResponsePdu.CQE_OFFSET,
                CompletionQueueEntry.SIZE, scratch), 0);
        int cid = cqe.cid();
        Command c = inFlight(cid, CapsuleResponsePdu.CQE_OFFSET + CompletionQueueEntry.CID_OFFSET);
        // read everything first: retire() may issue the next command, through the same scratch buffer
        io.nvmeof.protocol.Status status = cqe.status();
        long result = cqe.result();
        retire(cid);
        if (c.timedOut && status.equals(io.nvmeof.protocol.Status.ABORT_REQUESTED)) {
            c.completeExceptionally(new NvmeTimeoutException(c.name() + " timed out after "
                    + TimeUnit.NANOSECONDS.toMillis(commandTimeoutNanos) + " ms and was aborted"));
            return;
        }
        if (status.isSuccess() && c.direction == Command.FROM_CONTROLLER && c.received != c.length) {
            c.completeExceptionally(new IOException(c.name() + " completed with " + c.received + " of "
                    + c.length + " bytes transferred"));
            return;
        }
        c.finish(status, result);
    }

    private void c2hData(ByteBuf in, int start, int flags, int dataStart, int dataLength) throws PduException {
        DataPdu pdu = dataView.wrap(Wire.load(in, start, DataPdu.SIZE, scratch), 0);
        int cid = pdu.cccid();
        Command c = inFlight(cid, DataPdu.CCCID_OFFSET);
        long datao = pdu.datao();
        if (c.direction != Command.FROM_CONTROLLER || pdu.datal() != dataLength || datao != c.received
                || datao + dataLength > c.length) {
            throw new PduException(FatalErrorStatus.DATA_TRANSFER_OUT_OF_RANGE, DataPdu.DATAO_OFFSET,
                    "C2HData " + datao + "+" + dataLength + " outside command " + c);
        }
        if (dataDigestOk) {
            copyIn(in, dataStart, c.data, (int) datao, dataLength);
        } else {
            c.dataCorrupt = true;
        }
        c.received += dataLength;
        if ((flags & Pdu.FLAG_SUCCESS) != 0) {
            if ((flags & Pdu.FLAG_LAST_PDU) == 0) {
                throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.FLAGS_OFFSET,
                        "SUCCESS without LAST_PDU");
            }
            retire(cid);
            if (c.received != c.length) {
                c.completeExceptionally(new IOException(c.name() + " ended with " + c.received + " of " + c.length
                        + " bytes"));
                return;
            }
            c.finish(io.nvmeof.protocol.Status.SUCCESS, 0);
        }
    }

    private void r2t(ByteBuf in, int start) throws PduException {
        R2TPdu pdu = r2tView.wrap(Wire.load(in, start, R2TPdu.SIZE, scratch), 0);
        Command c = inFlight(pdu.cccid(), R2TPdu.CCCID_OFFSET);
        long offset = pdu.r2to();
        long length = pdu.r2tl();
        if (c.direction != Command.TO_CONTROLLER || length == 0 || offset + length > c.length) {
            throw new PduException(FatalErrorStatus.DATA_TRANSFER_OUT_OF_RANGE, R2TPdu.R2TO_OFFSET,
                    "R2T " + offset + "+" + length + " outside command " + c);
        }
        int ttag = pdu.ttag();
        int cccid = pdu.cccid();
        long sent = 0;
        while (sent < length) {
            int chunk = (int) Math.min(length - sent, maxH2cData);
            boolean last = sent + chunk == length;
            boolean hd = headerDigest;
            boolean dd = dataDigest;
            int hdr = DataPdu.SIZE + (hd ? Pdu.DIGEST_SIZE : 0);
            ByteBuf out = ctx.alloc().directBuffer(hdr + chunk + (dd ? Pdu.DIGEST_SIZE : 0));
            dataView.wrap(scratch, 0);
            dataView.encode(PduType.H2C_DATA, last ? Pdu.FLAG_LAST_PDU : 0, cccid, ttag, offset + sent, chunk, hd, dd);
            Wire.store(scratch, DataPdu.SIZE, out);
            if (hd) {
                out.writeIntLE(crc.compute(out, 0, DataPdu.SIZE));
            }
            copyOut(c.data, (int) (offset + sent), chunk, out);
            if (dd) {
                out.writeIntLE(crc.compute(out, hdr, chunk));
            }
            write(out);
            sent += chunk;
        }
    }

    /**
     * Appends {@code len} bytes of the caller's buffer, {@code at} bytes past its position, to
     * {@code out}. The buffer belongs to the command while it is in flight, so its position and
     * limit are borrowed and put back rather than duplicated (no allocation per PDU).
     */
    private static void copyOut(ByteBuffer buf, int at, int len, ByteBuf out) {
        int pos = buf.position();
        int lim = buf.limit();
        buf.position(pos + at).limit(pos + at + len);
        try {
            out.writeBytes(buf);
        } finally {
            buf.limit(lim).position(pos);
        }
    }

    /** Copies {@code len} bytes of {@code in} at {@code index} into the caller's buffer, {@code at} past its position. */
    private static void copyIn(ByteBuf in, int index, ByteBuffer buf, int at, int len) {
        int pos = buf.position();
        int lim = buf.limit();
        buf.position(pos + at).limit(pos + at + len);
        try {
            in.getBytes(index, buf);
        } finally {
            buf.limit(lim).position(pos);
        }
    }

    private void retire(int cid) {
        int slot = cid & SLOT_MASK;
        slots[slot] = null;
        retireSlotOnly(slot);
        while (!waiting.isEmpty() && freeCount > 0) {
            Command next = waiting.peekFirst();
            if (next.fuse == 1 && freeCount < 2) {
                return;
            }
            waiting.pollFirst();
            if (failure != null) {
                orphan(next, failure);
            } else {
                send(next);
            }
        }
    }

    private void checkTimeouts() {
        long now = System.nanoTime();
        for (Command c : slots) {
            if (c == null || c.exemptFromTimeout || now - c.deadlineNanos <= 0) {
                continue;
            }
            if (!c.timedOut) {
                // First ask the controller to abort it; give that a tenth of the timeout.
                c.timedOut = true;
                c.deadlineNanos = now + Math.max(commandTimeoutNanos / 10, TimeUnit.MILLISECONDS.toNanos(200));
                java.util.function.BiConsumer<Integer, Integer> a = aborter;
                if (a != null && qid != 0) {
                    a.accept(qid, c.cid);
                    continue;
                }
            }
            // Not aborted: reset the association. Ending the connection is what guarantees
            // nothing touches the command's buffer any more; the others are resubmitted.
            fail(new IOException("queue " + qid + " reset after a command timed out"));
            channel.close();
            return;
        }
        while (!waiting.isEmpty() && now - waiting.peekFirst().deadlineNanos > 0) {
            Command w = waiting.pollFirst();
            w.completeExceptionally(new IOException(w.name() + " timed out after "
                    + TimeUnit.NANOSECONDS.toMillis(commandTimeoutNanos) + " ms waiting for a free slot on queue " + qid));
        }
    }

    @Override
    protected void sendTermination(ChannelHandlerContext ctx, PduException e, ByteBuf header) {
        fail(new IOException("protocol error on queue " + qid + ": " + e.status() + ": " + e.getMessage()));
        writeTermination(ctx, PduType.H2C_TERM_REQ, e, header);
    }

    /** Fails every command in flight or waiting; the queue accepts no more. */
    private void fail(Throwable cause) {
        if (failure == null) {
            failure = cause;
        }
        ready.completeExceptionally(cause);
        for (int i = 0; i < depth; i++) {
            Command c = slots[i];
            if (c != null) {
                slots[i] = null;
                orphan(c, cause);
            }
        }
        Command w;
        while ((w = waiting.pollFirst()) != null) {
            orphan(w, cause);
        }
    }

    /** A command the connection could not finish: the controller retries it, or it fails. */
    private void orphan(Command c, Throwable cause) {
        java.util.function.BiConsumer<Command, Throwable> o = orphans;
        if (c.timedOut) {
            c.completeExceptionally(new NvmeTimeoutException(c.name() + " timed out after "
                    + TimeUnit.NANOSECONDS.toMillis(commandTimeoutNanos) + " ms on queue " + qid));
        } else if (o != null && qid != 0 && c.fuse == 0) {
            // (a fused half alone means nothing to a target: it fails instead of coming back)
            o.accept(c, cause);
        } else {
            c.completeExceptionally(cause);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (timeoutCheck != null) {
            timeoutCheck.cancel(false);
        }
        fail(new IOException("connection of queue " + qid + " to " + ctx.channel().remoteAddress() + " closed"));
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.log(System.Logger.Level.DEBUG, "queue " + qid + " failed", cause);
        fail(cause instanceof IOException ? cause : new IOException(cause.toString(), cause));
        ctx.close();
    }

    /** Completes when the connection has closed, for whatever reason. */
    io.netty.channel.ChannelFuture closeFuture() {
        return channel.closeFuture();
    }

    @Override
    public CompletableFuture<Void> close() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        channel.close().addListener(f -> done.complete(null));
        return done;
    }
}
