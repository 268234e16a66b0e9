package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.nvmeof.fabric.tcp.Crc32c;
import io.nvmeof.fuzz.FuzzRuns;
import io.nvmeof.protocol.DiscoveryLogEntry;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.IdentifyCns;
import io.nvmeof.protocol.IdentifyNamespace;
import io.nvmeof.protocol.tcp.DataPdu;
import io.nvmeof.protocol.tcp.FatalErrorStatus;
import io.nvmeof.protocol.tcp.ICRespPdu;
import io.nvmeof.protocol.tcp.Pdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.protocol.tcp.R2TPdu;
import io.nvmeof.protocol.tcp.TermReqPdu;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;

/**
 * What the initiator makes of whatever a target sends: the NVMe/TCP host queue (ICResp,
 * CapsuleResp, C2HData, R2T, C2HTermReq, raw bytes; digests right, wrong or absent) through an
 * embedded channel with reads, writes and a flush in flight, and the data pages it interprets
 * (Identify Namespace, discovery log). Nothing escapes the pipeline, the host sends only PDUs
 * a host may send, every command ends (with its result or an error) once the connection has,
 * and a page the host cannot use is an IOException, never another exception.
 */
class HostWireFuzzTest {
    private static final FuzzRuns RUNS = new FuzzRuns("initiator parsing",
            HostWireFuzzTest.class, "whateverATargetSendsTheHostHolds");
    private static final NvmeofUri VIA = NvmeofUri.parse("nvme+tcp://127.0.0.1:8009/nqn.2014-08.org.nvmexpress.discovery");

    @AfterAll
    static void report() {
        RUNS.report();
    }

    /** Reads an input front to back; zeros once it runs out. */
    static final class Input {
        final byte[] b;
        int at;

        Input(byte[] b) {
            this.b = b;
        }

        boolean more() {
            return at < b.length;
        }

        int u8() {
            return at < b.length ? b[at++] & 0xff : 0;
        }

        int u16() {
            return u8() | u8() << 8;
        }

        byte[] bytes(int n) {
            byte[] out = new byte[Math.max(0, Math.min(n, b.length - at))];
            System.arraycopy(b, at, out, 0, out.length);
            at += out.length;
            return out;
        }
    }

    @FuzzTest(maxDuration = "30m")
    void whateverATargetSendsTheHostHolds(byte[] data) {
        RUNS.count();
        long t0 = System.nanoTime();
        Input in = new Input(data);
        int mode = in.u8();
        switch ((mode >> 4) & 3) {
            case 2:
                identifyNamespace(in);
                break;
            case 3:
                discoveryLog(in);
                break;
            default:
                wire(in, (mode & 1) != 0, (mode & 2) != 0, (mode & 4) != 0 ? 8192 : 0, (mode & 8) != 0);
        }
        RUNS.spent(System.nanoTime() - t0);
    }

    private static void identifyNamespace(Input in) {
        ByteBuffer page = Flyweight.allocate(IdentifyCns.DATA_SIZE);
        page.put(0, in.bytes(IdentifyCns.DATA_SIZE));
        try {
            int bs = Controller.checkedBlockSize(new IdentifyNamespace().wrap(page, 0), "namespace 1");
            assertTrue(bs >= 512 && bs <= 65536 && Integer.bitCount(bs) == 1, "block size " + bs);
        } catch (IOException expected) {
            // a namespace the host cannot use, said so
        }
    }

    private static void discoveryLog(Input in) {
        int numrec = in.u8() % 8;
        ByteBuffer page = Flyweight.allocate(DiscoveryLogEntry.HEADER_SIZE + numrec * DiscoveryLogEntry.SIZE);
        page.put(DiscoveryLogEntry.HEADER_SIZE, in.bytes(numrec * DiscoveryLogEntry.SIZE));
        for (DiscoveryEntry e : Discovery.entries(page, numrec, VIA)) {
            String uri = e.uri();
            try {
                NvmeofUri.parse(uri);
            } catch (IllegalArgumentException expected) {
                // an entry whose address this host cannot connect to; the URI says what it is
            }
            e.toString();
        }
    }

    private static void wire(Input in, boolean hd, boolean dd, int inCapsule, boolean validIcResp) {
        TcpQueue q = new TcpQueue(1, 8, inCapsule, hd, dd, TimeUnit.SECONDS.toNanos(30), 5000);
        EmbeddedChannel ch = new EmbeddedChannel(q.handler());
        Crc32c crc = new Crc32c();
        List<Command> commands = new ArrayList<>();
        try {
            drain(ch);
            if (validIcResp) {
                ByteBuffer b = Flyweight.allocate(ICRespPdu.SIZE);
                new ICRespPdu().<ICRespPdu>wrap(b, 0).encode(0, hd, dd, 4096L << (in.u8() % 6));
                send(ch, Unpooled.wrappedBuffer(b));
            } else {
                send(ch, Unpooled.wrappedBuffer(in.bytes(ICRespPdu.SIZE)));
            }
            if (q.ready().isDone() && !q.ready().isCompletedExceptionally()) {
                int k = 1 + in.u8() % 4;
                for (int i = 0; i < k; i++) {
                    Command c;
                    switch (in.u8() % 4) {
                        case 0:
                            c = new Command("Read").opcode(0x02).nsid(1).dataIn(ByteBuffer.allocate(4096), 4096);
                            break;
                        case 1:
                            c = new Command("Read").opcode(0x02).nsid(1).dataIn(ByteBuffer.allocateDirect(8192), 8192);
                            break;
                        case 2:
                            c = new Command("Write").opcode(0x01).nsid(1).dataOut(ByteBuffer.allocate(12288), 12288);
                            break;
                        default:
                            c = new Command("Flush").opcode(0x00).nsid(1);
                    }
                    commands.add(c);
                    q.submit(c);
                }
                drain(ch);
            }
            while (in.more() && ch.isActive()) {
                int kind = in.u8() % 6;
                int cid = pickCid(in, commands);
                boolean hdOk = (in.u8() & 0x7) != 0; // mostly right
                switch (kind) {
                    case 0: {
                        ByteBuf b = header(PduType.CAPSULE_RESP, hd ? Pdu.FLAG_HDGST : 0, 24, 24 + (hd ? 4 : 0), 0);
                        b.writeIntLE(in.u16() | in.u16() << 16).writeIntLE(0).writeShortLE(in.u16()).writeShortLE(1)
                                .writeShortLE(cid).writeShortLE(in.u16());
                        send(ch, digest(b, hd, hdOk, crc));
                        break;
                    }
                    case 1: {
                        int flags = in.u8() & (Pdu.FLAG_LAST_PDU | Pdu.FLAG_SUCCESS);
                        int datal = in.u16() % 16385;
                        long datao = in.u16();
                        int hlen = DataPdu.SIZE;
                        int pdo = hlen + (hd ? 4 : 0);
                        ByteBuf b = header(PduType.C2H_DATA, flags | (hd ? Pdu.FLAG_HDGST : 0) | (dd ? Pdu.FLAG_DDGST : 0),
                                hlen, pdo + datal + (dd ? 4 : 0), pdo);
                        b.writeShortLE(cid).writeShortLE(0).writeIntLE((int) datao).writeIntLE(datal).writeIntLE(0);
                        ByteBuf d = digest(b, hd, hdOk, crc);
                        int at = d.writerIndex();
                        d.writeZero(datal);
                        if (dd) {
                            d.writeIntLE(crc.compute(d, at, datal) ^ ((in.u8() & 7) == 0 ? 1 : 0));
                        }
                        send(ch, d);
                        break;
                    }
                    case 2: {
                        ByteBuf b = header(PduType.R2T, hd ? Pdu.FLAG_HDGST : 0, R2TPdu.SIZE, R2TPdu.SIZE + (hd ? 4 : 0), 0);
                        b.writeShortLE(cid).writeShortLE(in.u16()).writeIntLE(in.u16()).writeIntLE(in.u16()).writeIntLE(0);
                        send(ch, digest(b, hd, hdOk, crc));
                        break;
                    }
                    case 3: {
                        ByteBuffer t = Flyweight.allocate(TermReqPdu.SIZE);
                        FatalErrorStatus[] all = FatalErrorStatus.values();
                        new TermReqPdu().<TermReqPdu>wrap(t, 0).encode(PduType.C2H_TERM_REQ, all[in.u8() % all.length],
                                in.u16(), 0);
                        send(ch, Unpooled.wrappedBuffer(t));
                        break;
                    }
                    case 4:
                        send(ch, Unpooled.wrappedBuffer(in.bytes(1 + in.u8())));
                        break;
                    default: {
                        ByteBuffer b = Flyweight.allocate(ICRespPdu.SIZE);
                        new ICRespPdu().<ICRespPdu>wrap(b, 0).encode(0, hd, dd, 8192);
                        send(ch, Unpooled.wrappedBuffer(b));
                    }
                }
                drain(ch);
            }
        } finally {
            ch.close();
            ch.runPendingTasks();
            drain(ch);
            ch.finishAndReleaseAll();
        }
        for (Command c : commands) {
            assertTrue(c.isDone(), c.name() + " still open after its connection ended");
        }
    }

    /** Mostly a CID in flight (so the fuzzer gets past the lookup), sometimes any. */
    private static int pickCid(Input in, List<Command> commands) {
        int sel = in.u8();
        if (commands.isEmpty() || sel >= 0xf0) {
            return in.u16();
        }
        return commands.get(sel % commands.size()).cid;
    }

    private static ByteBuf header(PduType type, int flags, int hlen, int plen, int pdo) {
        ByteBuf b = Unpooled.buffer(plen + 8).order(ByteOrder.LITTLE_ENDIAN);
        b.writeByte(type.code).writeByte(flags).writeByte(hlen).writeByte(pdo).writeIntLE(plen);
        return b;
    }

    /** Appends the header digest (right, or off by one bit) when negotiated. */
    private static ByteBuf digest(ByteBuf b, boolean hd, boolean right, Crc32c crc) {
        if (hd) {
            int hlen = b.getUnsignedByte(2);
            b.writeIntLE(crc.compute(b, 0, hlen) ^ (right ? 0 : 1));
        }
        return b;
    }

    private static void send(EmbeddedChannel ch, ByteBuf b) {
        if (ch.isOpen()) {
            ch.writeInbound(b);
            ch.runPendingTasks();
        } else {
            b.release();
        }
        ch.checkException();
    }

    /** What the host sent: only what a host may send. */
    private static void drain(EmbeddedChannel ch) {
        Object o;
        while ((o = ch.readOutbound()) != null) {
            ByteBuf b = (ByteBuf) o;
            try {
                PduType t = PduType.of(b.getByte(0));
                assertTrue(t == PduType.IC_REQ || t == PduType.CAPSULE_CMD || t == PduType.H2C_DATA
                        || t == PduType.H2C_TERM_REQ, "the host sent a " + t + " PDU");
            } finally {
                b.release();
            }
        }
    }
}
