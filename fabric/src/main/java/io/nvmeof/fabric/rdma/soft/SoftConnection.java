package io.nvmeof.fabric.rdma.soft;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.internal.PlatformDependent;
import io.nvmeof.fabric.rdma.AbstractRdmaConnection;
import io.nvmeof.fabric.rdma.ConnectAcceptor;
import io.nvmeof.fabric.rdma.AbstractConnectRequest;
import io.nvmeof.fabric.rdma.ConnectRequest;
import io.nvmeof.fabric.rdma.ConnectionState;
import io.nvmeof.fabric.rdma.MemoryRegion;
import io.nvmeof.fabric.rdma.ProtectionDomain;
import io.nvmeof.fabric.rdma.RdmaConnection;
import io.nvmeof.fabric.rdma.RdmaHandler;
import io.nvmeof.fabric.rdma.RdmaRejectedException;
import io.nvmeof.fabric.rdma.WorkCompletion;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * One reliable connection of the soft provider: a TCP stream of frames that carry connection
 * management (request, accept, reject, disconnect), SENDs and the one-sided operations; the
 * verbs of an {@link AbstractRdmaConnection}, which owns the lifecycle. RDMA READ and WRITE are
 * served here against this side's {@link SoftDomain}, without the application: the key must be
 * registered, the range inside its region and the access allowed, or the connection fails on
 * both sides (as a reliable-connected QP goes to the error state). A SEND waits, with the
 * stream paused, until a receive is posted (an RNR retry count of 7: forever). The stream's
 * end is the queue pair's: once it is closed nothing is outstanding any more.
 *
 * <p>Frames: {@code u32 length | u8 type | body}, little-endian. Confined to the channel's loop.
 */
final class SoftConnection extends AbstractRdmaConnection {
    private static final System.Logger LOG = System.getLogger(SoftConnection.class.getName());

    static final int CONNECT_REQUEST = 1;   // u16 responderResources, u16 initiatorDepth, u8 len, private data
    static final int ACCEPT = 2;            // u16 initiatorDepth, u8 len, private data
    static final int REJECT = 3;            // u8 len, private data
    static final int SEND = 4;              // i64 invalidate key (-1 none), payload
    static final int WRITE = 5;             // u64 address, u32 rkey, payload
    static final int READ_REQUEST = 6;      // u32 tag, u64 address, u32 rkey, u32 length
    static final int READ_RESPONSE = 7;     // u32 tag, payload
    static final int ACCESS_ERROR = 8;      // u32 status, u8 operation, u64 address, u32 rkey
    static final int DISCONNECT = 9;        // (empty): an orderly end, as a DREQ
    static final int HEADER = 5;
    /** Larger than any keyed SGL (2^24 - 1) plus headers. */
    static final int MAX_FRAME = (16 << 20) + 64;
    static final int MAX_PRIVATE_DATA = 255;
    /** The largest connection management frame: type, depths, length, private data. */
    static final int MAX_CM_FRAME = 1 + 5 + 1 + MAX_PRIVATE_DATA;

    private final SoftDomain pd;
    private final Wire wire = new Wire();
    private ChannelHandlerContext ctx;
    private ConnectAcceptor acceptor;
    private ByteBuffer connectPrivateData;
    private int requestInitiatorDepth;
    private int requestResponderResources;
    /** Data frames may flow (this side accepted, or its connect was accepted). */
    private boolean open;
    /** No frame is handled any more. */
    private boolean ended;
    /** The connect request this accepting side received, once it did. */
    private Request request;

    // posted receives, in the order they were posted: the connection's ids
    private long[] recvId = new long[0];
    private MemoryRegion[] recvMr = new MemoryRegion[0];
    private int[] recvOffset = new int[0];
    private int[] recvLength = new int[0];
    private int recvHead;
    private int recvCount;
    private boolean stalled;

    // SENDs whose data is in the stream: completed on the next turn of the loop
    private long[] doneId = new long[0];
    private int doneHead;
    private int doneCount;
    private boolean deliveryScheduled;
    private final Runnable deliverTask = this::deliver;

    // outstanding RDMA READs by tag (slot | generation << 16)
    private long[] readId = new long[0];
    private MemoryRegion[] readMr = new MemoryRegion[0];
    private int[] readOffset = new int[0];
    private int[] readLength = new int[0];
    private int[] readGeneration = new int[0];
    private int readFree;

    /** Accepting side. */
    SoftConnection(SoftDomain pd, ConnectAcceptor acceptor) {
        super(null, null, null);
        this.pd = pd;
        this.acceptor = acceptor;
    }

    /** Connecting side. */
    SoftConnection(SoftDomain pd, ByteBuffer privateData, int sendDepth, int recvDepth, int responderResources,
                   int initiatorDepth, RdmaHandler handler, CompletableFuture<RdmaConnection> connecting) {
        super(null, handler, connecting);
        this.pd = pd;
        this.connectPrivateData = privateData;
        this.requestResponderResources = responderResources;
        this.requestInitiatorDepth = initiatorDepth;
        sizeQueues(sendDepth, recvDepth, initiatorDepth);
    }

    /** The channel handler that carries this connection. */
    ChannelHandler wire() {
        return wire;
    }

    private void sizeQueues(int sendDepth, int recvDepth, int readDepth) {
        size(sendDepth, recvDepth);
        recvId = new long[recvDepth];
        recvMr = new MemoryRegion[recvDepth];
        recvOffset = new int[recvDepth];
        recvLength = new int[recvDepth];
        doneId = new long[sendDepth];
        int reads = Math.max(1, Math.min(readDepth, sendDepth));
        readId = new long[reads];
        readMr = new MemoryRegion[reads];
        readOffset = new int[reads];
        readLength = new int[reads];
        readGeneration = new int[reads];
        Arrays.fill(readLength, -1);
    }

    // ---- connection management ----

    private void connectRequest(ByteBuf in, int at, int end) throws IOException {
        if (connecting() != null || acceptor == null) {
            throw new IOException("unexpected connect request");
        }
        int responderResources = in.getUnsignedShortLE(at);
        int initiator = in.getUnsignedShortLE(at + 2);
        ByteBuffer data = privateData(in, at + 4, end);
        // from this side's point of view: we may read as deep as the peer serves
        this.requestInitiatorDepth = responderResources;
        this.requestResponderResources = initiator;
        negotiated(data, 0);
        ConnectAcceptor a = acceptor;
        acceptor = null;
        request = new Request(data);
        a.onConnectRequest(request);
    }

    private final class Request extends AbstractConnectRequest {
        Request(ByteBuffer privateData) {
            super(SoftConnection.this.peer(), SoftConnection.this.localAddress(), privateData, requestInitiatorDepth);
        }

        @Override
        public RdmaConnection accept(ByteBuffer privateData, int sendDepth, int recvDepth, int depth, RdmaHandler h,
                                     Consumer<RdmaConnection> beforeAccept) throws IOException {
            answer();
            if (depth < 0 || depth > requestInitiatorDepth) {
                throw new IllegalArgumentException("initiator depth " + depth + " above the peer's " + requestInitiatorDepth);
            }
            SoftConnection c = SoftConnection.this;
            c.sizeQueues(sendDepth, recvDepth, Math.max(depth, 1));
            c.negotiated(c.privateData(), depth);
            c.handler(h);
            int len = checkedLength(privateData);
            ByteBuf out = ctx.alloc().directBuffer(HEADER + 3 + len);
            out.writeIntLE(1 + 3 + len).writeByte(ACCEPT).writeShortLE(depth).writeByte(len);
            if (len > 0) {
                out.writeBytes(privateData.duplicate());
            }
            try {
                ConnectRequest.runBeforeAccept(c, beforeAccept);
            } catch (IOException e) {
                out.release();
                runOnLoop(() -> ctx.close());
                throw e;
            }
            runOnLoop(() -> {
                open = true;
                ctx.writeAndFlush(out, ctx.voidPromise());
                established();
                if (stalled) {
                    resume();
                }
            });
            return c;
        }

        @Override
        public void reject(ByteBuffer privateData) {
            answer();
            int len = checkedLength(privateData);
            ByteBuf out = ctx.alloc().directBuffer(HEADER + 1 + len);
            out.writeIntLE(1 + 1 + len).writeByte(REJECT).writeByte(len);
            if (len > 0) {
                out.writeBytes(privateData.duplicate());
            }
            runOnLoop(() -> ctx.writeAndFlush(out).addListener(f -> ctx.close()));
        }
    }

    private static int checkedLength(ByteBuffer privateData) {
        int len = privateData == null ? 0 : privateData.remaining();
        if (len > MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("private data of " + len + " bytes (at most " + MAX_PRIVATE_DATA + ")");
        }
        return len;
    }

    private void runOnLoop(Runnable r) {
        if (ctx.executor().inEventLoop()) {
            r.run();
        } else {
            ctx.executor().execute(r);
        }
    }

    private static ByteBuffer privateData(ByteBuf in, int at, int end) throws IOException {
        int len = in.getUnsignedByte(at);
        if (at + 1 + len != end) {
            throw new IOException("private data length " + len + " does not match the frame");
        }
        ByteBuffer b = ByteBuffer.allocate(len).order(ByteOrder.LITTLE_ENDIAN);
        in.getBytes(at + 1, b);
        b.flip();
        return b;
    }

    private void accepted(ByteBuf in, int at, int end) throws IOException {
        if (connecting() == null || open) {
            throw new IOException("unexpected accept");
        }
        int depth = in.getUnsignedShortLE(at);
        if (depth > requestResponderResources) {
            throw new IOException("peer accepted with initiator depth " + depth + " above our responder resources "
                    + requestResponderResources);
        }
        negotiated(privateData(in, at + 2, end), requestInitiatorDepth);
        open = true;
        established();
    }

    private void rejected(ByteBuf in, int at, int end) throws IOException {
        if (connecting() == null || open) {
            throw new IOException("unexpected reject");
        }
        ByteBuffer data = privateData(in, at, end);
        ended = true;
        failConnect(new RdmaRejectedException("connect to " + peer() + " rejected", data));
    }

    // ---- the queue pair's verbs ----

    @Override
    protected void doPostRecv(long id, MemoryRegion mr, int offset, int length) {
        int i = (recvHead + recvCount) % recvId.length;
        recvId[i] = id;
        recvMr[i] = mr;
        recvOffset[i] = offset;
        recvLength[i] = length;
        recvCount++;
        if (stalled) {
            stalled = false;
            ctx.executor().execute(this::resume);
        }
    }

    @Override
    protected void doPostSend(long id, MemoryRegion mr, int offset, int length, long invalidateRkey) {
        writeSend(mr, offset, length, invalidateRkey);
        completeLater(id);
    }

    @Override
    protected void doPostRead(long id, MemoryRegion mr, int offset, int length, long remoteAddress, int rkey) {
        int slot = -1;
        for (int i = 0; i < readLength.length; i++) {
            int s = (readFree + i) % readLength.length;
            if (readLength[s] < 0) {
                slot = s;
                break;
            }
        }
        if (slot < 0) {
            throw new IllegalStateException("more than " + readLength.length + " RDMA READs outstanding");
        }
        readFree = (slot + 1) % readLength.length;
        readId[slot] = id;
        readMr[slot] = mr;
        readOffset[slot] = offset;
        readLength[slot] = length;
        int gen = readGeneration[slot] = (readGeneration[slot] + 1) & 0x7fff;
        ByteBuf out = ctx.alloc().directBuffer(HEADER + 20);
        out.writeIntLE(1 + 20).writeByte(READ_REQUEST).writeIntLE(slot | gen << 16).writeLongLE(remoteAddress)
                .writeIntLE(rkey).writeIntLE(length);
        write(out);
    }

    @Override
    protected void doPostWriteAndSend(long id, MemoryRegion mr, int offset, int length, long remoteAddress, int rkey,
                                      MemoryRegion msg, int msgOffset, int msgLength, long invalidateRkey) {
        ByteBuf out = ctx.alloc().directBuffer(HEADER + 12 + length);
        out.writeIntLE(1 + 12 + length).writeByte(WRITE).writeLongLE(remoteAddress).writeIntLE(rkey);
        copyOut(mr, offset, length, out);
        write(out);
        writeSend(msg, msgOffset, msgLength, invalidateRkey);
        completeLater(id);
    }

    private void writeSend(MemoryRegion mr, int offset, int length, long invalidateRkey) {
        ByteBuf out = ctx.alloc().directBuffer(HEADER + 8 + length);
        out.writeIntLE(1 + 8 + length).writeByte(SEND).writeLongLE(invalidateRkey < 0 ? -1 : invalidateRkey & 0xffffffffL);
        copyOut(mr, offset, length, out);
        write(out);
    }

    /** The data left the buffer (it is in the stream): complete on the next turn of the loop, not inside the post. */
    private void completeLater(long id) {
        doneId[(doneHead + doneCount) % doneId.length] = id;
        doneCount++;
        schedule();
    }

    private void schedule() {
        if (!deliveryScheduled) {
            deliveryScheduled = true;
            ctx.executor().execute(deliverTask);
        }
    }

    private void deliver() {
        deliveryScheduled = false;
        if (!ended) {
            ctx.flush();
        }
        while (doneCount > 0 && !ended) {
            long id = doneId[doneHead];
            doneHead = (doneHead + 1) % doneId.length;
            doneCount--;
            complete(id, WorkCompletion.SUCCESS, 0, -1);
        }
    }

    private void write(ByteBuf out) {
        ctx.write(out, ctx.voidPromise());
        schedule();
    }

    private void resume() {
        if (!ended && ctx.channel().isActive()) {
            ctx.channel().config().setAutoRead(true);
            ctx.pipeline().fireChannelRead(Unpooled.EMPTY_BUFFER);
            ctx.pipeline().fireChannelReadComplete();
        }
    }

    /** An orderly end: DISCONNECT to the peer after what was written, then close the stream. */
    @Override
    protected void disconnect() {
        if (ended || ctx == null) {
            return;
        }
        ended = true;
        ctx.channel().config().setAutoRead(false);
        if (ctx.channel().isActive()) {
            ByteBuf out = ctx.alloc().directBuffer(HEADER);
            out.writeIntLE(1).writeByte(DISCONNECT);
            ctx.writeAndFlush(out, ctx.voidPromise());
        }
        ctx.close();
    }

    /** The stream closes; once it has, nothing is outstanding ({@link #queuePairFlushed}). */
    @Override
    protected void destroy(Runnable done) {
        ended = true;
        if (ctx != null && ctx.channel().isOpen()) {
            ctx.close();
        }
        Arrays.fill(recvMr, null);
        Arrays.fill(readMr, null);
        recvCount = 0;
        doneCount = 0;
        done.run();
    }

    // ---- the wire ----

    private final class Wire extends ByteToMessageDecoder {
        @Override
        public void handlerAdded(ChannelHandlerContext c) {
            ctx = c;
            eventLoop(c.channel().eventLoop());
            addresses((InetSocketAddress) c.channel().remoteAddress(), (InetSocketAddress) c.channel().localAddress());
        }

        @Override
        public void channelActive(ChannelHandlerContext c) throws Exception {
            addresses((InetSocketAddress) c.channel().remoteAddress(), (InetSocketAddress) c.channel().localAddress());
            if (connecting() != null) {
                int len = connectPrivateData == null ? 0 : connectPrivateData.remaining();
                ByteBuf out = c.alloc().directBuffer(HEADER + 5 + len);
                out.writeIntLE(1 + 5 + len).writeByte(CONNECT_REQUEST);
                out.writeShortLE(requestResponderResources).writeShortLE(requestInitiatorDepth).writeByte(len);
                if (len > 0) {
                    out.writeBytes(connectPrivateData.duplicate());
                }
                c.writeAndFlush(out, c.voidPromise());
            }
            super.channelActive(c);
        }

        @Override
        protected void decode(ChannelHandlerContext c, ByteBuf in, List<Object> out) {
            while (!ended && in.readableBytes() >= HEADER) {
                int start = in.readerIndex();
                long len = in.getUnsignedIntLE(start);
                boolean data = open || connecting() == null && request != null && request.answered();
                if (len < 1 || len > (data ? MAX_FRAME : MAX_CM_FRAME)) {
                    // (before the connection is established only connection management is allowed,
                    // so nobody can make this side hold 16 MiB without being accepted first)
                    fail(new IOException("soft RDMA frame of " + len + " bytes from " + peer()
                            + (data ? "" : " before the connection is established")), 0, 0, 0, 0);
                    return;
                }
                if (in.readableBytes() < 4 + len) {
                    return;
                }
                int type = in.getUnsignedByte(start + 4);
                int at = start + HEADER;
                int end = start + 4 + (int) len;
                try {
                    if (!frame(type, in, at, end)) {
                        return; // a SEND waits for a receive: leave it in the stream
                    }
                } catch (IOException e) {
                    fail(e, 0, 0, 0, 0);
                    return;
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.ERROR, "soft RDMA connection to " + peer() + " failed", e);
                    fail(new IOException(e.toString(), e), 0, 0, 0, 0);
                    return;
                }
                in.readerIndex(end);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext c) throws Exception {
            ended = true;
            if (state() == ConnectionState.CONNECTING && connecting() != null) {
                failConnect(new IOException("connection to " + peer() + " closed before it was accepted"));
            } else {
                beginClose(new IOException("connection to " + peer() + " lost"));
                queuePairFlushed();
            }
            super.channelInactive(c);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext c, Throwable cause) {
            beginClose(cause instanceof IOException ? cause : new IOException(cause.toString(), cause));
        }
    }

    /** Handles one frame; false if it must wait (a SEND with no receive posted). */
    private boolean frame(int type, ByteBuf in, int at, int end) throws IOException {
        if (!open) {
            switch (type) {
                case CONNECT_REQUEST:
                    connectRequest(in, at, end);
                    return true;
                case ACCEPT:
                    accepted(in, at, end);
                    return true;
                case REJECT:
                    rejected(in, at, end);
                    return true;
                default:
                    if (connecting() == null && request != null && request.answered()) {
                        stalled = true; // accepted, the loop has yet to mark it established
                        return false;
                    }
                    throw new IOException("frame type " + type + " before the connection is established");
            }
        }
        switch (type) {
            case SEND:
                return receive(in, at, end);
            case WRITE:
                remoteWrite(in, at, end);
                return true;
            case READ_REQUEST:
                remoteRead(in, at, end);
                return true;
            case READ_RESPONSE:
                readResponse(in, at, end);
                return true;
            case ACCESS_ERROR: {
                int status = in.getIntLE(at);
                int op = in.getUnsignedByte(at + 4);
                long address = in.getLongLE(at + 5);
                int rkey = in.getIntLE(at + 13);
                beginClose(new IOException(WorkCompletion.opcodeName(op) + " at 0x" + Long.toHexString(address)
                        + " rkey 0x" + Integer.toHexString(rkey) + " failed at " + peer() + ": "
                        + WorkCompletion.statusName(status)));
                return true;
            }
            case DISCONNECT:
                beginClose(null);
                return true;
            default:
                throw new IOException("unknown soft RDMA frame type " + type);
        }
    }

    private boolean receive(ByteBuf in, int at, int end) throws IOException {
        if (recvCount == 0) {
            stalled = true;
            ctx.channel().config().setAutoRead(false);
            return false;
        }
        long invalidate = in.getLongLE(at);
        int length = end - at - 8;
        int i = recvHead;
        MemoryRegion mr = recvMr[i];
        if (length > recvLength[i]) {
            fail(new IOException("SEND of " + length + " bytes into a receive buffer of " + recvLength[i] + ": "
                    + WorkCompletion.statusName(WorkCompletion.LOC_LEN_ERR)), WorkCompletion.REM_INV_REQ_ERR,
                    WorkCompletion.SEND, 0, 0);
            return true;
        }
        if (invalidate >= 0 && !pd.invalidate((int) invalidate)) {
            fail(new IOException("SEND with Invalidate of unknown key 0x" + Long.toHexString(invalidate)),
                    WorkCompletion.REM_INV_REQ_ERR, WorkCompletion.SEND, 0, (int) invalidate);
            return true;
        }
        long id = recvId[i];
        recvMr[i] = null;
        recvHead = (recvHead + 1) % recvId.length;
        recvCount--;
        copyIn(in, at + 8, mr, recvOffset[i], length);
        complete(id, WorkCompletion.SUCCESS, length, invalidate);
        return true;
    }

    private void remoteWrite(ByteBuf in, int at, int end) {
        long address = in.getLongLE(at);
        int rkey = in.getIntLE(at + 8);
        int length = end - at - 12;
        MemoryRegion mr = pd.acquireRemote(rkey, address, length, MemoryRegion.REMOTE_WRITE);
        if (mr == null) {
            fail(new IOException("peer's RDMA WRITE of " + length + " bytes at 0x" + Long.toHexString(address) + " rkey 0x"
                    + Integer.toHexString(rkey) + " is outside every region it may write"), WorkCompletion.REM_ACCESS_ERR,
                    WorkCompletion.RDMA_WRITE, address, rkey);
            return;
        }
        try {
            copyIn(in, at + 12, mr, (int) (address - mr.address()), length);
        } finally {
            SoftDomain.release(mr);
        }
    }

    private void remoteRead(ByteBuf in, int at, int end) throws IOException {
        if (end - at != 20) {
            throw new IOException("RDMA READ request of " + (end - at) + " bytes");
        }
        int tag = in.getIntLE(at);
        long address = in.getLongLE(at + 4);
        int rkey = in.getIntLE(at + 12);
        int length = in.getIntLE(at + 16);
        MemoryRegion mr = length < 0 ? null : pd.acquireRemote(rkey, address, length, MemoryRegion.REMOTE_READ);
        if (mr == null) {
            fail(new IOException("peer's RDMA READ of " + length + " bytes at 0x" + Long.toHexString(address) + " rkey 0x"
                    + Integer.toHexString(rkey) + " is outside every region it may read"), WorkCompletion.REM_ACCESS_ERR,
                    WorkCompletion.RDMA_READ, address, rkey);
            return;
        }
        try {
            ByteBuf out = ctx.alloc().directBuffer(HEADER + 4 + length);
            out.writeIntLE(1 + 4 + length).writeByte(READ_RESPONSE).writeIntLE(tag);
            copyOut(mr, (int) (address - mr.address()), length, out);
            write(out);
        } finally {
            SoftDomain.release(mr);
        }
    }

    private void readResponse(ByteBuf in, int at, int end) throws IOException {
        int tag = in.getIntLE(at);
        int slot = tag & 0xffff;
        int length = end - at - 4;
        if (slot >= readLength.length || readLength[slot] < 0 || readGeneration[slot] != tag >>> 16
                || readLength[slot] != length) {
            throw new IOException("RDMA READ response " + Integer.toHexString(tag) + " of " + length
                    + " bytes matches no outstanding read");
        }
        MemoryRegion mr = readMr[slot];
        long id = readId[slot];
        readMr[slot] = null;
        readLength[slot] = -1;
        copyIn(in, at + 4, mr, readOffset[slot], length);
        complete(id, WorkCompletion.SUCCESS, length, -1);
    }

    /**
     * Whether Netty may copy between addresses (sun.misc.Unsafe): not on JDK 24 and later unless
     * the JVM allows Unsafe's memory access, where the copies go through ByteBuffer views instead.
     */
    private static final boolean UNSAFE_COPY = PlatformDependent.hasUnsafe();

    /** Copies out of registered memory, as the adapter's DMA would. */
    private static void copyOut(MemoryRegion mr, int offset, int length, ByteBuf out) {
        if (!SoftDomain.acquire(mr)) {
            throw new IllegalStateException("region deregistered while in use: " + mr);
        }
        try {
            out.ensureWritable(length);
            if (out.hasMemoryAddress() && UNSAFE_COPY) {
                PlatformDependent.copyMemory(mr.address() + offset, out.memoryAddress() + out.writerIndex(), length);
                out.writerIndex(out.writerIndex() + length);
            } else {
                out.writeBytes(mr.buffer().duplicate().position(offset).limit(offset + length));
            }
        } finally {
            SoftDomain.release(mr);
        }
    }

    /** Copies into registered memory; bounds were checked against the region. */
    private static void copyIn(ByteBuf in, int index, MemoryRegion mr, int offset, int length) {
        if (!SoftDomain.acquire(mr)) {
            throw new IllegalStateException("region deregistered while in use: " + mr);
        }
        try {
            if (in.hasMemoryAddress() && UNSAFE_COPY) {
                PlatformDependent.copyMemory(in.memoryAddress() + index, mr.address() + offset, length);
            } else {
                in.getBytes(index, mr.buffer().duplicate().position(offset).limit(offset + length));
            }
        } finally {
            SoftDomain.release(mr);
        }
    }

    // ---- ending ----

    /** A violation: tell the peer what failed (it is the requester's error too), then end. */
    private void fail(IOException cause, int status, int op, long address, int rkey) {
        if (ended) {
            return;
        }
        LOG.log(System.Logger.Level.WARNING, "soft RDMA connection to {0} failed: {1}", peer(), cause.getMessage());
        if (status != 0 && ctx.channel().isActive()) {
            ByteBuf out = ctx.alloc().directBuffer(HEADER + 17);
            out.writeIntLE(1 + 17).writeByte(ACCESS_ERROR).writeIntLE(status).writeByte(op).writeLongLE(address).writeIntLE(rkey);
            ctx.writeAndFlush(out, ctx.voidPromise());
        }
        if (state() == ConnectionState.CONNECTING && connecting() != null) {
            ended = true;
            failConnect(cause);
        } else {
            beginClose(cause);
        }
    }

    // ---- RdmaConnection ----

    @Override
    public ProtectionDomain pd() {
        return pd;
    }

    @Override
    public String toString() {
        return "soft RDMA connection " + localAddress() + " <-> " + peer();
    }
}
