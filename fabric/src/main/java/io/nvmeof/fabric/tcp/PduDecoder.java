package io.nvmeof.fabric.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.tcp.FatalErrorStatus;
import io.nvmeof.protocol.tcp.Pdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.protocol.tcp.TermReqPdu;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Frames the NVMe/TCP byte stream into PDUs and checks every common header before the PDU
 * reaches the side-specific handler: known type, allowed in this state, the type's HLEN,
 * the negotiated digests, a PDO inside the PDU and a PLEN within the negotiated limits.
 * A complete PDU is handed over in place (no copy, no message object); a violation ends
 * the connection with a termination PDU that names the bad field (NVMe/TCP 1.0, 3.6.2.4 and
 * 3.6.2.1). Subclasses are confined to their channel's event loop.
 */
public abstract class PduDecoder extends ByteToMessageDecoder {
    /** Header digest negotiated in ICReq/ICResp; applies to every PDU after them. */
    protected boolean headerDigest;
    /** Data digest negotiated; applies to every PDU that carries data. */
    protected boolean dataDigest;
    protected final Crc32c crc = new Crc32c();
    /** Little-endian scratch space for header views; confined to the event loop. */
    protected final ByteBuffer scratch = Flyweight.allocate(256);
    private final TermReqPdu termView = new TermReqPdu();
    private boolean failed;
    /**
     * Whether the data of the PDU being handled matched its data digest. A mismatch is not
     * fatal (NVMe/TCP 1.0, 3.6.1.4; SPDK agrees): the command it belongs to completes with
     * Transient Transport Error and the connection lives on.
     */
    protected boolean dataDigestOk = true;

    /** Whether a PDU of this type may arrive now. */
    protected abstract boolean allowed(PduType type);

    /** The largest data payload a PDU of this type may carry now. */
    protected abstract long maxData(PduType type);

    /**
     * Handles one complete PDU of {@code plen} bytes at {@code start} of {@code in}; data, if
     * any, is {@code dataLength} bytes at {@code dataStart} and its digest (if negotiated) was
     * checked already. The decoder advances past the PDU afterwards.
     */
    protected abstract void onPdu(ChannelHandlerContext ctx, PduType type, ByteBuf in, int start, int flags,
                                  int dataStart, int dataLength) throws PduException;

    /** Sends the termination PDU of this side; the decoder then closes the channel. */
    protected abstract void sendTermination(ChannelHandlerContext ctx, PduException e, ByteBuf header);

    @Override
    protected final void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (failed) {
            in.skipBytes(in.readableBytes());
            return;
        }
        while (in.readableBytes() >= Pdu.COMMON_HEADER_SIZE && !failed && !paused()) {
            int start = in.readerIndex();
            try {
                long plen = checkHeader(in, start);
                if (in.readableBytes() < plen) {
                    return;
                }
                dispatch(ctx, in, start, (int) plen);
                in.readerIndex(start + (int) plen);
            } catch (PduException e) {
                fail(ctx, e, in, start);
            } catch (RuntimeException e) {
                // A bug of ours, not the peer's fault, but the queue's state is unknown now:
                // drop the connection, and never hand this or any later PDU over again.
                failed = true;
                in.skipBytes(in.readableBytes());
                ctx.fireExceptionCaught(e);
                ctx.close();
            }
        }
    }

    /**
     * True while the handler cannot take more PDUs (its responses are not draining). Decoding
     * stops with the rest left in the cumulation; call {@link #resume} to go on.
     */
    protected boolean paused() {
        return false;
    }

    /** Decodes what was left in the cumulation while paused, as if it had just arrived. */
    protected final void resume(ChannelHandlerContext ctx) {
        ctx.pipeline().fireChannelRead(Unpooled.EMPTY_BUFFER);
        ctx.pipeline().fireChannelReadComplete();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        // Whatever is left unread belongs to a dead connection: do not decode it on close.
        failed = true;
        super.channelInactive(ctx);
    }

    /** Validates the common header; returns PLEN. */
    private long checkHeader(ByteBuf in, int start) throws PduException {
        int code = in.getUnsignedByte(start + Pdu.TYPE_OFFSET);
        PduType type = PduType.of(code);
        if (type == null) {
            throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.TYPE_OFFSET, "unknown PDU type " + code);
        }
        if (!allowed(type)) {
            throw new PduException(FatalErrorStatus.PDU_SEQUENCE_ERROR, Pdu.TYPE_OFFSET, type + " not allowed now");
        }
        int flags = in.getUnsignedByte(start + Pdu.FLAGS_OFFSET);
        int hlen = in.getUnsignedByte(start + Pdu.HLEN_OFFSET);
        if (hlen != type.headerLength) {
            throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.HLEN_OFFSET,
                    type + " with HLEN " + hlen + ", expected " + type.headerLength);
        }
        boolean hd = headerDigest && type.digestible();
        if (hd != ((flags & Pdu.FLAG_HDGST) != 0)) {
            throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.FLAGS_OFFSET,
                    type + " HDGSTF " + ((flags & Pdu.FLAG_HDGST) != 0) + " but header digest " + hd);
        }
        long plen = in.getUnsignedIntLE(start + Pdu.PLEN_OFFSET);
        int pdo = in.getUnsignedByte(start + Pdu.PDO_OFFSET);
        int headerEnd = hlen + (hd ? Pdu.DIGEST_SIZE : 0);
        if (plen < headerEnd) {
            throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.PLEN_OFFSET,
                    type + " PLEN " + plen + " shorter than its header");
        }
        if (type == PduType.H2C_TERM_REQ || type == PduType.C2H_TERM_REQ) {
            if (plen > hlen + TermReqPdu.MAX_DATA) {
                throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.PLEN_OFFSET, type + " PLEN " + plen);
            }
            return plen;
        }
        if (plen > headerEnd) {
            // The PDU carries data: it starts at PDO, after the header (and its digest).
            boolean dd = dataDigest && (flags & Pdu.FLAG_DDGST) != 0;
            if (dataDigest != ((flags & Pdu.FLAG_DDGST) != 0)) {
                throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.FLAGS_OFFSET,
                        type + " DDGSTF does not match the negotiated data digest");
            }
            if (pdo < headerEnd || pdo >= plen) {
                throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.PDO_OFFSET,
                        type + " PDO " + pdo + " outside the PDU");
            }
            if (maxData(type) == 0) {
                throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.PLEN_OFFSET,
                        type + " carries no data, but PLEN is " + plen);
            }
            long data = plen - pdo - (dd ? Pdu.DIGEST_SIZE : 0);
            if (data <= 0) {
                throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.PLEN_OFFSET,
                        type + " PLEN " + plen + " leaves no room for data");
            }
            if (data > maxData(type)) {
                throw new PduException(FatalErrorStatus.DATA_TRANSFER_LIMIT_EXCEEDED, Pdu.PLEN_OFFSET,
                        type + " carries " + data + " bytes, more than the " + maxData(type) + " allowed");
            }
        } else if (pdo != 0 && pdo != headerEnd) {
            throw new PduException(FatalErrorStatus.INVALID_HEADER_FIELD, Pdu.PDO_OFFSET, type + " PDO " + pdo);
        }
        return plen;
    }

    private void dispatch(ChannelHandlerContext ctx, ByteBuf in, int start, int plen) throws PduException {
        PduType type = PduType.of(in.getUnsignedByte(start));
        int flags = in.getUnsignedByte(start + Pdu.FLAGS_OFFSET);
        int hlen = type.headerLength;
        boolean hd = (flags & Pdu.FLAG_HDGST) != 0 && type.digestible();
        if (hd) {
            int expect = in.getIntLE(start + hlen);
            if (crc.compute(in, start, hlen) != expect) {
                throw new PduException(FatalErrorStatus.HEADER_DIGEST_ERROR, 0, type + " header digest mismatch");
            }
        }
        int headerEnd = hlen + (hd ? Pdu.DIGEST_SIZE : 0);
        int dataStart = 0;
        int dataLength = 0;
        if (type == PduType.H2C_TERM_REQ || type == PduType.C2H_TERM_REQ) {
            dataStart = start + hlen;
            dataLength = plen - hlen;
        } else if (plen > headerEnd) {
            int pdo = in.getUnsignedByte(start + Pdu.PDO_OFFSET);
            boolean dd = (flags & Pdu.FLAG_DDGST) != 0;
            dataStart = start + pdo;
            dataLength = plen - pdo - (dd ? Pdu.DIGEST_SIZE : 0);
            dataDigestOk = !dd || crc.compute(in, dataStart, dataLength) == in.getIntLE(dataStart + dataLength);
        } else {
            dataDigestOk = true;
        }
        if (type == PduType.H2C_TERM_REQ || type == PduType.C2H_TERM_REQ) {
            // The peer ends the connection; nothing is sent back (NVMe/TCP 1.0, 3.6.2.4).
            FatalErrorStatus fes = FatalErrorStatus.of(in.getUnsignedShortLE(start + TermReqPdu.FES_OFFSET));
            long fei = in.getUnsignedIntLE(start + TermReqPdu.FEI_OFFSET);
            failed = true;
            onPeerTermination(fes, fei);
            ctx.close();
            return;
        }
        onPdu(ctx, type, in, start, flags, dataStart, dataLength);
    }

    /** The peer sent a termination PDU ({@code fes} null if its code is unknown); the channel closes next. */
    protected abstract void onPeerTermination(FatalErrorStatus fes, long fei);

    private void fail(ChannelHandlerContext ctx, PduException e, ByteBuf in, int start) {
        failed = true;
        // The TermReq carries the header of the PDU in error (HLEN bytes, at most 128).
        int hlen = in.readableBytes() > Pdu.HLEN_OFFSET ? in.getUnsignedByte(start + Pdu.HLEN_OFFSET) : 0;
        int len = Math.min(in.readableBytes(), Math.min(Math.max(hlen, Pdu.COMMON_HEADER_SIZE), TermReqPdu.MAX_DATA));
        ByteBuf header = in.retainedSlice(start, len);
        in.skipBytes(in.readableBytes());
        onFatal(e);
        sendTermination(ctx, e, header);
    }

    /** Called once when the connection is about to end with a termination PDU. */
    protected void onFatal(PduException e) {
    }

    /** True once a fatal error ended decoding on this connection. */
    protected final boolean failed() {
        return failed;
    }

    /** Marks the connection failed so no further PDU is processed. */
    protected final void markFailed() {
        failed = true;
    }

    /**
     * Writes a termination PDU of {@code type} whose data is (up to 128 bytes of) the header in
     * error, then closes the channel once it is on the wire. Releases {@code header}.
     */
    protected final void writeTermination(ChannelHandlerContext ctx, PduType type, PduException e, ByteBuf header) {
        try {
            int dataLen = Math.min(header.readableBytes(), TermReqPdu.MAX_DATA);
            ByteBuf pdu = ctx.alloc().directBuffer(TermReqPdu.SIZE + dataLen);
            termView.wrap(scratch, 0);
            termView.encode(type, e.status(), e.fieldInfo(), dataLen);
            Wire.store(scratch, TermReqPdu.SIZE, pdu);
            pdu.writeBytes(header, header.readerIndex(), dataLen);
            ctx.writeAndFlush(pdu).addListener(ChannelFutureListener.CLOSE);
        } finally {
            header.release();
        }
    }
}
