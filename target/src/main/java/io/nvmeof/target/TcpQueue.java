package io.nvmeof.target;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.fabric.tcp.PduReader;
import io.nvmeof.fabric.tcp.PduException;
import io.nvmeof.fabric.tcp.Wire;
import io.nvmeof.fabric.tls.TlsPskHandler;
import io.nvmeof.protocol.CompletionQueueEntry;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.tcp.CapsuleResponsePdu;
import io.nvmeof.protocol.tcp.DataPdu;
import io.nvmeof.protocol.tcp.FatalErrorStatus;
import io.nvmeof.protocol.tcp.ICReqPdu;
import io.nvmeof.protocol.tcp.ICRespPdu;
import io.nvmeof.protocol.tcp.Pdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.protocol.tcp.R2TPdu;
import io.nvmeof.protocol.tls.PskIdentity;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The controller side of one NVMe/TCP connection (one queue): connection initialization,
 * command capsules, R2T + H2CData for host data, C2HData + response capsules, digests and
 * termination (NVMe/TCP Transport 1.0, 3.3-3.6). Confined to the channel's event loop.
 * Responses produced while reading are flushed once per read loop.
 */
final class TcpQueue extends PduReader implements QueueTransport {
    private static final System.Logger LOG = System.getLogger(TcpQueue.class.getName());
    private static final RateLimitedLog DEADLINE = new RateLimitedLog(LOG);

    private final Target target;
    private final QueuePair queue;
    private final DataPdu dataView = new DataPdu();
    private final R2TPdu r2tView = new R2TPdu();
    private final CapsuleResponsePdu respView = new CapsuleResponsePdu();
    private final CompletionQueueEntry cqeView = new CompletionQueueEntry();
    private ChannelHandlerContext ctx;
    private boolean initialized;
    private ScheduledFuture<?> dataCheck;
    private boolean reading;
    private boolean flushPending;
    /** Where C2HData data starts: header, header digest, padding to the host's HPDA. */
    private int c2hDataOffset = DataPdu.SIZE;
    /**
     * A TTAG is the request's slot in its low bits and a count of R2Ts in the high ones, so data
     * a host sends late for a command that has ended (its data timed out, say) cannot land in the
     * next command of that slot, even under the same CID: it names an unknown TTAG.
     */
    private final int slotBits;
    private int r2tCount;
    /** The request whose data the PDU being read carries, and the TTAG it came under (-1: in-capsule). */
    private Request receiving;
    private int receivingTag;

    /** A queue not counted against the target's connection caps (on an embedded channel). */
    TcpQueue(Target target, Port port) {
        this(target, port, null);
    }

    /** The queue of an accepted connection holding {@code slot} in the target's counts. */
    TcpQueue(Target target, Port port, Admission.ConnectionSlot slot) {
        this.target = target;
        this.queue = new QueuePair(target, this, port);
        this.queue.slot(slot);
        this.slotBits = 32 - Integer.numberOfLeadingZeros(Math.max(1, target.tuning().maxQueueSize() - 1));
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (ctx.channel().remoteAddress() instanceof InetSocketAddress a) {
            queue.admitFrom(a.getAddress());
        }
        // a host gets this long to complete ICReq, Connect and (if asked) authentication; then the socket is closed
        long deadline = target.tuning().connectTimeoutMillis();
        ctx.executor().schedule(() -> {
            if (!queue.admitted() && ctx.channel().isOpen()) {
                DEADLINE.log(System.Logger.Level.INFO, "closing the connection from {0}: not {1} within {2} ms", peer(),
                        queue.qid() < 0 ? "connected" : "authenticated", deadline);
                ctx.close();
            }
        }, deadline, TimeUnit.MILLISECONDS);
    }

    // ---- reader side ----

    @Override
    protected boolean allowed(PduType type) {
        if (!initialized) {
            return type == PduType.IC_REQ;
        }
        return type == PduType.CAPSULE_CMD || type == PduType.H2C_DATA || type == PduType.H2C_TERM_REQ;
    }

    @Override
    protected long maxData(PduType type) {
        switch (type) {
            case CAPSULE_CMD:
                return target.tuning().inCapsuleDataSize();
            case H2C_DATA:
                return target.tuning().maxH2cData();
            default:
                return 0;
        }
    }

    @Override
    protected void beginData(ChannelHandlerContext ctx, PduType type, ByteBuf header, int flags, int dataLength)
            throws PduException {
        if (type == PduType.CAPSULE_CMD) {
            Request r = newRequest(header);
            r.data = allocateData(r, dataLength);
            receiving = r;
            receivingTag = -1;
        } else if (type == PduType.H2C_DATA) {
            Request r = h2cRequest(header, dataLength);
            receiving = r;
            receivingTag = r.transportTag;
        } else {
            throw new PduException(FatalErrorStatus.PDU_SEQUENCE_ERROR, 0, "unexpected " + type);
        }
    }

    @Override
    protected void dataChunk(ByteBuf src, int index, int length, int offset) {
        Request r = receiving;
        if (r == null) {
            return;
        }
        if (receivingTag >= 0 && (r.state != Request.State.TRANSFERRING_H2C || r.transportTag != receivingTag)) {
            // the write ended while its data was coming (its data timed out): the rest is dropped,
            // and the PDU's end finds its TTAG unknown
            receiving = null;
            return;
        }
        r.data.setBytes(r.dataOffset + r.received + offset, src, index, length);
    }

    @Override
    protected void onPdu(ChannelHandlerContext ctx, PduType type, ByteBuf header, int flags, int dataLength)
            throws PduException {
        Request r = receiving;
        receiving = null;
        switch (type) {
            case IC_REQ:
                initialize(header);
                break;
            case CAPSULE_CMD:
                if (dataLength == 0) {
                    r = newRequest(header);
                } else {
                    r.received = dataLength;
                    r.dataCorrupt = !dataDigestOk;
                }
                queue.start(r, readAt);
                break;
            case H2C_DATA:
                h2cData(h2cRequest(header, dataLength), dataLength);
                break;
            default:
                throw new PduException(FatalErrorStatus.PDU_SEQUENCE_ERROR, 0, "unexpected " + type);
        }
    }

    @Override
    protected void onPeerTermination(FatalErrorStatus fes, long fei) {
        LOG.log(System.Logger.Level.WARNING, "host {0} terminated the connection: {1} (field offset {2})", peer(), fes, fei);
    }

    private void initialize(ByteBuf header) throws PduException {
        ICReqPdu req = new ICReqPdu().wrap(Wire.load(header, 0, ICReqPdu.SIZE, scratch), 0);
        if (req.pfv() != 0) {
            throw new PduException(FatalErrorStatus.UNSUPPORTED_PARAMETER, ICReqPdu.PFV_OFFSET, "PFV " + req.pfv());
        }
        if (req.hpda() > 31) {
            throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, ICReqPdu.HPDA_OFFSET, "HPDA " + req.hpda());
        }
        boolean hd = (req.digest() & ICReqPdu.DGST_HEADER) != 0;
        boolean dd = (req.digest() & ICReqPdu.DGST_DATA) != 0;
        int align = (req.hpda() + 1) * 4;
        int headerEnd = DataPdu.SIZE + (hd ? Pdu.DIGEST_SIZE : 0);
        c2hDataOffset = (headerEnd + align - 1) / align * align;
        ICRespPdu resp = new ICRespPdu().wrap(scratch, 0);
        resp.encode(0, hd, dd, target.tuning().maxH2cData());
        write(writer.header(ctx.alloc(), ICRespPdu.SIZE, false, 0));
        headerDigest = hd;
        dataDigest = dd;
        initialized = true;
        // writes whose data is overdue are failed; checked a few times per timeout, no work per command
        long period = Math.max(50, target.tuning().dataTimeoutMillis() / 4);
        dataCheck = ctx.executor().scheduleAtFixedRate(() -> queue.expireOverdueData(System.nanoTime()), period, period,
                TimeUnit.MILLISECONDS);
    }

    private Request newRequest(ByteBuf header) throws PduException {
        Request r = queue.acquire();
        if (r == null) {
            throw new PduException(FatalErrorStatus.PDU_SEQUENCE_ERROR, 0, "more commands in flight than the queue holds");
        }
        r.loadSqe(header, Pdu.COMMON_HEADER_SIZE);
        return r;
    }

    /** The write an H2CData PDU carries data for, once its header is checked against what was asked. */
    private Request h2cRequest(ByteBuf header, int dataLength) throws PduException {
        DataPdu pdu = dataView.wrap(Wire.load(header, 0, DataPdu.SIZE, scratch), 0);
        Request r = queue.byTag(pdu.ttag() & ((1 << slotBits) - 1));
        if (r == null || r.state != Request.State.TRANSFERRING_H2C || r.transportTag != pdu.ttag()) {
            throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, DataPdu.TTAG_OFFSET, "unknown TTAG " + pdu.ttag());
        }
        if (r.cid() != pdu.cccid()) {
            throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, DataPdu.CCCID_OFFSET, "CCCID " + pdu.cccid()
                    + " does not match TTAG " + pdu.ttag());
        }
        if (pdu.datal() != dataLength) {
            throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, DataPdu.DATAL_OFFSET, "DATAL " + pdu.datal()
                    + " but the PDU carries " + dataLength);
        }
        if (pdu.datao() != r.received || pdu.datao() + pdu.datal() > r.transportCursor) {
            throw new PduException(FatalErrorStatus.DATA_TRANSFER_OUT_OF_RANGE, DataPdu.DATAO_OFFSET,
                    "H2CData at " + pdu.datao() + "+" + pdu.datal() + " outside the R2T window " + r.received + ".."
                            + r.transportCursor);
        }
        return r;
    }

    private void h2cData(Request r, int dataLength) {
        r.received += dataLength;
        r.dataCorrupt |= !dataDigestOk;
        if (r.received == r.length) {
            queue.dataReceived(r);
        } else if (r.received == r.transportCursor) {
            fetchData(r);
        }
    }

    @Override
    protected void sendTermination(ChannelHandlerContext ctx, PduException e, ByteBuf header) {
        LOG.log(System.Logger.Level.WARNING, "closing connection from {0}: {1} ({2})", peer(), e.status(), e.getMessage());
        writeTermination(ctx, PduType.C2H_TERM_REQ, e, header);
    }

    // ---- QueueTransport ----

    @Override
    public EventLoop eventLoop() {
        return ctx.channel().eventLoop();
    }

    @Override
    public ByteBuf allocateData(Request r, int length) {
        int align = r.dataAlignment();
        ByteBuf b = ctx.alloc().directBuffer(c2hDataOffset + length + Pdu.DIGEST_SIZE + (align > 1 ? align : 0));
        r.dataOffset = c2hDataOffset;
        if (align > 1) {
            // O_DIRECT: the data itself must start on an aligned address; the C2HData header
            // then sits right in front of it.
            ByteBuffer nio = b.internalNioBuffer(0, b.capacity());
            int misalignment = nio.alignmentOffset(nio.position() + c2hDataOffset, align);
            r.dataOffset = c2hDataOffset + (misalignment == 0 ? 0 : align - misalignment);
        }
        return b;
    }

    @Override
    public void fetchData(Request r) {
        // One R2T for everything still missing; the host splits it into H2CData PDUs of
        // at most MAXH2CDATA, so MAXR2T (at least 1) always holds.
        int offset = r.received;
        int length = r.length - offset;
        r.transportCursor = r.length;
        r.dataDeadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(target.tuning().dataTimeoutMillis());
        R2TPdu pdu = r2tView.wrap(scratch, 0);
        r.transportTag = (++r2tCount << slotBits | r.tag) & 0xffff;
        pdu.encode(r.cid(), r.transportTag, offset, length, headerDigest);
        write(writer.header(ctx.alloc(), R2TPdu.SIZE, headerDigest, 0));
    }

    @Override
    public void sendCompletion(Request r) {
        // With SQ flow control off there is no SQ head to report, so a successful read needs no
        // response capsule: the last C2HData says SUCCESS instead (NVMe/TCP 1.0, 3.6.2.8).
        boolean successInData = r.c2hLength > 0 && r.status.isSuccess() && r.result == 0 && queue.sqFlowControlDisabled();
        if (r.c2hLength > 0) {
            int len = r.c2hLength;
            dataView.wrap(scratch, 0);
            dataView.encode(PduType.C2H_DATA, Pdu.FLAG_LAST_PDU | (successInData ? Pdu.FLAG_SUCCESS : 0), r.cid(), 0, 0,
                    len, headerDigest, dataDigest);
            dataView.pdo(c2hDataOffset).plen(c2hDataOffset + len + (dataDigest ? Pdu.DIGEST_SIZE : 0));
            int headerEnd = DataPdu.SIZE + (headerDigest ? Pdu.DIGEST_SIZE : 0);
            ByteBuf view = r.view;
            if (view != null) {
                // the data straight from the backend's memory: the header in a buffer of its own
                r.view = null;
                ByteBuf h = writer.header(ctx.alloc(), DataPdu.SIZE, headerDigest, c2hDataOffset - headerEnd);
                h.writeZero(c2hDataOffset - headerEnd);
                write(h);
                write(view);
            } else {
                ByteBuf d = r.data;
                r.data = null;
                int start = r.dataOffset - c2hDataOffset; // the header goes right before the data
                d.setIndex(start, start);
                writer.header(d, DataPdu.SIZE, headerDigest);
                if (c2hDataOffset > headerEnd) {
                    d.setZero(start + headerEnd, c2hDataOffset - headerEnd);
                }
                d.writerIndex(r.dataOffset + len);
                if (dataDigest) {
                    writer.dataDigest(d, r.dataOffset, len);
                }
                write(d);
            }
            if (successInData) {
                queue.release(r);
                return;
            }
        }
        respView.wrap(scratch, 0);
        respView.init(PduType.CAPSULE_RESP, headerDigest ? Pdu.FLAG_HDGST : 0, 0,
                CapsuleResponsePdu.SIZE + (headerDigest ? Pdu.DIGEST_SIZE : 0));
        respView.cqe(cqeView).result(r.result).sqhd(queue.sqhd()).sqid(Math.max(queue.qid(), 0)).cid(r.cid())
                .status(r.status);
        ByteBuf out = writer.header(ctx.alloc(), CapsuleResponsePdu.SIZE, headerDigest, 0);
        queue.release(r);
        write(out);
    }

    /** Without a data digest (which would need the data in a buffer of ours) and on native epoll (writev of addresses). */
    @Override
    public boolean sendsViews() {
        return !dataDigest && EventLoops.nativeEpoll();
    }

    @Override
    public boolean acceptsDataDescriptor(int id) {
        return id == Sgl.TCP_TRANSPORT;
    }

    @Override
    public void close() {
        ctx.close();
    }

    @Override
    public void abort() {
        ctx.channel().close(); // from another thread, Netty runs it on the channel's loop
    }

    @Override
    public PskIdentity tlsIdentity() {
        TlsPskHandler tls = ctx.pipeline().get(TlsPskHandler.class);
        return tls == null ? null : tls.identity();
    }

    @Override
    public String peer() {
        return String.valueOf(ctx.channel().remoteAddress());
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return (InetSocketAddress) ctx.channel().remoteAddress();
    }

    @Override
    public InetSocketAddress localAddress() {
        return (InetSocketAddress) ctx.channel().localAddress();
    }

    @Override
    public int inCapsuleDataSize() {
        return target.tuning().inCapsuleDataSize();
    }

    // ---- flushing: once per read loop, or at once for completions from elsewhere ----

    private void write(ByteBuf b) {
        if (!ctx.channel().isActive()) {
            b.release();
            return;
        }
        ctx.write(b, ctx.voidPromise());
        if (reading || flushHeld) {
            flushPending = true;
        } else {
            ctx.flush();
        }
    }

    /** The loop's io_uring is completing a batch of commands: one flush when it is done (see {@link #holdFlush}). */
    private boolean flushHeld;
    private final Runnable releaseFlush = this::releaseFlush;

    @Override
    public void holdFlush(LoopRing ring) {
        if (!flushHeld && !reading) {
            flushHeld = true;
            ring.afterBatch(releaseFlush);
        }
    }

    private void releaseFlush() {
        flushHeld = false;
        if (flushPending && !reading) {
            flushPending = false;
            ctx.flush();
        }
    }

    /** When the read being handled came in (its commands' arrival). */
    private long readAt;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        readAt = System.nanoTime(); // the commands in this read arrived now: one clock read per read
        reading = true;
        try {
            super.channelRead(ctx, msg);
        } finally {
            reading = false;
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        if (flushPending) {
            flushPending = false;
            ctx.flush();
        }
        super.channelReadComplete(ctx);
    }

    // ---- backpressure: a host that does not read its responses stops being read ----

    @Override
    protected boolean paused() {
        if (ctx.channel().isWritable()) {
            return false;
        }
        // Responses are piling up in the outbound buffer: take no new command until the host
        // drains them, so memory per connection stays bounded by the water marks plus the
        // commands already in flight.
        ctx.channel().config().setAutoRead(false);
        return true;
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (ctx.channel().isWritable() && !ctx.channel().config().isAutoRead() && ctx.channel().isActive()) {
            ctx.channel().config().setAutoRead(true);
            resume(ctx);
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (dataCheck != null) {
            dataCheck.cancel(false);
        }
        queue.closed();
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.log(System.Logger.Level.WARNING, "connection from " + peer() + " failed", cause);
        ctx.close();
    }
}
