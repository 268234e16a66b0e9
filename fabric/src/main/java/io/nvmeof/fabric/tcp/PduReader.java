package io.nvmeof.fabric.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.tcp.FatalErrorStatus;
import io.nvmeof.protocol.tcp.Pdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.protocol.tcp.TermReqPdu;
import java.nio.ByteBuffer;

/**
 * Reads the NVMe/TCP byte stream as it arrives, one state machine for both sides (the states of
 * nvmet-tcp's receive path and SPDK's PDU states): the header is collected (at most a few hundred
 * bytes) and checked, common header first (known type, allowed in this state, the type's HLEN, the
 * negotiated digests, a PDO inside the PDU, a PLEN within the negotiated limits), then its digest;
 * at the start of a PDU's data the side names where the data goes ({@link #beginData}), and every
 * chunk of the inbound buffers is copied there once ({@link #dataChunk}) while the data digest runs
 * over it; the PDU is handed over complete ({@link #onPdu}). Nothing is cumulated, and nothing is
 * allocated per PDU. A violation ends the connection with a termination PDU that names the bad
 * field (NVMe/TCP 1.0, 3.6.2.4 and 3.6.2.1). Subclasses are confined to their channel's event loop.
 */
public abstract class PduReader extends ChannelInboundHandlerAdapter {
    private static final int HEADER = 0;
    private static final int PAD = 1;
    private static final int DATA = 2;
    private static final int DIGEST = 3;
    private static final int FAILED = 4;
    /** Room for the longest header with its digest (ICReq, 128 bytes) or a TermReq with its data. */
    private static final int HEAD_CAPACITY = 256;

    /** Header digest negotiated in ICReq/ICResp; applies to every PDU after them. */
    protected boolean headerDigest;
    /** Data digest negotiated; applies to every PDU that carries data. */
    protected boolean dataDigest;
    /** Little-endian scratch space for header views; confined to the event loop. */
    protected final ByteBuffer scratch = Flyweight.allocate(256);
    /** Writes this side's PDUs, through {@link #scratch}. */
    protected final PduWriter writer = new PduWriter(scratch);
    private final Crc32c headerCrc = new Crc32c();
    private final Crc32c dataCrc = new Crc32c();
    private final TermReqPdu termView = new TermReqPdu();
    /**
     * Whether the data of the PDU being handled matched its data digest. A mismatch is not
     * fatal (NVMe/TCP 1.0, 3.6.1.4; SPDK agrees): the command it belongs to completes with
     * Transient Transport Error and the connection lives on.
     */
    protected boolean dataDigestOk = true;

    /** The header of the PDU being read (and, at its end, the data digest); a heap array, never released. */
    private final ByteBuf head = Unpooled.wrappedBuffer(new byte[HEAD_CAPACITY]).clear();
    /** Bytes that came while the side could take no PDU, kept until {@link #resume}. */
    private ByteBuf pending;
    private int state = HEADER;
    /** Whether the common header of the PDU in {@link #head} was checked. */
    private boolean checked;
    /** How many bytes of the PDU go to {@link #head}: its header (and digest), or a TermReq whole. */
    private int headLength;
    private PduType type;
    private int flags;
    private int padLeft;
    private int dataLength;
    private int dataRead;
    private boolean pduDataDigest;

    /** Whether a PDU of this type may arrive now. */
    protected abstract boolean allowed(PduType type);

    /** The largest data payload a PDU of this type may carry now. */
    protected abstract long maxData(PduType type);

    /**
     * A PDU that carries {@code dataLength} bytes of data is about to deliver them: check its
     * header (in {@code header} from index 0) and choose where the data goes. Throwing ends the
     * connection before any of the data is taken.
     */
    protected abstract void beginData(ChannelHandlerContext ctx, PduType type, ByteBuf header, int flags,
                                      int dataLength) throws PduException;

    /**
     * {@code length} bytes of the current PDU's data, {@code offset} bytes into it, are at
     * {@code index} of {@code src} (the buffer as it came off the socket): copy them to where
     * {@link #beginData} chose. {@code src} is only valid during the call.
     */
    protected abstract void dataChunk(ByteBuf src, int index, int length, int offset);

    /**
     * Handles one complete PDU; its header is in {@code header} from index 0, and its data, if any
     * ({@code dataLength} bytes), was handed to {@link #dataChunk} and its digest is in
     * {@link #dataDigestOk}.
     */
    protected abstract void onPdu(ChannelHandlerContext ctx, PduType type, ByteBuf header, int flags, int dataLength)
            throws PduException;

    /** The peer sent a termination PDU ({@code fes} null if its code is unknown); the channel closes next. */
    protected abstract void onPeerTermination(FatalErrorStatus fes, long fei);

    /** Sends the termination PDU of this side; the reader then closes the channel. */
    protected abstract void sendTermination(ChannelHandlerContext ctx, PduException e, ByteBuf header);

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (!(msg instanceof ByteBuf)) {
            ctx.fireChannelRead(msg);
            return;
        }
        ByteBuf in = (ByteBuf) msg;
        if (state == FAILED) {
            in.release();
            return;
        }
        if (pending != null) {
            in = ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(ctx.alloc(), pending, in);
            pending = null;
        }
        try {
            read(ctx, in);
        } finally {
            if (in.isReadable() && state != FAILED) {
                pending = in; // paused at a PDU boundary
            } else {
                in.release();
            }
        }
    }

    private void read(ChannelHandlerContext ctx, ByteBuf in) {
        while (state != FAILED && in.isReadable()) {
            try {
                switch (state) {
                    case HEADER:
                        if (head.writerIndex() == 0 && paused()) {
                            return;
                        }
                        readHeader(ctx, in);
                        break;
                    case PAD: {
                        int n = Math.min(padLeft, in.readableBytes());
                        in.skipBytes(n);
                        padLeft -= n;
                        if (padLeft == 0) {
                            state = DATA;
                        }
                        break;
                    }
                    case DATA:
                        readData(ctx, in);
                        break;
                    case DIGEST: {
                        int n = Math.min(headLength + Pdu.DIGEST_SIZE - head.writerIndex(), in.readableBytes());
                        head.writeBytes(in, n);
                        if (head.writerIndex() == headLength + Pdu.DIGEST_SIZE) {
                            dataDigestOk = head.getIntLE(headLength) == dataCrc.value();
                            pduRead(ctx);
                        }
                        break;
                    }
                    default:
                        throw new IllegalStateException("state " + state);
                }
            } catch (PduException e) {
                fail(ctx, e, in);
            } catch (RuntimeException e) {
                // A bug of ours, not the peer's fault, but the queue's state is unknown now:
                // drop the connection, and never hand this or any later PDU over again.
                state = FAILED;
                in.skipBytes(in.readableBytes());
                ctx.fireExceptionCaught(e);
                ctx.close();
            }
        }
    }

    private void readHeader(ChannelHandlerContext ctx, ByteBuf in) throws PduException {
        int want = (checked ? headLength : Pdu.COMMON_HEADER_SIZE) - head.writerIndex();
        int n = Math.min(want, in.readableBytes());
        head.writeBytes(in, n);
        if (n < want) {
            return;
        }
        if (!checked) {
            checkHeader();
            checked = true;
            if (head.writerIndex() < headLength) {
                return;
            }
        }
        PduType t = type;
        int hlen = t.headerLength;
        if (headerDigest && t.digestible() && headerCrc.compute(head, 0, hlen) != head.getIntLE(hlen)) {
            throw new PduException(FatalErrorStatus.HEADER_DIGEST_ERROR, 0, t + " header digest mismatch");
        }
        if (t == PduType.H2C_TERM_REQ || t == PduType.C2H_TERM_REQ) {
            // The peer ends the connection; nothing is sent back (NVMe/TCP 1.0, 3.6.2.4).
            FatalErrorStatus fes = FatalErrorStatus.of(head.getUnsignedShortLE(TermReqPdu.FES_OFFSET));
            long fei = head.getUnsignedIntLE(TermReqPdu.FEI_OFFSET);
            state = FAILED;
            in.skipBytes(in.readableBytes());
            onPeerTermination(fes, fei);
            ctx.close();
            return;
        }
        if (dataLength == 0) {
            dataDigestOk = true;
            pduRead(ctx);
            return;
        }
        dataRead = 0;
        if (pduDataDigest) {
            dataCrc.reset();
        }
        beginData(ctx, t, head, flags, dataLength);
        state = padLeft > 0 ? PAD : DATA;
    }

    private void readData(ChannelHandlerContext ctx, ByteBuf in) throws PduException {
        int n = Math.min(dataLength - dataRead, in.readableBytes());
        int index = in.readerIndex();
        if (pduDataDigest) {
            dataCrc.update(in, index, n);
        }
        dataChunk(in, index, n, dataRead);
        in.skipBytes(n);
        dataRead += n;
        if (dataRead == dataLength) {
            if (pduDataDigest) {
                state = DIGEST;
            } else {
                dataDigestOk = true;
                pduRead(ctx);
            }
        }
    }

    /** The PDU is complete: hand it over, then start on the next one (unless the connection failed meanwhile). */
    private void pduRead(ChannelHandlerContext ctx) throws PduException {
        onPdu(ctx, type, head, flags, dataLength);
        if (state != FAILED) {
            head.clear();
            checked = false;
            state = HEADER;
        }
    }

    /**
     * Validates the common header in {@link #head} and works out how the PDU is laid out: how
     * much of it is header, how much padding, data and digest.
     */
    private void checkHeader() throws PduException {
        int code = head.getUnsignedByte(Pdu.TYPE_OFFSET);
        PduType t = PduType.of(code);
        if (t == null) {
            throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.TYPE_OFFSET, "unknown PDU type " + code);
        }
        if (!allowed(t)) {
            throw new PduException(FatalErrorStatus.PDU_SEQUENCE_ERROR, Pdu.TYPE_OFFSET, t + " not allowed now");
        }
        int f = head.getUnsignedByte(Pdu.FLAGS_OFFSET);
        int hlen = head.getUnsignedByte(Pdu.HLEN_OFFSET);
        if (hlen != t.headerLength) {
            throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.HLEN_OFFSET,
                    t + " with HLEN " + hlen + ", expected " + t.headerLength);
        }
        boolean hd = headerDigest && t.digestible();
        if (hd != ((f & Pdu.FLAG_HDGST) != 0)) {
            throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.FLAGS_OFFSET,
                    t + " HDGSTF " + ((f & Pdu.FLAG_HDGST) != 0) + " but header digest " + hd);
        }
        long plen = head.getUnsignedIntLE(Pdu.PLEN_OFFSET);
        int pdo = head.getUnsignedByte(Pdu.PDO_OFFSET);
        int headerEnd = hlen + (hd ? Pdu.DIGEST_SIZE : 0);
        if (plen < headerEnd) {
            throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.PLEN_OFFSET,
                    t + " PLEN " + plen + " shorter than its header");
        }
        type = t;
        flags = f;
        padLeft = 0;
        dataLength = 0;
        pduDataDigest = false;
        if (t == PduType.H2C_TERM_REQ || t == PduType.C2H_TERM_REQ) {
            if (plen > hlen + TermReqPdu.MAX_DATA) {
                throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.PLEN_OFFSET, t + " PLEN " + plen);
            }
            headLength = (int) plen; // the header in error the peer reports comes with it
            return;
        }
        headLength = headerEnd;
        if (plen > headerEnd) {
            // The PDU carries data: it starts at PDO, after the header (and its digest).
            boolean dd = (f & Pdu.FLAG_DDGST) != 0;
            if (dataDigest != dd) {
                throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.FLAGS_OFFSET,
                        t + " DDGSTF does not match the negotiated data digest");
            }
            if (pdo < headerEnd || pdo >= plen) {
                throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.PDO_OFFSET,
                        t + " PDO " + pdo + " outside the PDU");
            }
            long max = maxData(t);
            if (max == 0) {
                throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.PLEN_OFFSET,
                        t + " carries no data, but PLEN is " + plen);
            }
            long data = plen - pdo - (dd ? Pdu.DIGEST_SIZE : 0);
            if (data <= 0) {
                throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.PLEN_OFFSET,
                        t + " PLEN " + plen + " leaves no room for data");
            }
            if (data > max) {
                throw new PduException(FatalErrorStatus.DATA_TRANSFER_LIMIT_EXCEEDED, Pdu.PLEN_OFFSET,
                        t + " carries " + data + " bytes, more than the " + max + " allowed");
            }
            padLeft = pdo - headerEnd;
            dataLength = (int) data;
            pduDataDigest = dd;
        } else if (pdo != 0 && pdo != headerEnd) {
            throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.PDO_OFFSET, t + " PDO " + pdo);
        }
    }

    /**
     * True while the handler cannot take more PDUs (its responses are not draining). Reading
     * stops at the next PDU boundary with the rest kept; call {@link #resume} to go on.
     */
    protected boolean paused() {
        return false;
    }

    /** Reads what was kept while paused, as if it had just arrived. */
    protected final void resume(ChannelHandlerContext ctx) {
        ctx.pipeline().fireChannelRead(Unpooled.EMPTY_BUFFER);
        ctx.pipeline().fireChannelReadComplete();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        // Whatever is left unread belongs to a dead connection: do not read it on close.
        state = FAILED;
        releasePending();
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) throws Exception {
        releasePending();
        super.handlerRemoved(ctx);
    }

    private void releasePending() {
        if (pending != null) {
            pending.release();
            pending = null;
        }
    }

    private void fail(ChannelHandlerContext ctx, PduException e, ByteBuf in) {
        // The TermReq carries the header of the PDU in error (HLEN bytes, at most 128): what was
        // collected of it, and the rest if it has come.
        int hlen = head.writerIndex() > Pdu.HLEN_OFFSET ? head.getUnsignedByte(Pdu.HLEN_OFFSET) : 0;
        int len = Math.min(Math.max(hlen, Pdu.COMMON_HEADER_SIZE), TermReqPdu.MAX_DATA);
        ByteBuf header = ctx.alloc().heapBuffer(len);
        header.writeBytes(head, 0, Math.min(head.writerIndex(), len));
        if (state == HEADER) {
            header.writeBytes(in, in.readerIndex(), Math.min(len - header.writerIndex(), in.readableBytes()));
        }
        state = FAILED;
        in.skipBytes(in.readableBytes());
        onFatal(e);
        sendTermination(ctx, e, header);
    }

    /** Called once when the connection is about to end with a termination PDU. */
    protected void onFatal(PduException e) {
    }

    /**
     * Writes a termination PDU of {@code type} whose data is (up to 128 bytes of) the header in
     * error, then closes the channel once it is on the wire. Releases {@code header}.
     */
    protected final void writeTermination(ChannelHandlerContext ctx, PduType type, PduException e, ByteBuf header) {
        try {
            int dataLen = Math.min(header.readableBytes(), TermReqPdu.MAX_DATA);
            termView.wrap(scratch, 0);
            termView.encode(type, e.status(), e.fieldInfo(), dataLen);
            ByteBuf pdu = writer.header(ctx.alloc(), TermReqPdu.SIZE, false, dataLen);
            pdu.writeBytes(header, header.readerIndex(), dataLen);
            ctx.writeAndFlush(pdu).addListener(ChannelFutureListener.CLOSE);
        } finally {
            header.release();
        }
    }
}
