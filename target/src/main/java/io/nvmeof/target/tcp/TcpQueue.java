package io.nvmeof.target.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.nvmeof.fabric.tcp.PduDecoder;
import io.nvmeof.fabric.tcp.PduException;
import io.nvmeof.fabric.tcp.Wire;
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
import io.nvmeof.target.Port;
import io.nvmeof.target.QueuePair;
import io.nvmeof.target.QueueTransport;
import io.nvmeof.target.Request;
import io.nvmeof.target.Target;
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
final class TcpQueue extends PduDecoder implements QueueTransport {
    private static final System.Logger LOG = System.getLogger(TcpQueue.class.getName());

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

    TcpQueue(Target target, Port port) {
        this.target = target;
        this.queue = new QueuePair(target, this, port);
        this.slotBits = 32 - Integer.numberOfLeadingZeros(Math.max(1, target.maxQueueSize() - 1));
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        // a host gets this long to complete ICReq and Connect; then the socket is closed
        long deadline = target.connectDeadlineMillis();
        ctx.executor().schedule(() -> {
            if (queue.qid() < 0 && ctx.channel().isOpen()) {
                LOG.log(System.Logger.Level.INFO, "closing the connection from {0}: no Connect within {1} ms", peer(),
                        deadline);
                ctx.close();
            }
        }, deadline, TimeUnit.MILLISECONDS);
    }

    // ---- decoder side ----

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
                return target.inCapsuleDataSize();
            case H2C_DATA:
                return target.maxH2cData();
            default:
                return 0;
        }
    }

    @Override
    protected void onPdu(ChannelHandlerContext ctx, PduType type, ByteBuf in, int start, int flags,
                         int dataStart, int dataLength) throws PduException {
        switch (type) {
            case IC_REQ:
                initialize(in, start);
                break;
            case CAPSULE_CMD:
                capsule(in, start, dataStart, dataLength);
                break;
            case H2C_DATA:
                h2cData(in, start, dataStart, dataLength);
                break;
            default:
                throw new PduException(FatalErrorStatus.PDU_SEQUENCE_ERROR, 0, "unexpected " + type);
        }
    }

    @Override
    protected void onPeerTermination(FatalErrorStatus fes, long fei) {
        LOG.log(System.Logger.Level.WARNING, "host {0} terminated the connection: {1} (field offset {2})", peer(), fes, fei);
    }

    private void initialize(ByteBuf in, int start) throws PduException {
        ICReqPdu req = new ICReqPdu().wrap(Wire.load(in, start, ICReqPdu.SIZE, scratch), 0);
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
        resp.encode(0, hd, dd, target.maxH2cData());
        ByteBuf out = ctx.alloc().directBuffer(ICRespPdu.SIZE);
        Wire.store(scratch, ICRespPdu.SIZE, out);
        write(out);
        headerDigest = hd;
        dataDigest = dd;
        initialized = true;
        // writes whose data is overdue are failed; checked a few times per timeout, no work per command
        long period = Math.max(50, target.dataTimeoutMillis() / 4);
        dataCheck = ctx.executor().scheduleAtFixedRate(() -> queue.expireOverdueData(System.nanoTime()), period, period,
                TimeUnit.MILLISECONDS);
    }

    private void capsule(ByteBuf in, int start, int dataStart, int dataLength) throws PduException {
        Request r = queue.acquire();
        if (r == null) {
            throw new PduException(FatalErrorStatus.PDU_SEQUENCE_ERROR, 0, "more commands in flight than the queue holds");
        }
        r.loadSqe(in, start + Pdu.COMMON_HEADER_SIZE);
        if (dataLength > 0) {
            r.data = allocateData(r, dataLength);
            r.data.setBytes(r.dataOffset, in, dataStart, dataLength);
            r.received = dataLength;
            r.dataCorrupt = !dataDigestOk;
        }
        queue.start(r);
    }

    private void h2cData(ByteBuf in, int start, int dataStart, int dataLength) throws PduException {
        DataPdu pdu = dataView.wrap(Wire.load(in, start, DataPdu.SIZE, scratch), 0);
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
        r.data.setBytes(r.dataOffset + r.received, in, dataStart, dataLength);
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
        r.dataDeadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(target.dataTimeoutMillis());
        R2TPdu pdu = r2tView.wrap(scratch, 0);
        r.transportTag = (++r2tCount << slotBits | r.tag) & 0xffff;
        pdu.encode(r.cid(), r.transportTag, offset, length, headerDigest);
        ByteBuf out = ctx.alloc().directBuffer(R2TPdu.SIZE + Pdu.DIGEST_SIZE);
        Wire.store(scratch, R2TPdu.SIZE, out);
        if (headerDigest) {
            out.writeIntLE(crc.compute(out, 0, R2TPdu.SIZE));
        }
        write(out);
    }

    @Override
    public void sendCompletion(Request r) {
        // With SQ flow control off there is no SQ head to report, so a successful read needs no
        // response capsule: the last C2HData says SUCCESS instead (NVMe/TCP 1.0, 3.6.2.8).
        boolean successInData = r.c2hLength > 0 && r.status.isSuccess() && r.result == 0 && queue.sqFlowControlDisabled();
        if (r.c2hLength > 0) {
            ByteBuf d = r.data;
            r.data = null;
            int len = r.c2hLength;
            dataView.wrap(scratch, 0);
            dataView.encode(PduType.C2H_DATA, Pdu.FLAG_LAST_PDU | (successInData ? Pdu.FLAG_SUCCESS : 0), r.cid(), 0, 0,
                    len, headerDigest, dataDigest);
            dataView.pdo(c2hDataOffset).plen(c2hDataOffset + len + (dataDigest ? Pdu.DIGEST_SIZE : 0));
            int start = r.dataOffset - c2hDataOffset; // the header goes right before the data
            d.setIndex(start, start);
            Wire.store(scratch, DataPdu.SIZE, d);
            int headerEnd = DataPdu.SIZE + (headerDigest ? Pdu.DIGEST_SIZE : 0);
            if (headerDigest) {
                d.writeIntLE(crc.compute(d, start, DataPdu.SIZE));
            }
            if (c2hDataOffset > headerEnd) {
                d.setZero(start + headerEnd, c2hDataOffset - headerEnd);
            }
            d.writerIndex(r.dataOffset + len);
            if (dataDigest) {
                d.writeIntLE(crc.compute(d, r.dataOffset, len));
            }
            write(d);
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
        ByteBuf out = ctx.alloc().directBuffer(CapsuleResponsePdu.SIZE + Pdu.DIGEST_SIZE);
        Wire.store(scratch, CapsuleResponsePdu.SIZE, out);
        if (headerDigest) {
            out.writeIntLE(crc.compute(out, 0, CapsuleResponsePdu.SIZE));
        }
        queue.release(r);
        write(out);
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
    public String peer() {
        return String.valueOf(ctx.channel().remoteAddress());
    }

    @Override
    public InetSocketAddress localAddress() {
        return (InetSocketAddress) ctx.channel().localAddress();
    }

    @Override
    public int inCapsuleDataSize() {
        return target.inCapsuleDataSize();
    }

    // ---- flushing: once per read loop, or at once for completions from elsewhere ----

    private void write(ByteBuf b) {
        if (!ctx.channel().isActive()) {
            b.release();
            return;
        }
        ctx.write(b, ctx.voidPromise());
        if (reading) {
            flushPending = true;
        } else {
            ctx.flush();
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
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
