package io.nvmeof.nbd;

import static io.nvmeof.nbd.NbdProtocol.*;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.ScheduledFuture;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.IoCallback;
import io.nvmeof.initiator.IoRequest;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.protocol.Status;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * One NBD client: the fixed newstyle negotiation, then requests in, replies out. Runs on its
 * channel's event loop; the device's completions come back to it. Each request has an {@link Op}
 * from a pool, whose buffer holds the reply's header room and the data, so a request in steady
 * state allocates nothing: the reply is that same buffer, and the op is taken again once the
 * channel has written it.
 */
final class NbdConnection extends ByteToMessageDecoder {
    private static final System.Logger LOG = System.getLogger(NbdConnection.class.getName());
    /** Room before the data in an op's buffer for the largest reply header (structured, with its offset: 28). */
    static final int HEAD = 32;
    /** A client that has not finished negotiating by then is dropped. */
    private static final long HANDSHAKE_TIMEOUT_SECONDS = 30;
    private static final int MAX_OPTIONS = 1024;
    /** Requests read ahead of their replies, and their bytes: past either, reading pauses. */
    private static final int MAX_IN_FLIGHT = 256;
    private static final long MAX_IN_FLIGHT_BYTES = 64L << 20;
    /** An idle op keeps a buffer up to this big. */
    private static final int KEEP_BUFFER = (1 << 20) + HEAD;

    private enum State { CLIENT_FLAGS, OPTIONS, TRANSMISSION, SKIPPING, ENDING }

    private final NbdExport export;
    private final BlockDevice device;
    private ChannelHandlerContext ctx;
    private State state = State.CLIENT_FLAGS;
    private boolean noZeroes;
    private boolean structured;
    private int options;
    private ScheduledFuture<?> handshakeTimer;
    private final ArrayDeque<Op> free = new ArrayDeque<>();
    private int inFlight;
    private long inFlightBytes;
    private boolean paused;
    /** A write too big to take: its payload is read and dropped, then it is answered. */
    private long skipping;
    private Op skippedOp;
    private boolean flushScheduled;
    private final Runnable flushTask = () -> {
        flushScheduled = false;
        if (ctx != null) {
            ctx.flush();
        }
    };

    NbdConnection(NbdExport export) {
        this.export = export;
        this.device = export.device();
    }

    // ---- negotiation ----

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        ByteBuf g = ctx.alloc().buffer(18);
        g.writeLong(NBDMAGIC).writeLong(IHAVEOPT).writeShort(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES);
        ctx.writeAndFlush(g, ctx.voidPromise());
        handshakeTimer = ctx.executor().schedule(() -> {
            if (state == State.CLIENT_FLAGS || state == State.OPTIONS) {
                LOG.log(System.Logger.Level.INFO, "nbd: {0} did not finish negotiating in {1} s; closing",
                        ctx.channel().remoteAddress(), HANDSHAKE_TIMEOUT_SECONDS);
                ctx.close();
            }
        }, HANDSHAKE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        super.channelActive(ctx);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        while (ctx.channel().isActive()) {
            int before = in.readableBytes();
            switch (state) {
                case CLIENT_FLAGS -> clientFlags(in);
                case OPTIONS -> option(in);
                case TRANSMISSION -> request(in);
                case SKIPPING -> skip(in);
                default -> in.skipBytes(in.readableBytes()); // ending: nothing more is read
            }
            if (in.readableBytes() == before || paused) {
                return; // needs more bytes, or waits for replies to go
            }
        }
    }

    private void clientFlags(ByteBuf in) {
        if (in.readableBytes() < 4) {
            return;
        }
        int flags = in.readInt();
        if ((flags & ~(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES)) != 0 || (flags & CLIENT_FIXED_NEWSTYLE) == 0) {
            // unknown flags, or a client without fixed newstyle: the protocol says drop it
            LOG.log(System.Logger.Level.INFO, "nbd: {0} sent client flags 0x{1}; closing", ctx.channel().remoteAddress(),
                    Integer.toHexString(flags));
            ctx.close();
            return;
        }
        noZeroes = (flags & CLIENT_NO_ZEROES) != 0;
        state = State.OPTIONS;
    }

    private void option(ByteBuf in) {
        if (in.readableBytes() < 16) {
            return;
        }
        int at = in.readerIndex();
        long magic = in.getLong(at);
        int option = in.getInt(at + 8);
        long length = in.getUnsignedInt(at + 12);
        if (magic != IHAVEOPT || length > MAX_OPTION || ++options > MAX_OPTIONS) {
            LOG.log(System.Logger.Level.INFO, "nbd: {0}: {1}; closing", ctx.channel().remoteAddress(), magic != IHAVEOPT
                    ? "bad option magic" : length > MAX_OPTION ? "option " + option + " of " + length + " bytes" : "too many options");
            ctx.close();
            return;
        }
        if (in.readableBytes() < 16 + length) {
            options--;
            return;
        }
        in.skipBytes(16);
        ByteBuf data = in.readSlice((int) length);
        if (export.shuttingDown() && option != OPT_ABORT) {
            optionReply(option, REP_ERR_SHUTDOWN, null);
            return;
        }
        switch (option) {
            case OPT_EXPORT_NAME -> exportName(data);
            case OPT_ABORT -> {
                optionReply(option, REP_ACK, null);
                ctx.flush();
                ctx.close();
            }
            case OPT_LIST -> {
                if (length != 0) {
                    optionReply(option, REP_ERR_INVALID, "NBD_OPT_LIST takes no data");
                } else {
                    byte[] d = export.description() == null ? new byte[0] : export.description().getBytes(StandardCharsets.UTF_8);
                    ByteBuf s = ctx.alloc().buffer(4 + export.nameBytes().length + d.length);
                    s.writeInt(export.nameBytes().length).writeBytes(export.nameBytes()).writeBytes(d);
                    optionReply(option, REP_SERVER, s);
                    optionReply(option, REP_ACK, null);
                }
            }
            case OPT_INFO, OPT_GO -> infoOrGo(option, data);
            case OPT_STRUCTURED_REPLY -> {
                if (length != 0) {
                    optionReply(option, REP_ERR_INVALID, "NBD_OPT_STRUCTURED_REPLY takes no data");
                } else {
                    structured = true;
                    optionReply(option, REP_ACK, null);
                }
            }
            case OPT_LIST_META_CONTEXT, OPT_SET_META_CONTEXT -> metaContext(option, data);
            default -> optionReply(option, REP_ERR_UNSUP, option == OPT_STARTTLS ? "no TLS here" : null);
        }
        ctx.flush();
    }

    private void exportName(ByteBuf name) {
        byte[] asked = io.netty.buffer.ByteBufUtil.getBytes(name);
        if (!export.named(asked, 0, asked.length)) {
            // NBD_OPT_EXPORT_NAME cannot say no: the protocol's answer is to drop the client
            LOG.log(System.Logger.Level.INFO, "nbd: {0} asked for export ''{1}''; closing", ctx.channel().remoteAddress(),
                    new String(asked, StandardCharsets.UTF_8));
            ctx.close();
            return;
        }
        ByteBuf r = ctx.alloc().buffer(134);
        r.writeLong(export.size()).writeShort(export.transmissionFlags(structured));
        if (!noZeroes) {
            r.writeZero(124);
        }
        ctx.write(r, ctx.voidPromise());
        transmission();
    }

    /**
     * The length of the export name an option starts with (a 32-bit length, then the name),
     * followed by at least {@code after} bytes; -1 after refusing the option as malformed.
     */
    private long nameLength(int option, ByteBuf data, int after) {
        int length = data.readableBytes();
        if (length < 4 + after) {
            optionReply(option, REP_ERR_INVALID, "too short");
            return -1;
        }
        long nameLength = data.getUnsignedInt(0);
        if (nameLength > length - 4 - after) {
            optionReply(option, REP_ERR_INVALID, "name length past the option's end");
            return -1;
        }
        return nameLength;
    }

    private void infoOrGo(int option, ByteBuf data) {
        int length = data.readableBytes();
        long nameLength = nameLength(option, data, 2);
        if (nameLength < 0) {
            return;
        }
        int requests = data.getUnsignedShort(4 + (int) nameLength);
        if (4 + nameLength + 2 + 2L * requests != length) {
            optionReply(option, REP_ERR_INVALID, "information requests do not fill the option");
            return;
        }
        byte[] name = new byte[(int) nameLength];
        data.getBytes(4, name);
        if (!export.named(name, 0, name.length)) {
            optionReply(option, REP_ERR_UNKNOWN, "no export '" + new String(name, StandardCharsets.UTF_8) + "'");
            return;
        }
        boolean wantName = false;
        boolean wantDescription = false;
        for (int i = 0; i < requests; i++) {
            int type = data.getUnsignedShort(4 + (int) nameLength + 2 + 2 * i);
            wantName |= type == INFO_NAME;
            wantDescription |= type == INFO_DESCRIPTION;
        }
        ByteBuf e = ctx.alloc().buffer(12);
        e.writeShort(INFO_EXPORT).writeLong(export.size()).writeShort(export.transmissionFlags(structured));
        optionReply(option, REP_INFO, e);
        // block sizes always: a client that did not ask may still use them, and one that did must
        ByteBuf b = ctx.alloc().buffer(14);
        b.writeShort(INFO_BLOCK_SIZE).writeInt(export.blockSize).writeInt(export.preferredBlockSize).writeInt(export.maxPayload);
        optionReply(option, REP_INFO, b);
        if (wantName) {
            ByteBuf n = ctx.alloc().buffer(2 + export.nameBytes().length);
            n.writeShort(INFO_NAME).writeBytes(export.nameBytes());
            optionReply(option, REP_INFO, n);
        }
        if (wantDescription && export.description() != null) {
            byte[] d = export.description().getBytes(StandardCharsets.UTF_8);
            ByteBuf n = ctx.alloc().buffer(2 + d.length);
            n.writeShort(INFO_DESCRIPTION).writeBytes(d);
            optionReply(option, REP_INFO, n);
        }
        optionReply(option, REP_ACK, null);
        if (option == OPT_GO) {
            transmission();
        }
    }

    /** No metadata context is offered (no base:allocation): a well-formed query gets none, then ACK. */
    private void metaContext(int option, ByteBuf data) {
        if (!structured) {
            optionReply(option, REP_ERR_INVALID, "metadata contexts need structured replies first");
            return;
        }
        int length = data.readableBytes();
        long nameLength = nameLength(option, data, 4);
        if (nameLength < 0) {
            return;
        }
        int at = 4 + (int) nameLength;
        long queries = data.getUnsignedInt(at);
        at += 4;
        for (long i = 0; i < queries; i++) {
            if (at + 4 > length) {
                optionReply(option, REP_ERR_INVALID, "queries past the option's end");
                return;
            }
            long q = data.getUnsignedInt(at);
            if (q > length - at - 4) {
                optionReply(option, REP_ERR_INVALID, "query past the option's end");
                return;
            }
            at += 4 + (int) q;
        }
        if (at != length) {
            optionReply(option, REP_ERR_INVALID, "bytes after the last query");
            return;
        }
        optionReply(option, REP_ACK, null);
    }

    /** An option reply: its header, then {@code data} (released here) or an error's message. */
    private void optionReply(int option, int type, Object data) {
        ByteBuf payload = data instanceof ByteBuf b ? b : null;
        byte[] message = data instanceof String s ? s.getBytes(StandardCharsets.UTF_8) : null;
        int length = payload != null ? payload.readableBytes() : message != null ? message.length : 0;
        ByteBuf h = ctx.alloc().buffer(20 + (message != null ? message.length : 0));
        h.writeLong(OPTION_REPLY_MAGIC).writeInt(option).writeInt(type).writeInt(length);
        if (message != null) {
            h.writeBytes(message);
        }
        ctx.write(h, ctx.voidPromise());
        if (payload != null) {
            ctx.write(payload, ctx.voidPromise());
        }
    }

    private void transmission() {
        state = State.TRANSMISSION;
        if (handshakeTimer != null) {
            handshakeTimer.cancel(false);
        }
        export.opened(this);
        LOG.log(System.Logger.Level.DEBUG, "nbd: {0} in transmission (structured replies: {1})",
                ctx.channel().remoteAddress(), structured);
    }

    // ---- transmission ----

    private void request(ByteBuf in) {
        if (in.readableBytes() < REQUEST_HEADER) {
            return;
        }
        int at = in.readerIndex();
        int magic = in.getInt(at);
        int flags = in.getUnsignedShort(at + 4);
        int type = in.getUnsignedShort(at + 6);
        long handle = in.getLong(at + 8);
        long offset = in.getLong(at + 16);
        long length = in.getUnsignedInt(at + 24);
        if (magic != REQUEST_MAGIC) {
            LOG.log(System.Logger.Level.INFO, "nbd: {0}: bad request magic 0x{1}; closing", ctx.channel().remoteAddress(),
                    Integer.toHexString(magic));
            ending();
            ctx.close();
            return;
        }
        if (type == CMD_WRITE && length <= MAX_REQUEST && in.readableBytes() < REQUEST_HEADER + length) {
            return; // the payload is not all here yet
        }
        in.skipBytes(REQUEST_HEADER);
        if (type == CMD_DISC) {
            ending();
            if (inFlight == 0) {
                ctx.close();
            }
            return;
        }
        // a buffer for the data a read or write moves; none for the rest (a trim of a terabyte moves nothing)
        Op op = acquire((type == CMD_READ || type == CMD_WRITE) && length <= MAX_REQUEST ? (int) length : 0);
        op.handle = handle;
        op.type = type;
        op.flags = flags;
        op.offset = offset;
        op.length = (int) Math.min(length, Integer.MAX_VALUE);
        op.error = 0;
        op.message = null;
        inFlight++;
        inFlightBytes += op.length;
        if (type == CMD_WRITE) {
            if (length > MAX_REQUEST) {
                // too big to take: its payload goes by unread, then the answer
                skipping = length;
                skippedOp = op;
                state = State.SKIPPING;
                return;
            }
            in.readBytes(op.buf, HEAD, (int) length);
        }
        int refused = check(op, length);
        if (refused != 0) {
            op.fail(refused, null);
        } else {
            op.start();
        }
        if (inFlight >= MAX_IN_FLIGHT || inFlightBytes >= MAX_IN_FLIGHT_BYTES) {
            paused = true;
            ctx.channel().config().setAutoRead(false);
        }
    }

    private void skip(ByteBuf in) {
        int n = (int) Math.min(skipping, in.readableBytes());
        in.skipBytes(n);
        skipping -= n;
        if (skipping == 0) {
            state = State.TRANSMISSION;
            Op op = skippedOp;
            skippedOp = null;
            op.fail(EINVAL, "a write of more than " + MAX_REQUEST + " bytes");
        }
    }

    /** What a request asks that this export refuses, as its error, or 0. */
    private int check(Op op, long length) {
        int type = op.type;
        int known = switch (type) {
            case CMD_READ -> CMD_FLAG_FUA | (structured ? CMD_FLAG_DF : 0);
            case CMD_WRITE, CMD_FLUSH, CMD_TRIM -> CMD_FLAG_FUA;
            case CMD_WRITE_ZEROES -> CMD_FLAG_FUA | CMD_FLAG_NO_HOLE;
            default -> -1;
        };
        if (known == -1) {
            op.message = "unknown command " + type;
            return EINVAL;
        }
        if ((op.flags & ~known) != 0) {
            op.message = "flags 0x" + Integer.toHexString(op.flags) + " not for command " + type;
            return EINVAL;
        }
        boolean writes = type == CMD_WRITE || type == CMD_TRIM || type == CMD_WRITE_ZEROES;
        if (writes && export.readOnly()) {
            op.message = "the export is read-only";
            return EPERM;
        }
        if (type == CMD_FLUSH) {
            return op.offset == 0 && length == 0 ? 0 : EINVAL;
        }
        if (length > MAX_REQUEST && (type == CMD_READ || type == CMD_WRITE)) {
            op.message = "at most " + MAX_REQUEST + " bytes a request";
            return EINVAL;
        }
        long size = export.size();
        if (op.offset < 0 || length > size || op.offset > size - length) {
            op.message = "past the end of the export (" + size + " bytes)";
            return type == CMD_WRITE || type == CMD_WRITE_ZEROES ? ENOSPC : EINVAL;
        }
        return 0;
    }

    /** An op whose buffer holds {@code length} bytes after the header room, from the pool if one is free. */
    private Op acquire(int length) {
        Op op = null;
        for (int i = free.size(); i > 0; i--) {
            Op o = free.pollFirst();
            if (o.buf.refCnt() == 1) {
                op = o; // the channel has written its last reply
                break;
            }
            free.addLast(o);
        }
        if (op == null) {
            op = new Op();
        }
        op.ensure(HEAD + length);
        return op;
    }

    /** On the loop: {@code op}'s reply goes out; the op goes back to the pool. */
    void replied(Op op) {
        inFlight--;
        inFlightBytes -= op.length;
        if (op.buf.capacity() > KEEP_BUFFER && op.buf.refCnt() == 1) {
            op.releaseBuffer();
        }
        free.addLast(op);
        if (paused && inFlight < MAX_IN_FLIGHT / 2 && inFlightBytes < MAX_IN_FLIGHT_BYTES / 2) {
            paused = false;
            ctx.channel().config().setAutoRead(true);
            ctx.read();
            // bytes already here wait for the next read otherwise
            ctx.executor().execute(() -> ctx.pipeline().fireChannelRead(ctx.alloc().buffer(0)));
        }
        if (state == State.ENDING && inFlight == 0) {
            ctx.flush();
            ctx.close();
        }
    }

    private void write(ByteBuf b) {
        ctx.write(b, ctx.voidPromise());
        if (!flushScheduled) {
            flushScheduled = true;
            ctx.executor().execute(flushTask);
        }
    }

    private void ending() {
        state = State.ENDING;
    }

    /** The server stops: what is in flight finishes, then the connection ends (one still negotiating ends now). */
    void shutdown() {
        try {
            ctx.executor().execute(() -> {
                if (state == State.CLIENT_FLAGS || state == State.OPTIONS) {
                    ctx.close();
                    return;
                }
                ending();
                if (inFlight == 0) {
                    ctx.close();
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the loop is gone, and the connection with it
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        export.closed(this);
        if (handshakeTimer != null) {
            handshakeTimer.cancel(false);
        }
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved0(ChannelHandlerContext ctx) {
        // ops still in flight release their buffers when they complete (the channel is gone by then)
        for (Op op : free) {
            op.releaseBuffer();
        }
        free.clear();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.log(System.Logger.Level.DEBUG, "nbd: " + ctx.channel().remoteAddress() + ": " + cause);
        ctx.close();
    }

    /** The NBD error for a device's failure: a write-protected namespace is EPERM, a full one ENOSPC, the rest EIO. */
    static int errno(Throwable t) {
        Throwable c = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
        if (c instanceof NvmeStatusException s) {
            Status st = s.status();
            if (st.equals(Status.NAMESPACE_WRITE_PROTECTED)) {
                return EPERM;
            }
            if (st.equals(Status.CAPACITY_EXCEEDED)) {
                return ENOSPC;
            }
            if (st.equals(Status.LBA_OUT_OF_RANGE)) {
                return EINVAL;
            }
        }
        if (c instanceof IllegalArgumentException) {
            return EINVAL;
        }
        return EIO;
    }

    /**
     * One request and its reply. Its buffer: {@link #HEAD} bytes of room for the reply's header,
     * then the data (a write's payload, a read's result). Steps run where the device completes
     * them; the reply goes out on the connection's loop ({@link #run}).
     */
    final class Op implements IoCallback, Runnable, BiConsumer<Void, Throwable> {
        long handle;
        int type;
        int flags;
        long offset;
        int length;
        int error;
        String message;
        ByteBuf buf;
        /** {@link #buf} as a ByteBuffer, its position and limit set for each transfer. */
        private ByteBuffer view;
        private final IoRequest io = device.newRequest();
        /** A partial-block step: the blocks it holds, the block buffer. */
        long rmwFirst = -1;
        long rmwLast = -1;
        private ByteBuf block;
        private ByteBuffer blockView;
        /** Where a multi-step request is. */
        private int step;
        /** Where the data of a read starts in {@link #buf} (HEAD, or later for a read widened to whole blocks). */
        private int dataAt;

        void ensure(int capacity) {
            if (buf == null || buf.capacity() < capacity) {
                if (buf != null) {
                    buf.release();
                }
                buf = ctx.alloc().directBuffer(Math.max(capacity, HEAD + 4096));
                view = buf.nioBuffer(0, buf.capacity());
            }
        }

        void releaseBuffer() {
            if (buf != null) {
                buf.release();
                buf = null;
                view = null;
            }
            if (block != null) {
                block.release();
                block = null;
                blockView = null;
            }
        }

        private ByteBuffer data(int from, int length) {
            view.limit(from + length).position(from);
            return view;
        }

        // ---- steps ----

        static final int STEP_DONE = 0;
        static final int STEP_FUA = 1;
        static final int STEP_HEAD_READ = 2;
        static final int STEP_HEAD_WRITE = 3;
        static final int STEP_MIDDLE = 4;
        static final int STEP_TAIL_READ = 5;
        static final int STEP_TAIL_WRITE = 6;

        /** Starts the request (on the loop); its steps continue on the device's threads. */
        void start() {
            int bs = export.blockSize;
            dataAt = HEAD;
            if (length == 0 && type != CMD_FLUSH) {
                finish(null);
                return;
            }
            try {
                switch (type) {
                    case CMD_READ -> {
                        boolean aligned = offset % bs == 0 && length % bs == 0;
                        if (aligned && length <= device.maxTransferSize()) {
                            step = STEP_DONE;
                            io.read(offset, data(HEAD, length), this);
                        } else {
                            // whole blocks around it, then the bytes asked for out of them
                            long from = offset - offset % bs;
                            long to = roundUp(offset + length, bs);
                            ensure(HEAD + (int) (to - from));
                            dataAt = HEAD + (int) (offset - from);
                            step = STEP_DONE;
                            device.readAsync(from, data(HEAD, (int) (to - from))).whenComplete(this);
                        }
                    }
                    case CMD_WRITE, CMD_WRITE_ZEROES -> {
                        boolean aligned = offset % bs == 0 && length % bs == 0;
                        if (aligned) {
                            step = (flags & CMD_FLAG_FUA) != 0 ? STEP_FUA : STEP_DONE;
                            if (type == CMD_WRITE_ZEROES) {
                                device.writeZeroesAsync(offset, length).whenComplete(this);
                            } else if (length <= device.maxTransferSize()) {
                                io.write(offset, data(HEAD, length), this);
                            } else {
                                device.writeAsync(offset, data(HEAD, length)).whenComplete(this);
                            }
                        } else {
                            rmwFirst = offset / bs;
                            rmwLast = (offset + length - 1) / bs;
                            if (export.rmwStart(this, rmwFirst, rmwLast)) {
                                rmwGranted();
                            }
                        }
                    }
                    case CMD_TRIM -> {
                        // advisory: the whole blocks inside it
                        long from = roundUp(offset, bs);
                        long to = offset + length - (offset + length) % bs;
                        step = (flags & CMD_FLAG_FUA) != 0 ? STEP_FUA : STEP_DONE;
                        if (to > from) {
                            device.discardAsync(from, to - from).whenComplete(this);
                        } else {
                            accept(null, null);
                        }
                    }
                    case CMD_FLUSH -> {
                        step = STEP_DONE;
                        io.flush(this);
                    }
                    default -> fail(EINVAL, "unknown command " + type);
                }
            } catch (RuntimeException e) {
                finish(e);
            }
        }

        /** The partial blocks of a write are this request's now: first block, middle, last block. */
        void rmwGranted() {
            int bs = export.blockSize;
            if (block == null || block.capacity() < bs) {
                if (block != null) {
                    block.release();
                }
                block = ctx.alloc().directBuffer(bs);
                blockView = block.nioBuffer(0, bs);
            }
            if (offset % bs != 0 || rmwFirst == rmwLast) {
                step = STEP_HEAD_READ;
                readBlock(rmwFirst);
            } else {
                middle();
            }
        }

        private void readBlock(long index) {
            blockView.clear();
            device.readAsync(index * export.blockSize, blockView).whenComplete(this);
        }

        /** Puts this request's bytes (or zeroes) that fall in block {@code index} into the block buffer. */
        private void patch(long index) {
            int bs = export.blockSize;
            long blockStart = index * bs;
            long from = Math.max(offset, blockStart);
            long to = Math.min(offset + length, blockStart + bs);
            int n = (int) (to - from);
            if (type == CMD_WRITE_ZEROES) {
                block.setZero((int) (from - blockStart), n);
            } else {
                block.setBytes((int) (from - blockStart), buf, HEAD + (int) (from - offset), n);
            }
            blockView.clear();
        }

        /** After the first block: the whole blocks in the middle, if any. */
        private void middle() {
            int bs = export.blockSize;
            long from = roundUp(offset, bs);
            long to = offset + length - (offset + length) % bs;
            step = STEP_MIDDLE;
            if (to > from) {
                if (type == CMD_WRITE_ZEROES) {
                    device.writeZeroesAsync(from, to - from).whenComplete(this);
                } else {
                    device.writeAsync(from, data(HEAD + (int) (from - offset), (int) (to - from))).whenComplete(this);
                }
            } else {
                accept(null, null);
            }
        }

        /** A step of the device finished (callback form). */
        @Override
        public void completed(IoRequest request, Throwable e) {
            accept(null, e);
        }

        /** A step of the device finished: the next one, or the reply. */
        @Override
        public void accept(Void v, Throwable e) {
            if (e != null) {
                if (rmwFirst >= 0) {
                    unhold();
                }
                finish(e);
                return;
            }
            int bs = export.blockSize;
            try {
                switch (step) {
                    case STEP_HEAD_READ -> {
                        patch(rmwFirst);
                        step = STEP_HEAD_WRITE;
                        device.writeAsync(rmwFirst * bs, blockView).whenComplete(this);
                    }
                    case STEP_HEAD_WRITE -> {
                        if (rmwLast == rmwFirst) {
                            afterWrites();
                        } else {
                            middle();
                        }
                    }
                    case STEP_MIDDLE -> {
                        if ((offset + length) % bs != 0 && rmwLast != rmwFirst) {
                            step = STEP_TAIL_READ;
                            readBlock(rmwLast);
                        } else {
                            afterWrites();
                        }
                    }
                    case STEP_TAIL_READ -> {
                        patch(rmwLast);
                        step = STEP_TAIL_WRITE;
                        device.writeAsync(rmwLast * bs, blockView).whenComplete(this);
                    }
                    case STEP_TAIL_WRITE -> afterWrites();
                    case STEP_FUA -> {
                        step = STEP_DONE;
                        io.flush(this);
                    }
                    default -> finish(null);
                }
            } catch (RuntimeException x) {
                if (rmwFirst >= 0) {
                    unhold();
                }
                finish(x);
            }
        }

        private void afterWrites() {
            unhold();
            if ((flags & CMD_FLAG_FUA) != 0) {
                step = STEP_DONE;
                io.flush(this);
            } else {
                finish(null);
            }
        }

        private void unhold() {
            long f = rmwFirst;
            long l = rmwLast;
            rmwFirst = -1;
            rmwLast = -1;
            export.rmwDone(f, l);
        }

        void fail(int errno, String why) {
            error = errno;
            if (why != null) {
                message = why;
            }
            send();
        }

        private void finish(Throwable e) {
            if (e != null) {
                error = errno(e);
                Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                message = c.getMessage() != null ? c.getMessage() : c.toString();
            }
            if (ctx.executor().inEventLoop()) {
                send(); // the device completed on this connection's loop (ConnectOptions.eventLoops): no hand-off
                return;
            }
            try {
                ctx.executor().execute(this);
            } catch (java.util.concurrent.RejectedExecutionException x) {
                releaseBuffer(); // the loop is gone, and the client with it
            }
        }

        /** On the loop: the reply. */
        @Override
        public void run() {
            send();
        }

        private void send() {
            if (!ctx.channel().isActive()) {
                inFlight--;
                releaseBuffer();
                if (inFlight == 0 && state == State.ENDING) {
                    ctx.close();
                }
                return;
            }
            if (error != 0) {
                if (structured) {
                    byte[] m = message == null ? new byte[0] : truncate(message);
                    ByteBuf r = ctx.alloc().buffer(STRUCTURED_REPLY_HEADER + 6 + m.length);
                    r.writeInt(STRUCTURED_REPLY_MAGIC).writeShort(REPLY_FLAG_DONE).writeShort(REPLY_TYPE_ERROR)
                            .writeLong(handle).writeInt(6 + m.length).writeInt(error).writeShort(m.length).writeBytes(m);
                    write(r);
                } else {
                    buf.setIndex(0, 0);
                    buf.writeInt(SIMPLE_REPLY_MAGIC).writeInt(error).writeLong(handle);
                    write(buf.retain());
                }
                if (error == EIO || LOG.isLoggable(System.Logger.Level.DEBUG)) {
                    LOG.log(System.Logger.Level.DEBUG, "nbd: command {0} at {1} ({2} bytes): error {3}: {4}", type, offset,
                            length, error, message);
                }
            } else if (type == CMD_READ && length > 0) {
                int start = dataAt - (structured ? STRUCTURED_REPLY_HEADER + 8 : SIMPLE_REPLY_HEADER);
                buf.setIndex(start, start);
                if (structured) {
                    buf.writeInt(STRUCTURED_REPLY_MAGIC).writeShort(REPLY_FLAG_DONE).writeShort(REPLY_TYPE_OFFSET_DATA)
                            .writeLong(handle).writeInt(8 + length).writeLong(offset);
                } else {
                    buf.writeInt(SIMPLE_REPLY_MAGIC).writeInt(0).writeLong(handle);
                }
                buf.writerIndex(dataAt + length);
                write(buf.retain());
            } else {
                buf.setIndex(0, 0);
                if (structured) {
                    buf.writeInt(STRUCTURED_REPLY_MAGIC).writeShort(REPLY_FLAG_DONE).writeShort(REPLY_TYPE_NONE)
                            .writeLong(handle).writeInt(0);
                } else {
                    buf.writeInt(SIMPLE_REPLY_MAGIC).writeInt(0).writeLong(handle);
                }
                write(buf.retain());
            }
            replied(this);
        }
    }

    private static byte[] truncate(String message) {
        byte[] m = message.getBytes(StandardCharsets.UTF_8);
        return m.length <= 1024 ? m : java.util.Arrays.copyOf(m, 1024);
    }

    static long roundUp(long v, int unit) {
        long r = v % unit;
        return r == 0 ? v : v + unit - r;
    }
}
