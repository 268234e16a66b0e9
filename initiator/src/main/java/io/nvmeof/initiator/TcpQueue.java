package io.nvmeof.initiator;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.concurrent.ScheduledFuture;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.fabric.tcp.PduException;
import io.nvmeof.fabric.tcp.PduReader;
import io.nvmeof.fabric.tcp.PduWriter;
import io.nvmeof.fabric.tcp.Wire;
import io.nvmeof.fabric.tls.TlsPskHandler;
import io.nvmeof.fabric.tls.TlsSession;
import io.nvmeof.protocol.CompletionQueueEntry;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.Status;
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
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The host side of one NVMe/TCP connection (one queue): ICReq/ICResp, command capsules
 * with in-capsule data for small writes, H2CData in answer to R2T, C2HData into the
 * caller's buffer, response capsules, digests (NVMe/TCP Transport 1.0). Confined to the
 * channel's event loop.
 */
final class TcpQueue extends HostQueue {
    private static final System.Logger LOG = System.getLogger(TcpQueue.class.getName());
    /** The admin queue accepts 8 KiB in-capsule (for Connect) before IOCCSZ is known. */
    public static final int ADMIN_IN_CAPSULE = 8192;
    /** Upper bound of one C2HData payload this side buffers. */
    private static final int MAX_C2H_DATA = 16 << 20;

    private final boolean wantHeaderDigest;
    private final boolean wantDataDigest;
    private final SubmissionQueueEntry sqeView = new SubmissionQueueEntry();
    private final CompletionQueueEntry cqeView = new CompletionQueueEntry();
    private final DataPdu dataView = new DataPdu();
    private final R2TPdu r2tView = new R2TPdu();
    private final CapsuleCommandPdu capsuleView = new CapsuleCommandPdu();
    private final Handler handler = new Handler();
    /** The read whose data the C2HData PDU being read carries, its CID and the data offset of the PDU. */
    private Command receiving;
    private int receivingCid;
    private int receivingAt;
    private long maxH2cData;
    private ChannelHandlerContext ctx;
    private Channel channel;
    private boolean initialized;
    /** This side ended the connection (a close, an error it found): the controller's end then proves nothing. */
    private volatile boolean closedByUs;
    /** When the controller's end of the connection came (its FIN, after ours or on its own), or 0. */
    private volatile long peerClosedAtNanos;
    private boolean flushScheduled;
    private final Runnable flushTask = () -> {
        flushScheduled = false;
        if (ctx != null) {
            ctx.flush();
        }
    };

    /** A queue not yet on a channel: {@link #open} puts it on a socket, tests on an embedded channel ({@link #handler()}). */
    TcpQueue(int qid, int depth, int inCapsuleLimit, boolean hd, boolean dd, long commandTimeoutNanos,
             int connectTimeoutMillis) {
        super(qid, depth, inCapsuleLimit, commandTimeoutNanos, connectTimeoutMillis);
        this.wantHeaderDigest = hd;
        this.wantDataDigest = dd;
    }

    /**
     * Opens a TCP connection and runs connection initialization. The future completes when
     * the ICResp arrived; command-level Connect is the caller's next step.
     */
    public static CompletableFuture<HostQueue> open(EventLoopGroup group, InetSocketAddress address, int qid, int depth,
                                                     int inCapsuleLimit, boolean hd, boolean dd, long commandTimeoutNanos,
                                                     int connectTimeoutMillis, Supplier<ChannelHandler> tls) {
        TcpQueue q = new TcpQueue(qid, depth, inCapsuleLimit, hd, dd, commandTimeoutNanos, connectTimeoutMillis);
        ChannelHandler h = tls == null ? q.handler : new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
                // the secure channel first (NVMe/TCP 1.1, 3.6.1): the ICReq waits in it for the handshake
                ch.pipeline().addLast("tls", tls.get()).addLast("nvme-tcp", q.handler);
            }
        };
        Bootstrap b = new Bootstrap().group(group).channel(EventLoops.clientChannel(group))
                .option(ChannelOption.ALLOCATOR, EventLoops.ALLOCATOR)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis)
                .handler(h);
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

    /** The secure channel's outcome (NVMe/TCP over TLS), or null when the connection is in the clear. */
    TlsSession tlsSession() {
        TlsPskHandler t = channel == null ? null : channel.pipeline().get(TlsPskHandler.class);
        return t == null ? null : t.session();
    }

    /** The channel handler that is this queue's end of the connection. */
    ChannelHandler handler() {
        return handler;
    }

    /** Completes when the ICResp has come. */
    CompletableFuture<HostQueue> ready() {
        return ready;
    }

    @Override
    public EventLoop eventLoop() {
        return channel.eventLoop();
    }

    @Override
    public boolean isOpen() {
        return failure == null && channel.isActive();
    }

    // ---- submission ----

    @Override
    protected void transmit(Command c) {
        ByteBuffer scratch = handler.scratch();
        boolean inCapsule = c.direction == Command.TO_CONTROLLER && c.length <= inCapsuleLimit;
        int dataLen = inCapsule ? c.length : 0;
        boolean hd = handler.headerDigest();
        boolean dd = handler.dataDigest() && dataLen > 0;
        int hdr = CapsuleCommandPdu.SIZE + (hd ? Pdu.DIGEST_SIZE : 0);
        int plen = hdr + dataLen + (dd ? Pdu.DIGEST_SIZE : 0);
        capsuleView.wrap(scratch, 0);
        capsuleView.init(PduType.CAPSULE_CMD, (hd ? Pdu.FLAG_HDGST : 0) | (dd ? Pdu.FLAG_DDGST : 0),
                dataLen > 0 ? hdr : 0, plen);
        SubmissionQueueEntry sqe = capsuleView.sqe(sqeView);
        c.fill(sqe);
        sqe.cid(c.cid);
        if (c.direction != Command.NONE) {
            sqe.sgl(0, c.length, inCapsule ? Sgl.IN_CAPSULE : Sgl.TCP_TRANSPORT);
        } else {
            sqe.sgl(0, 0, Sgl.TCP_TRANSPORT);
        }
        PduWriter writer = handler.writer();
        ByteBuf out = writer.header(ctx.alloc(), CapsuleCommandPdu.SIZE, hd, plen - hdr);
        try {
            if (dataLen > 0) {
                copyOut(c.data, 0, dataLen, out);
                if (dd) {
                    writer.dataDigest(out, hdr, dataLen);
                }
            }
        } catch (RuntimeException e) {
            // the caller's buffer could not be read (say, its limit moved): this command alone fails
            out.release();
            unsent(c, new IOException(c.name() + ": " + e, e));
            return;
        }
        c.received = dataLen; // in-capsule data is sent; R2Ts ask for the rest, in order
        write(out);
    }

    private void write(ByteBuf out) {
        ctx.write(out, ctx.voidPromise());
        if (!flushScheduled) {
            flushScheduled = true;
            ctx.executor().execute(flushTask);
        }
    }

    /**
     * A command timed out: this side sends its FIN and the controller, seeing the connection
     * end, closes its side, which tells this side when it noticed ({@link #closeConfirmed});
     * one that does not within the connect timeout is cut off.
     */
    @Override
    protected void resetConnection() {
        halfClose(connectTimeoutMillis);
    }

    /** On the loop: sends this side's FIN unless the connection is ending already; cuts it off after {@code boundMillis}. */
    private void halfClose(long boundMillis) {
        if (channel.isActive() && !closedByUs && channel instanceof DuplexChannel) {
            ((DuplexChannel) channel).shutdownOutput();
            ScheduledFuture<?> cut = channel.eventLoop().schedule(this::closeNow, boundMillis, TimeUnit.MILLISECONDS);
            ended.whenComplete((v, e) -> cut.cancel(false));
        } else {
            closeNow();
        }
    }

    private void closeNow() {
        if (channel.isActive()) {
            closedByUs = true;
        }
        channel.close();
    }

    @Override
    CompletableFuture<Long> closeConfirmed(long boundMillis) {
        CompletableFuture<Long> result = ended.thenApply(v -> closedByUs ? 0L : peerClosedAtNanos);
        try {
            channel.eventLoop().execute(() -> halfClose(boundMillis));
        } catch (RejectedExecutionException e) {
            channel.close(); // the loop is gone, and the connection with it
        }
        return result;
    }

    // ---- receive ----

    private void icResp(ByteBuf header) throws PduException {
        ByteBuffer scratch = handler.scratch();
        ICRespPdu resp = new ICRespPdu().wrap(Wire.load(header, 0, ICRespPdu.SIZE, scratch), 0);
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
        handler.digests(hd, dd);
        maxH2cData = resp.maxH2cData();
        initialized = true;
        ready.complete(this);
    }

    private Command inFlight(int cid, int fieldOffset) throws PduException {
        Command c = inFlight(cid);
        if (c == null) {
            throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, fieldOffset, "no command with CID " + cid);
        }
        return c;
    }

    private void response(ByteBuf header) throws PduException {
        CompletionQueueEntry cqe = cqeView.wrap(Wire.load(header, CapsuleResponsePdu.CQE_OFFSET,
                CompletionQueueEntry.SIZE, handler.scratch()), 0);
        int cid = cqe.cid();
        Command c = inFlight(cid, CapsuleResponsePdu.CQE_OFFSET + CompletionQueueEntry.CID_OFFSET);
        // read everything first: retiring the slot may issue the next command, through the same scratch buffer
        responded(c, cqe.status(), cqe.result());
    }

    /** The read a C2HData PDU carries data for, once its header is checked against the command. */
    private Command c2hCommand(ByteBuf header, int dataLength) throws PduException {
        DataPdu pdu = dataView.wrap(Wire.load(header, 0, DataPdu.SIZE, handler.scratch()), 0);
        Command c = inFlight(pdu.cccid(), DataPdu.CCCID_OFFSET);
        long datao = pdu.datao();
        if (c.direction != Command.FROM_CONTROLLER || pdu.datal() != dataLength || datao != c.received
                || datao + dataLength > c.length) {
            throw new PduException(FatalErrorStatus.DATA_TRANSFER_OUT_OF_RANGE, DataPdu.DATAO_OFFSET,
                    "C2HData " + datao + "+" + dataLength + " outside command " + c);
        }
        return c;
    }

    private void c2hData(Command c, int flags, int dataLength) throws PduException {
        if (!handler.dataDigestOk()) {
            c.dataCorrupt = true;
        }
        c.received += dataLength;
        if ((flags & Pdu.FLAG_SUCCESS) != 0) {
            if ((flags & Pdu.FLAG_LAST_PDU) == 0) {
                throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.FLAGS_OFFSET,
                        "SUCCESS without LAST_PDU");
            }
            if (c.received != c.length) {
                retire(c.cid);
                c.completeExceptionally(new IOException(c.name() + " ended with " + c.received + " of " + c.length
                        + " bytes"));
                return;
            }
            responded(c, Status.SUCCESS, 0);
        }
    }

    private void r2t(ByteBuf header) throws PduException {
        ByteBuffer scratch = handler.scratch();
        R2TPdu pdu = r2tView.wrap(Wire.load(header, 0, R2TPdu.SIZE, scratch), 0);
        Command c = inFlight(pdu.cccid(), R2TPdu.CCCID_OFFSET);
        long offset = pdu.r2to();
        long length = pdu.r2tl();
        if (c.direction != Command.TO_CONTROLLER || length == 0 || offset + length > c.length) {
            throw new PduException(FatalErrorStatus.DATA_TRANSFER_OUT_OF_RANGE, R2TPdu.R2TO_OFFSET,
                    "R2T " + offset + "+" + length + " outside command " + c);
        }
        if (offset != c.received) {
            // R2Ts come in order and never ask twice (NVMe/TCP 1.0, 3.6.2.9): R2TO is what was sent so far
            throw new PduException(FatalErrorStatus.DATA_TRANSFER_OUT_OF_RANGE, R2TPdu.R2TO_OFFSET,
                    "R2T " + offset + "+" + length + " for " + c + ", which has sent " + c.received + " bytes");
        }
        c.received += (int) length;
        int ttag = pdu.ttag();
        int cccid = pdu.cccid();
        long sent = 0;
        while (sent < length) {
            int chunk = (int) Math.min(length - sent, maxH2cData);
            boolean last = sent + chunk == length;
            boolean hd = handler.headerDigest();
            boolean dd = handler.dataDigest();
            int hdr = DataPdu.SIZE + (hd ? Pdu.DIGEST_SIZE : 0);
            dataView.wrap(scratch, 0);
            dataView.encode(PduType.H2C_DATA, last ? Pdu.FLAG_LAST_PDU : 0, cccid, ttag, offset + sent, chunk, hd, dd);
            ByteBuf out = handler.writer().header(ctx.alloc(), DataPdu.SIZE, hd, chunk + (dd ? Pdu.DIGEST_SIZE : 0));
            copyOut(c.data, (int) (offset + sent), chunk, out);
            if (dd) {
                handler.writer().dataDigest(out, hdr, chunk);
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
    static void copyOut(ByteBuffer buf, int at, int len, ByteBuf out) {
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
    static void copyIn(ByteBuf in, int index, ByteBuffer buf, int at, int len) {
        int pos = buf.position();
        int lim = buf.limit();
        buf.position(pos + at).limit(pos + at + len);
        try {
            in.getBytes(index, buf);
        } finally {
            buf.limit(lim).position(pos);
        }
    }

    @Override
    public CompletableFuture<Void> close() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (channel.isActive()) {
            closedByUs = true;
        }
        channel.close().addListener(f -> done.complete(null));
        return done;
    }

    /** The channel handler: PDU framing and checks, then the queue's methods above. */
    private final class Handler extends PduReader {
        ByteBuffer scratch() {
            return scratch;
        }

        PduWriter writer() {
            return writer;
        }

        boolean headerDigest() {
            return headerDigest;
        }

        boolean dataDigest() {
            return dataDigest;
        }

        boolean dataDigestOk() {
            return dataDigestOk;
        }

        void digests(boolean hd, boolean dd) {
            headerDigest = hd;
            dataDigest = dd;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext c) {
            ctx = c;
            channel = c.channel();
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) throws Exception {
            ICReqPdu req = new ICReqPdu().wrap(scratch, 0);
            req.encode(0, wantHeaderDigest, wantDataDigest, 0);
            ctx.writeAndFlush(writer.header(ctx.alloc(), ICReqPdu.SIZE, false, 0));
            ctx.executor().schedule(() -> {
                if (!ready.isDone()) {
                    ready.completeExceptionally(new IOException("no ICResp from " + ctx.channel().remoteAddress()
                            + " within " + connectTimeoutMillis + " ms"));
                    closeNow();
                }
            }, connectTimeoutMillis, TimeUnit.MILLISECONDS);
            startTimeoutChecks(ctx.channel().eventLoop());
            super.channelActive(ctx);
        }

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
        protected void beginData(ChannelHandlerContext ctx, PduType type, ByteBuf header, int flags, int dataLength)
                throws PduException {
            if (type != PduType.C2H_DATA) {
                throw new PduException(FatalErrorStatus.PDU_SEQUENCE_ERROR, 0, "unexpected " + type);
            }
            Command c = c2hCommand(header, dataLength);
            receiving = c;
            receivingCid = c.cid;
            receivingAt = c.received;
        }

        @Override
        protected void dataChunk(ByteBuf src, int index, int length, int offset) {
            Command c = receiving;
            if (c == null) {
                return;
            }
            if (inFlight(receivingCid) != c) {
                // the read ended while its data was coming (timed out): the caller has its buffer
                // back, so the rest is dropped, and the PDU's end finds the CID unknown
                receiving = null;
                return;
            }
            copyIn(src, index, c.data, receivingAt + offset, length);
        }

        @Override
        protected void onPdu(ChannelHandlerContext ctx, PduType type, ByteBuf header, int flags, int dataLength)
                throws PduException {
            receiving = null;
            switch (type) {
                case IC_RESP:
                    icResp(header);
                    break;
                case CAPSULE_RESP:
                    response(header);
                    break;
                case C2H_DATA:
                    c2hData(c2hCommand(header, dataLength), flags, dataLength);
                    break;
                case R2T:
                    r2t(header);
                    break;
                default:
                    throw new PduException(FatalErrorStatus.PDU_SEQUENCE_ERROR, 0, "unexpected " + type);
            }
        }

        @Override
        protected void onPeerTermination(FatalErrorStatus fes, long fei) {
            fail(new IOException("controller terminated queue " + qid + ": " + fes + " (field offset " + fei + ")"));
        }

        @Override
        protected void sendTermination(ChannelHandlerContext ctx, PduException e, ByteBuf header) {
            fail(new IOException("protocol error on queue " + qid + ": " + e.status() + ": " + e.getMessage()));
            closedByUs = true;
            writeTermination(ctx, PduType.H2C_TERM_REQ, e, header);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            if (!closedByUs && peerClosedAtNanos == 0) {
                peerClosedAtNanos = System.nanoTime();
            }
            connectionEnded(new IOException("connection of queue " + qid + " to " + ctx.channel().remoteAddress()
                    + " closed"));
            super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.log(System.Logger.Level.DEBUG, "queue " + qid + " failed", cause);
            fail(cause instanceof IOException ? cause : new IOException(cause.toString(), cause));
            // a reset proves nothing of the controller: a firewall that forgot the connection sends one too
            closeNow();
        }
    }
}
