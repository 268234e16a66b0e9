package io.nvmeof.target;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.nvmeof.fabric.tcp.Crc32c;
import io.nvmeof.protocol.ConnectData;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.Registers;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.SubmissionQueueEntry;
import io.nvmeof.protocol.tcp.DataPdu;
import io.nvmeof.protocol.tcp.ICReqPdu;
import io.nvmeof.protocol.tcp.Pdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.target.Port;
import io.nvmeof.target.Target;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * A host speaking NVMe/TCP to the target's real queue ({@link TcpQueue}, the real decoder and
 * command path) through an {@link EmbeddedChannel}: no socket, no thread, so a fuzzer can run
 * hundreds of thousands of connections. Builds PDUs with digests as negotiated and hands back
 * what the target sent, one whole PDU at a time.
 */
final class EmbeddedHost implements AutoCloseable {
    static final String HOST_NQN = "nqn.2014-08.org.nvmexpress:uuid:0f0f0f0f-1111-2222-3333-444444444444";
    static final UUID HOST_ID = UUID.fromString("0f0f0f0f-1111-2222-3333-444444444444");

    final EmbeddedChannel ch;
    private final ByteBuf received = Unpooled.buffer();
    private final Crc32c crc = new Crc32c();
    boolean headerDigest;
    boolean dataDigest;

    EmbeddedHost(Target target, Port port) {
        ch = new EmbeddedChannel(new TcpQueue(target, port));
    }

    /** Sends raw bytes as one read of the socket. */
    void sendRaw(ByteBuf bytes) {
        if (ch.isOpen()) {
            ch.writeInbound(bytes);
            ch.runPendingTasks();
        } else {
            bytes.release();
        }
    }

    /** The next whole PDU the target sent (a buffer the caller releases), or null. */
    ByteBuf next() {
        Object o;
        while ((o = ch.readOutbound()) != null) {
            ByteBuf b = (ByteBuf) o;
            received.writeBytes(b);
            b.release();
        }
        if (received.readableBytes() < 8) {
            return null;
        }
        long plen = received.getUnsignedIntLE(received.readerIndex() + 4);
        if (plen < 8 || plen > (16 << 20)) {
            throw new AssertionError("the target sent a PDU with PLEN " + plen);
        }
        if (received.readableBytes() < plen) {
            return null;
        }
        ByteBuf pdu = received.readBytes((int) plen); // a copy: discarding moves what the buffer holds
        received.discardReadBytes();
        return pdu;
    }

    /** Checks a received PDU's header digest (when negotiated and the PDU has one). */
    void checkHeaderDigest(ByteBuf pdu) {
        int flags = pdu.getUnsignedByte(1);
        int hlen = pdu.getUnsignedByte(2);
        if ((flags & Pdu.FLAG_HDGST) != 0) {
            int want = crc.compute(pdu, 0, hlen);
            if (pdu.getIntLE(hlen) != want) {
                throw new AssertionError("bad header digest on a " + PduType.of(pdu.getByte(0)) + " PDU from the target");
            }
        }
    }

    void icreq(boolean hd, boolean dd) {
        ByteBuffer b = Flyweight.allocate(128);
        new ICReqPdu().<ICReqPdu>wrap(b, 0).encode(0, hd, dd, 0);
        sendRaw(Unpooled.wrappedBuffer(b));
        ByteBuf resp = next();
        if (resp == null || resp.getByte(0) != PduType.IC_RESP.code) {
            throw new AssertionError("no ICResp to a valid ICReq: " + resp);
        }
        resp.release();
        headerDigest = hd;
        dataDigest = dd;
    }

    /** A CapsuleCmd with {@code sqe} (64 bytes) and in-capsule {@code data} (null: none), digests as negotiated. */
    ByteBuf capsule(ByteBuffer sqe, byte[] data) {
        int dataLen = data == null ? 0 : data.length;
        int hdr = 72 + (headerDigest ? 4 : 0);
        boolean dd = dataDigest && dataLen > 0;
        int plen = hdr + dataLen + (dd ? 4 : 0);
        ByteBuf b = Unpooled.buffer(plen).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer head = Flyweight.allocate(72);
        new Pdu().<Pdu>wrap(head, 0).init(PduType.CAPSULE_CMD, (headerDigest ? Pdu.FLAG_HDGST : 0) | (dd ? Pdu.FLAG_DDGST : 0),
                dataLen > 0 ? hdr : 0, plen);
        head.put(8, sqe, sqe.position(), SubmissionQueueEntry.SIZE);
        b.writeBytes(head);
        if (headerDigest) {
            b.writeIntLE(crc.compute(b, 0, 72));
        }
        if (dataLen > 0) {
            int at = b.writerIndex();
            b.writeBytes(data);
            if (dd) {
                b.writeIntLE(crc.compute(b, at, dataLen));
            }
        }
        return b;
    }

    /** H2CData answering an R2T: {@code length} bytes of {@code fill} at {@code offset}, the last PDU of the burst. */
    ByteBuf h2cData(int cccid, int ttag, long offset, int length, boolean last, byte fill) {
        int hdr = DataPdu.SIZE + (headerDigest ? 4 : 0);
        int plen = hdr + length + (dataDigest ? 4 : 0);
        ByteBuf b = Unpooled.buffer(plen).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer head = Flyweight.allocate(DataPdu.SIZE);
        new DataPdu().<DataPdu>wrap(head, 0).encode(PduType.H2C_DATA, last ? Pdu.FLAG_LAST_PDU : 0, cccid, ttag, offset, length,
                headerDigest, dataDigest);
        b.writeBytes(head);
        if (headerDigest) {
            b.writeIntLE(crc.compute(b, 0, DataPdu.SIZE));
        }
        int at = b.writerIndex();
        byte[] bytes = new byte[length];
        Arrays.fill(bytes, fill); // not a loop of ours: the fuzzer's hooks would trace every byte
        b.writeBytes(bytes);
        if (dataDigest) {
            b.writeIntLE(crc.compute(b, at, length));
        }
        return b;
    }

    static ByteBuffer sqe(Consumer<SubmissionQueueEntry> fill) {
        ByteBuffer b = Flyweight.allocate(SubmissionQueueEntry.SIZE);
        fill.accept(new SubmissionQueueEntry().wrap(b, 0));
        return b;
    }

    /** Sends a command and returns the status field of its response (the first PDU back must be it). */
    int command(ByteBuffer sqe, byte[] data) {
        sendRaw(capsule(sqe, data));
        ByteBuf r = next();
        if (r == null || r.getByte(0) != PduType.CAPSULE_RESP.code) {
            throw new AssertionError("no response to a valid command: " + r);
        }
        int hlen = r.getUnsignedByte(2);
        int statusField = r.getUnsignedShortLE(hlen - 16 + 14) >>> 1;
        int dw0 = r.getIntLE(8);
        r.release();
        lastDw0 = dw0;
        return statusField;
    }

    int lastDw0;

    static byte[] connectData(String subnqn, int cntlid) {
        ByteBuffer d = Flyweight.allocate(ConnectData.SIZE);
        new ConnectData().<ConnectData>wrap(d, 0).hostId(HOST_ID).cntlid(cntlid).subsystemNqn(subnqn).hostNqn(HOST_NQN);
        byte[] b = new byte[ConnectData.SIZE];
        d.get(0, b);
        return b;
    }

    /** Connect (admin when {@code qid} is 0); returns the cntlid. */
    int connect(String subnqn, int qid, int cntlid) {
        int status = command(sqe(s -> s.connect(qid, 32, 0, qid == 0 ? 30_000 : 0).sgl(0, ConnectData.SIZE, Sgl.IN_CAPSULE)
                .cid(0xfff0)), connectData(subnqn, cntlid));
        if (status != 0) {
            throw new AssertionError("Connect failed with status " + Integer.toHexString(status));
        }
        return lastDw0 & 0xffff;
    }

    void enable() {
        int status = command(sqe(s -> s.propertySet(Registers.CC, 4, Registers.ccEnable()).cid(0xfff1)), null);
        if (status != 0) {
            throw new AssertionError("CC.EN failed with status " + Integer.toHexString(status));
        }
    }

    @Override
    public void close() {
        ch.close();
        ch.runPendingTasks();
        ch.finishAndReleaseAll();
        received.release();
    }
}
