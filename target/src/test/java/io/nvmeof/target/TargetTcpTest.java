package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.PooledByteBufAllocator;
import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.CompletionQueueEntry;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.IdentifyCns;
import io.nvmeof.protocol.IdentifyController;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Registers;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.SubmissionQueueEntry;
import io.nvmeof.protocol.tcp.DataPdu;
import io.nvmeof.protocol.tcp.FatalErrorStatus;
import io.nvmeof.protocol.tcp.ICRespPdu;
import io.nvmeof.protocol.tcp.Pdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.protocol.tcp.R2TPdu;
import io.nvmeof.protocol.tcp.TermReqPdu;
import io.nvmeof.target.backend.RamBackend;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.Random;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The target over real loopback TCP, driven PDU by PDU by an independent raw host. */
class TargetTcpTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:test";
    static final String PRIVATE = "nqn.2026-11.io.nvmeof:private";
    static final long BLOCKS = 2048;
    static Target target;
    static InetSocketAddress address;

    @BeforeAll
    static void start() throws IOException {
        Target.Options o = Target.Options.defaults();
        o = o.with(Settings.EVENT_LOOP_THREADS, 2);
        o = o.with(Settings.KEEP_ALIVE_GRACE_MS, 200L);
        target = new Target(o);
        Subsystem s = new Subsystem(NQN, "SN0001", "test model", "1.0");
        s.addNamespace(new Namespace(NQN, 1, new RamBackend(BLOCKS * 4096, 4096), false, null));
        s.addNamespace(new Namespace(NQN, 5, new RamBackend(64 * 512, 512), true, null));
        target.addSubsystem(s);
        Subsystem p = new Subsystem(PRIVATE, "SN0002", "private", "1.0");
        p.allowHost("nqn.2026-11.io.nvmeof:someone-else");
        p.addNamespace(new Namespace(PRIVATE, 1, new RamBackend(1 << 20, 4096), false, null));
        target.addSubsystem(p);
        address = target.listenTcp(new InetSocketAddress("127.0.0.1", 0));
    }

    @AfterAll
    static void stop() throws IOException {
        target.close();
    }

    @Test
    void icRespFollowsLinuxInteropRules() throws IOException {
        try (RawHost h = new RawHost(address)) {
            RawHost.Received r = h.icreq();
            assertEquals(PduType.IC_RESP, r.type());
            assertEquals(128, r.u8(Pdu.HLEN_OFFSET));
            assertEquals(128, r.u32(Pdu.PLEN_OFFSET));
            assertEquals(0, r.u16(ICRespPdu.PFV_OFFSET));
            assertEquals(0, r.u8(ICRespPdu.CPDA_OFFSET));
            long maxh2c = r.u32(ICRespPdu.MAXH2CDATA_OFFSET);
            assertTrue(maxh2c >= 4096 && maxh2c % 4 == 0, "MAXH2CDATA " + maxh2c);
        }
    }

    @Test
    void bringUpAndIdentify() throws IOException {
        try (RawHost h = new RawHost(address)) {
            int cntlid = h.bringUpAdmin(NQN);
            assertTrue(cntlid >= 1 && cntlid <= 0xffef);
            CompletionQueueEntry csts = h.command(s -> s.propertyGet(Registers.CSTS, 4), null).cqe();
            assertEquals(Registers.CSTS_RDY, csts.dw0());
            CompletionQueueEntry cap = h.command(s -> s.propertyGet(Registers.CAP, 8), null).cqe();
            assertEquals(128, Registers.capMaxQueueEntries(cap.result()));

            h.send(h.capsule(s -> s.opcode(AdminOpcode.IDENTIFY.code).psdt(1).identifyCns(IdentifyCns.CONTROLLER)
                    .sgl(0, 4096, Sgl.TCP_TRANSPORT), null));
            RawHost.Received data = h.receive();
            assertEquals(PduType.C2H_DATA, data.type());
            assertEquals(4096, data.u32(DataPdu.DATAL_OFFSET));
            assertTrue((data.u8(Pdu.FLAGS_OFFSET) & Pdu.FLAG_LAST_PDU) != 0);
            IdentifyController id = new IdentifyController()
                    .wrap(data.bytes(), data.u8(Pdu.PDO_OFFSET));
            assertEquals("SN0001", id.serialNumber());
            assertEquals(NQN, id.subsystemNqn());
            assertEquals(cntlid, id.cntlid());
            assertEquals(1, id.vwc());
            assertTrue(h.receive().cqe().status().isSuccess());

            h.send(h.capsule(s -> s.opcode(AdminOpcode.IDENTIFY.code).psdt(1).identifyCns(IdentifyCns.ACTIVE_NAMESPACE_LIST)
                    .sgl(0, 4096, Sgl.TCP_TRANSPORT), null));
            RawHost.Received list = h.receive();
            int pdo = list.u8(Pdu.PDO_OFFSET);
            assertEquals(1, list.bytes().getInt(pdo));
            assertEquals(5, list.bytes().getInt(pdo + 4));
            assertEquals(0, list.bytes().getInt(pdo + 8));
            assertTrue(h.receive().cqe().status().isSuccess());
        }
    }

    @Test
    void refusesUnknownSubsystemAndHostNotAllowed() throws IOException {
        try (RawHost h = new RawHost(address)) {
            h.icreq();
            CompletionQueueEntry cqe = h.connect(0, "nqn.2026-11.io.nvmeof:nothing", RawHost.HOST_NQN, 0xffff).cqe();
            assertEquals(Status.CONNECT_INVALID_PARAMETERS, cqe.status());
            assertEquals(256, cqe.dw0() & 0xffff, "IPO names SUBNQN");
            assertEquals(1, (cqe.dw0() >>> 16) & 0xff, "IATTR: in the data");
        }
        try (RawHost h = new RawHost(address)) {
            h.icreq();
            CompletionQueueEntry cqe = h.connect(0, PRIVATE, RawHost.HOST_NQN, 0xffff).cqe();
            assertEquals(Status.CONNECT_INVALID_HOST, cqe.status());
            assertTrue(cqe.status().dnr());
        }
    }

    @Test
    void commandBeforeConnectIsASequenceError() throws IOException {
        try (RawHost h = new RawHost(address)) {
            h.icreq();
            assertEquals(Status.COMMAND_SEQUENCE_ERROR, h.command(RawHost::keepAlive, null).cqe().status());
        }
    }

    /** Each malformed PDU ends its connection with the right C2HTermReq; the target serves on. */
    static Stream<Arguments> malformedPdus() {
        return Stream.of(
                Arguments.of("capsule before ICReq", false, (Consumer<ByteBuffer>) b -> { },
                        FatalErrorStatus.PDU_SEQUENCE_ERROR, 0),
                Arguments.of("capsule with HLEN 80", true, (Consumer<ByteBuffer>) b -> b.put(2, (byte) 80),
                        FatalErrorStatus.INVALID_HEADER_FIELD, 2),
                Arguments.of("unknown PDU type 0x0f", true, (Consumer<ByteBuffer>) b -> b.put(0, (byte) 0x0f),
                        FatalErrorStatus.INVALID_HEADER_FIELD, 0),
                Arguments.of("R2T from a host", true, (Consumer<ByteBuffer>) b -> b.put(0, (byte) PduType.R2T.code),
                        FatalErrorStatus.PDU_SEQUENCE_ERROR, 0),
                Arguments.of("PLEN past the in-capsule limit", true,
                        (Consumer<ByteBuffer>) b -> b.put(3, (byte) 72).putInt(4, 72 + 1_000_000),
                        FatalErrorStatus.DATA_TRANSFER_LIMIT_EXCEEDED, 4),
                Arguments.of("PLEN shorter than the header", true, (Consumer<ByteBuffer>) b -> b.putInt(4, 40),
                        FatalErrorStatus.INVALID_HEADER_FIELD, 4));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedPdus")
    void malformedPduGetsTermReq(String what, boolean initialize, Consumer<ByteBuffer> corrupt, FatalErrorStatus fes,
                                 int fei) throws IOException {
        try (RawHost h = new RawHost(address)) {
            if (initialize) {
                h.icreq();
            }
            ByteBuffer pdu = h.capsule(RawHost::keepAlive, null);
            corrupt.accept(pdu);
            h.send(pdu);
            RawHost.Received term = h.receive();
            assertEquals(PduType.C2H_TERM_REQ, term.type(), what);
            assertEquals(fes.code, term.u16(TermReqPdu.FES_OFFSET), what);
            assertEquals(fei, term.u32(TermReqPdu.FEI_OFFSET), what);
            assertTrue(h.closedByPeer(), "connection closed after the TermReq");
        }
        // the target still serves everyone else
        try (RawHost other = new RawHost(address)) {
            other.bringUpAdmin(NQN);
            assertTrue(other.command(RawHost::keepAlive, null).cqe().status().isSuccess());
        }
    }

    private static Consumer<SubmissionQueueEntry> rw(NvmOpcode op, int nsid, long slba, int blocks,
                                                                      long sglLength, int sgl) {
        return s -> s.opcode(op.code).psdt(1).nsid(nsid).slba(slba).blockCount(blocks).sgl(0, sglLength, sgl);
    }

    static Stream<Arguments> badCommands() {
        return Stream.of(
                Arguments.of("LBA range past the end", rw(NvmOpcode.READ, 1, BLOCKS - 1, 2, 8192, Sgl.TCP_TRANSPORT),
                        Status.LBA_OUT_OF_RANGE),
                Arguments.of("unknown namespace", rw(NvmOpcode.READ, 9, 0, 1, 4096, Sgl.TCP_TRANSPORT),
                        Status.INVALID_NAMESPACE),
                Arguments.of("SGL length not the block count", rw(NvmOpcode.READ, 1, 0, 2, 4096, Sgl.TCP_TRANSPORT),
                        Status.DATA_SGL_LENGTH_INVALID),
                Arguments.of("write to a read-only namespace", rw(NvmOpcode.WRITE, 5, 0, 1, 512, Sgl.TCP_TRANSPORT),
                        Status.NAMESPACE_WRITE_PROTECTED),
                Arguments.of("unsupported I/O opcode",
                        (Consumer<SubmissionQueueEntry>) s -> s.opcode(0x7e).psdt(1).nsid(1),
                        Status.INVALID_OPCODE),
                Arguments.of("transfer beyond MDTS", rw(NvmOpcode.READ, 1, 0, 512, 2 << 20, Sgl.TCP_TRANSPORT),
                        Status.INVALID_FIELD),
                Arguments.of("keyed SGL over TCP", rw(NvmOpcode.READ, 1, 0, 1, 4096, 0x40),
                        Status.SGL_DESCRIPTOR_TYPE_INVALID));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badCommands")
    void badCommandGetsSpecStatus(String what, Consumer<SubmissionQueueEntry> fill, Status expected)
            throws IOException {
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            int cntlid = admin.bringUpAdmin(NQN);
            io.bringUpIo(NQN, 1, cntlid);
            CompletionQueueEntry cqe = io.command(fill, null).cqe();
            assertEquals(expected, cqe.status().withDnr(expected.dnr()), what);
            assertEquals(1, cqe.sqid());
            // the queue keeps working after the error
            assertTrue(io.command(s -> s.opcode(NvmOpcode.FLUSH.code).psdt(1).nsid(1), null).cqe().status().isSuccess());
        }
    }

    @Test
    void writeThroughR2tAndReadBack() throws IOException {
        byte[] payload = new byte[3 * 4096];
        new Random(7).nextBytes(payload);
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            int cntlid = admin.bringUpAdmin(NQN);
            io.bringUpIo(NQN, 1, cntlid);
            io.send(io.capsule(rw(NvmOpcode.WRITE, 1, 100, 3, payload.length, Sgl.TCP_TRANSPORT), null));
            RawHost.Received r2t = io.receive();
            assertEquals(PduType.R2T, r2t.type());
            assertEquals(0, r2t.u32(R2TPdu.R2TO_OFFSET));
            assertEquals(payload.length, r2t.u32(R2TPdu.R2TL_OFFSET));
            int ttag = r2t.u16(R2TPdu.TTAG_OFFSET);
            int cccid = r2t.u16(R2TPdu.CCCID_OFFSET);
            // two H2CData PDUs: 8 KiB then 4 KiB
            for (int at = 0; at < payload.length; at += 8192) {
                int n = Math.min(8192, payload.length - at);
                ByteBuffer b = Flyweight.allocate(24 + n);
                new DataPdu().<DataPdu>wrap(b, 0).encode(PduType.H2C_DATA, at + n == payload.length ? Pdu.FLAG_LAST_PDU : 0,
                        cccid, ttag, at, n, false, false);
                b.put(24, payload, at, n);
                io.send(b);
            }
            assertTrue(io.receive().cqe().status().isSuccess());

            // in-capsule write of one block, then read all four back
            byte[] one = new byte[4096];
            new Random(8).nextBytes(one);
            assertTrue(io.command(rw(NvmOpcode.WRITE, 1, 103, 1, 4096, Sgl.IN_CAPSULE), one).cqe().status().isSuccess());
            io.send(io.capsule(rw(NvmOpcode.READ, 1, 100, 4, 4 * 4096, Sgl.TCP_TRANSPORT), null));
            RawHost.Received data = io.receive();
            assertEquals(PduType.C2H_DATA, data.type());
            byte[] back = new byte[4 * 4096];
            data.bytes().get(data.u8(Pdu.PDO_OFFSET), back);
            byte[] expected = new byte[4 * 4096];
            System.arraycopy(payload, 0, expected, 0, payload.length);
            System.arraycopy(one, 0, expected, payload.length, 4096);
            assertArrayEquals(expected, back);
            assertTrue(io.receive().cqe().status().isSuccess());
        }
    }

    @Test
    void h2cDataWithUnknownTagIsFatal() throws IOException {
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            int cntlid = admin.bringUpAdmin(NQN);
            io.bringUpIo(NQN, 1, cntlid);
            ByteBuffer b = Flyweight.allocate(24 + 512);
            new DataPdu().<DataPdu>wrap(b, 0).encode(PduType.H2C_DATA, Pdu.FLAG_LAST_PDU, 1, 77, 0, 512, false, false);
            io.send(b);
            RawHost.Received term = io.receive();
            assertEquals(PduType.C2H_TERM_REQ, term.type());
            assertEquals(FatalErrorStatus.INVALID_HEADER_FIELD.code, term.u16(TermReqPdu.FES_OFFSET));
            assertEquals(DataPdu.TTAG_OFFSET, term.u32(TermReqPdu.FEI_OFFSET));
            // the admin queue of the same host is unaffected
            assertTrue(admin.command(RawHost::keepAlive, null).cqe().status().isSuccess());
        }
    }

    @Test
    void withoutSqFlowControlReadsEndWithSuccessInTheData() throws IOException {
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            int cntlid = admin.bringUpAdmin(NQN);
            io.icreq();
            CompletionQueueEntry c = io.command(s -> s.connect(1, 32, SubmissionQueueEntry.CATTR_DISABLE_SQ_FLOW_CONTROL, 0)
                    .sgl(0, 1024, Sgl.IN_CAPSULE), RawHost.connectData(NQN, RawHost.HOST_NQN, cntlid)).cqe();
            assertTrue(c.status().isSuccess());
            io.send(io.capsule(rw(NvmOpcode.READ, 1, 0, 2, 8192, Sgl.TCP_TRANSPORT), null));
            RawHost.Received data = io.receive();
            assertEquals(PduType.C2H_DATA, data.type());
            assertEquals(Pdu.FLAG_LAST_PDU | Pdu.FLAG_SUCCESS, data.u8(Pdu.FLAGS_OFFSET));
            // no response capsule for the read: the next PDU answers the next command
            CompletionQueueEntry flush = io.command(s -> s.opcode(NvmOpcode.FLUSH.code).psdt(1).nsid(1).cid(77), null).cqe();
            assertEquals(77, flush.cid());
            // an error still gets its response capsule
            io.send(io.capsule(rw(NvmOpcode.READ, 1, BLOCKS, 1, 4096, Sgl.TCP_TRANSPORT), null));
            assertEquals(Status.LBA_OUT_OF_RANGE, io.receive().cqe().status());
        }
    }

    @Test
    void dataDigestMismatchFailsOnlyThatCommand() throws IOException {
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            int cntlid = admin.bringUpAdmin(NQN);
            io.icreq(0, true, true);
            assertTrue(io.connect(1, NQN, RawHost.HOST_NQN, cntlid).cqe().status().isSuccess());
            byte[] block = new byte[4096];
            new Random(3).nextBytes(block);
            ByteBuffer bad = io.capsule(rw(NvmOpcode.WRITE, 1, 7, 1, 4096, Sgl.IN_CAPSULE), block);
            int last = bad.limit() - 1;
            bad.put(last, (byte) (bad.get(last) ^ 1));
            io.send(bad);
            assertEquals(Status.TRANSIENT_TRANSPORT_ERROR, io.receive().cqe().status());
            assertTrue(io.command(rw(NvmOpcode.WRITE, 1, 7, 1, 4096, Sgl.IN_CAPSULE), block).cqe().status().isSuccess());
            io.send(io.capsule(rw(NvmOpcode.READ, 1, 7, 1, 4096, Sgl.TCP_TRANSPORT), null));
            RawHost.Received data = io.receive();
            assertEquals(PduType.C2H_DATA, data.type());
            int flags = data.u8(Pdu.FLAGS_OFFSET);
            assertTrue((flags & Pdu.FLAG_HDGST) != 0 && (flags & Pdu.FLAG_DDGST) != 0);
            int pdo = data.u8(Pdu.PDO_OFFSET);
            assertEquals(28, pdo);
            assertEquals(RawHost.crc32c(data.bytes(), 0, 24), data.bytes().getInt(24), "header digest");
            assertEquals(RawHost.crc32c(data.bytes(), pdo, 4096), data.bytes().getInt(pdo + 4096), "data digest");
            byte[] back = new byte[4096];
            data.bytes().get(pdo, back);
            assertArrayEquals(block, back);
            RawHost.Received resp = io.receive();
            assertEquals(RawHost.crc32c(resp.bytes(), 0, 24), resp.bytes().getInt(24));
            assertTrue(resp.cqe().status().isSuccess());
        }
    }

    /** A fused first that fails on a bad data digest takes its pairing with it: the second is aborted, once. */
    @Test
    void corruptFusedFirstAbortsItsSecond() throws IOException {
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            int cntlid = admin.bringUpAdmin(NQN);
            io.icreq(0, false, true);
            assertTrue(io.connect(1, NQN, RawHost.HOST_NQN, cntlid).cqe().status().isSuccess());
            byte[] block = new byte[4096];
            ByteBuffer first = io.capsule(s -> s.opcode(NvmOpcode.COMPARE.code).psdt(1).fuse(1).nsid(1).slba(40)
                    .blockCount(1).sgl(0, 4096, Sgl.IN_CAPSULE).cid(11), block);
            first.put(first.limit() - 1, (byte) (first.get(first.limit() - 1) ^ 1));
            io.send(first);
            io.send(io.capsule(s -> s.opcode(NvmOpcode.WRITE.code).psdt(1).fuse(2).nsid(1).slba(40).blockCount(1)
                    .sgl(0, 4096, Sgl.IN_CAPSULE).cid(12), block));
            CompletionQueueEntry a = io.receive().cqe();
            assertEquals(11, a.cid());
            assertEquals(Status.TRANSIENT_TRANSPORT_ERROR, a.status());
            CompletionQueueEntry b = io.receive().cqe();
            assertEquals(12, b.cid());
            assertEquals(Status.ABORTED_FUSED_FAILED, b.status());
            // exactly one answer each: the next command gets the next answer
            CompletionQueueEntry flush = io.command(s -> s.opcode(NvmOpcode.FLUSH.code).psdt(1).nsid(1).cid(13), null).cqe();
            assertEquals(13, flush.cid());
            assertTrue(flush.status().isSuccess());
        }
    }

    @Test
    void headerDigestMismatchIsFatal() throws IOException {
        try (RawHost h = new RawHost(address)) {
            h.icreq(0, true, false);
            ByteBuffer pdu = h.capsule(RawHost::keepAlive, null);
            pdu.put(72, (byte) (pdu.get(72) ^ 0xff));
            h.send(pdu);
            RawHost.Received term = h.receive();
            assertEquals(PduType.C2H_TERM_REQ, term.type());
            assertEquals(FatalErrorStatus.HEADER_DIGEST_ERROR.code, term.u16(TermReqPdu.FES_OFFSET));
            assertTrue(h.closedByPeer());
        }
    }

    @Test
    void c2hDataHonoursTheHostsPduDataAlignment() throws IOException {
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            int cntlid = admin.bringUpAdmin(NQN);
            io.icreq(3, false, false); // HPDA 3: data on 16-byte boundaries
            assertTrue(io.connect(1, NQN, RawHost.HOST_NQN, cntlid).cqe().status().isSuccess());
            byte[] block = new byte[4096];
            new Random(4).nextBytes(block);
            assertTrue(io.command(rw(NvmOpcode.WRITE, 1, 9, 1, 4096, Sgl.IN_CAPSULE), block).cqe().status().isSuccess());
            io.send(io.capsule(rw(NvmOpcode.READ, 1, 9, 1, 4096, Sgl.TCP_TRANSPORT), null));
            RawHost.Received data = io.receive();
            int pdo = data.u8(Pdu.PDO_OFFSET);
            assertEquals(32, pdo);
            assertEquals(pdo + 4096, data.u32(Pdu.PLEN_OFFSET));
            byte[] back = new byte[4096];
            data.bytes().get(pdo, back);
            assertArrayEquals(block, back);
            assertTrue(io.receive().cqe().status().isSuccess());
        }
    }

    /**
     * A host that sends reads and never reads the answers stops being read once a few MiB of
     * responses wait (socket writability), instead of making the target buffer them all;
     * other hosts are served meanwhile, and the slow host gets every answer once it reads.
     */
    @Test
    void hostThatDoesNotReadIsThrottledNotBuffered() throws Exception {
        int count = 1000;
        int blocks = 16; // 64 KiB each: 62.5 MiB of responses in all
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            int cntlid = admin.bringUpAdmin(NQN);
            io.bringUpIo(NQN, 1, cntlid);
            io.socket.setReceiveBufferSize(64 * 1024);
            Thread sender = new Thread(() -> {
                try {
                    for (int i = 0; i < count; i++) {
                        int cid = i % 30 + 1;
                        io.send(io.capsule(s -> s.opcode(NvmOpcode.READ.code).psdt(1).nsid(1).slba(0).blockCount(blocks)
                                .sgl(0, blocks * 4096L, Sgl.TCP_TRANSPORT).cid(cid), null));
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            sender.start();
            Thread.sleep(1500);
            long used = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
            assertTrue(used < 40L << 20, "target holds " + (used >> 20) + " MiB of direct memory for a host that does not read");
            try (RawHost other = new RawHost(address)) {
                other.bringUpAdmin(NQN);
                assertTrue(other.command(RawHost::keepAlive, null).cqe().status().isSuccess());
            }
            for (int i = 0; i < count; i++) {
                RawHost.Received data = io.receive();
                assertEquals(PduType.C2H_DATA, data.type());
                assertEquals(blocks * 4096L, data.u32(DataPdu.DATAL_OFFSET));
                assertTrue(io.receive().cqe().status().isSuccess());
            }
            sender.join(10_000);
        }
    }

    @Test
    void featuresFollowTheirRules() throws IOException {
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            int cntlid = admin.bringUpAdmin(NQN);
            // Get Features, SEL 011b (capabilities): Number of Queues is changeable
            CompletionQueueEntry caps = admin.command(s -> s.opcode(AdminOpcode.GET_FEATURES.code).psdt(1)
                    .cdw(10, 0x07 | 3 << 8), null).cqe();
            assertTrue(caps.status().isSuccess());
            assertEquals(1 << 2, caps.dw0());
            CompletionQueueEntry set = admin.command(s -> s.opcode(AdminOpcode.SET_FEATURES.code).psdt(1)
                    .numberOfQueues(2, 2), null).cqe();
            assertTrue(set.status().isSuccess());
            assertEquals(0x00010001, set.dw0(), "two of each granted, 0's based");
            io.bringUpIo(NQN, 1, cntlid);
            // once an I/O queue exists, the number of queues is fixed
            assertEquals(Status.COMMAND_SEQUENCE_ERROR, admin.command(s -> s.opcode(AdminOpcode.SET_FEATURES.code).psdt(1)
                    .numberOfQueues(8, 8), null).cqe().status().withDnr(true));
            // and an I/O queue beyond the grant is refused
            try (RawHost third = new RawHost(address)) {
                third.icreq();
                CompletionQueueEntry cqe = third.connect(3, NQN, RawHost.HOST_NQN, cntlid).cqe();
                assertEquals(Status.CONNECT_INVALID_PARAMETERS, cqe.status());
                assertEquals(42, cqe.dw0() & 0xffff, "IPO names QID");
            }
        }
    }

    /** CC.EN 1 -> 0 resets the controller: CSTS.RDY clears, I/O queues go, the admin queue stays. */
    @Test
    void controllerResetAndShutdown() throws IOException {
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            int cntlid = admin.bringUpAdmin(NQN);
            io.bringUpIo(NQN, 1, cntlid);
            assertTrue(admin.command(s -> s.propertySet(Registers.CC, 4, 0), null).cqe().status().isSuccess());
            assertEquals(0, admin.command(s -> s.propertyGet(Registers.CSTS, 4), null).cqe().dw0() & Registers.CSTS_RDY);
            assertTrue(io.closedByPeer(), "the I/O queue went with the reset");
            assertEquals(Status.COMMAND_SEQUENCE_ERROR, admin.command(RawHost::keepAlive, null).cqe().status(),
                    "a disabled controller takes fabrics commands only");
            assertTrue(admin.command(s -> s.propertySet(Registers.CC, 4, Registers.ccEnable()), null).cqe().status()
                    .isSuccess());
            assertEquals(Registers.CSTS_RDY, admin.command(s -> s.propertyGet(Registers.CSTS, 4), null).cqe().dw0());
            try (RawHost io2 = new RawHost(address)) {
                io2.bringUpIo(NQN, 1, cntlid);
            }
            // normal shutdown: SHST goes to complete
            assertTrue(admin.command(s -> s.propertySet(Registers.CC, 4, Registers.ccEnable() | Registers.CC_SHN_NORMAL),
                    null).cqe().status().isSuccess());
            // shutdown processing flushes every namespace on the I/O executor first: poll for as long as
            // that may take on a busy machine (it failed once as 100 polls without a pause)
            int csts = 0;
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
            while (Registers.cstsShst(csts) != 2 && System.nanoTime() < deadline) {
                csts = admin.command(s -> s.propertyGet(Registers.CSTS, 4), null).cqe().dw0();
                if (Registers.cstsShst(csts) != 2) {
                    sleepQuietly(5);
                }
            }
            assertEquals(2, Registers.cstsShst(csts));
        }
    }

    @Test
    void silentHostIsDisconnectedAfterKeepAliveTimeout() throws IOException {
        try (RawHost h = new RawHost(address)) {
            h.icreq();
            // KATO 1000 ms, then silence: the controller goes away within KATO + grace
            CompletionQueueEntry cqe = h.command(s -> s.connect(0, 32, 0, 1000).sgl(0, 1024, Sgl.IN_CAPSULE),
                    RawHost.connectData(NQN, RawHost.HOST_NQN, 0xffff)).cqe();
            assertTrue(cqe.status().isSuccess());
            long t0 = System.nanoTime();
            assertTrue(h.closedByPeer(), "target closed the admin queue");
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms >= 900 && ms < 5000, "closed after " + ms + " ms");
        }
    }

    /**
     * A partition, made deterministic: a write waits (a fault delays it past KATO) while its
     * host falls silent. The keep-alive expires, and the write must never reach the namespace,
     * since a multipath host retries it through another gateway and may have written the block
     * again since. The same delayed write from a host that keeps alive lands (the control).
     */
    @Test
    void aControllerWhoseKeepAliveExpiredRunsNoneOfItsWaitingWrites() throws Exception {
        long lost = 700;
        long landed = 701;
        byte[] before = new byte[4096];
        new Random(30).nextBytes(before);
        writeBlock(lost, before);
        byte[] block = new byte[4096];
        new Random(31).nextBytes(block);
        Faults.Rule delay = target.faults().delay(Faults.Match.namespace(1).subsystem(NQN).opcode(NvmOpcode.WRITE.code),
                java.time.Duration.ofMillis(2500));
        long expiries = target.keepAliveExpiries();
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            admin.icreq();
            CompletionQueueEntry cqe = admin.command(s -> s.connect(0, 32, 0, 1000).sgl(0, 1024, Sgl.IN_CAPSULE),
                    RawHost.connectData(NQN, RawHost.HOST_NQN, 0xffff)).cqe();
            assertTrue(cqe.status().isSuccess());
            assertTrue(admin.command(s -> s.propertySet(Registers.CC, 4, Registers.ccEnable()), null).cqe().status()
                    .isSuccess());
            io.bringUpIo(NQN, 1, cqe.dw0() & 0xffff);
            io.send(io.capsule(rw(NvmOpcode.WRITE, 1, lost, 1, 4096, Sgl.IN_CAPSULE), block));
            // silence: KATO 1 s + 200 ms grace pass while the write waits 2.5 s
            assertTrue(io.closedByPeer(), "the I/O queue closed with no completion of the write");
            assertTrue(admin.closedByPeer(), "the admin queue closed");
        }
        assertEquals(expiries + 1, target.keepAliveExpiries());
        Thread.sleep(3000); // past the delay: the write would have run by now
        delay.remove();
        assertArrayEquals(before, readBlocks(lost, 1), "a write of an expired controller reached the namespace");

        // the control: the same delay, with keep-alives sent meanwhile, and the write lands
        delay = target.faults().delay(Faults.Match.namespace(1).subsystem(NQN).opcode(NvmOpcode.WRITE.code),
                java.time.Duration.ofMillis(2500));
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            admin.icreq();
            CompletionQueueEntry cqe = admin.command(s -> s.connect(0, 32, 0, 1000).sgl(0, 1024, Sgl.IN_CAPSULE),
                    RawHost.connectData(NQN, RawHost.HOST_NQN, 0xffff)).cqe();
            assertTrue(admin.command(s -> s.propertySet(Registers.CC, 4, Registers.ccEnable()), null).cqe().status()
                    .isSuccess());
            io.bringUpIo(NQN, 1, cqe.dw0() & 0xffff);
            io.send(io.capsule(rw(NvmOpcode.WRITE, 1, landed, 1, 4096, Sgl.IN_CAPSULE), block));
            for (int i = 0; i < 7; i++) {
                Thread.sleep(400);
                assertTrue(admin.command(RawHost::keepAlive, null).cqe().status().isSuccess());
            }
            assertTrue(io.receive().cqe().status().isSuccess(), "the delayed write completed");
        } finally {
            delay.remove();
        }
        assertArrayEquals(block, readBlocks(landed, 1));
    }

    /** Writes one block of namespace 1 through a fresh controller. */
    private static void writeBlock(long slba, byte[] block) throws IOException {
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            io.bringUpIo(NQN, 1, admin.bringUpAdmin(NQN));
            assertTrue(io.command(rw(NvmOpcode.WRITE, 1, slba, 1, 4096, Sgl.IN_CAPSULE), block).cqe().status().isSuccess());
        }
    }

    /** Reads {@code count} blocks of namespace 1 through a fresh controller. */
    private static byte[] readBlocks(long slba, int count) throws IOException {
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            io.bringUpIo(NQN, 1, admin.bringUpAdmin(NQN));
            io.send(io.capsule(rw(NvmOpcode.READ, 1, slba, count, count * 4096L, Sgl.TCP_TRANSPORT), null));
            RawHost.Received data = io.receive();
            assertEquals(PduType.C2H_DATA, data.type());
            byte[] back = new byte[count * 4096];
            data.bytes().get(data.u8(Pdu.PDO_OFFSET), back);
            assertTrue(io.receive().cqe().status().isSuccess());
            return back;
        }
    }

    @Test
    void keepAliveKeepsTheControllerAlive() throws Exception {
        try (RawHost h = new RawHost(address)) {
            h.icreq();
            assertTrue(h.command(s -> s.connect(0, 32, 0, 1000).sgl(0, 1024, Sgl.IN_CAPSULE),
                    RawHost.connectData(NQN, RawHost.HOST_NQN, 0xffff)).cqe().status().isSuccess());
            assertTrue(h.command(s -> s.propertySet(Registers.CC, 4, Registers.ccEnable()), null).cqe().status()
                    .isSuccess());
            for (int i = 0; i < 6; i++) {
                Thread.sleep(400);
                assertTrue(h.command(RawHost::keepAlive, null).cqe().status().isSuccess());
            }
        }
    }

    @Test
    void ioQueueConnectChecksController() throws IOException {
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            int cntlid = admin.bringUpAdmin(NQN);
            io.icreq();
            CompletionQueueEntry cqe = io.connect(1, NQN, RawHost.HOST_NQN, cntlid + 1000).cqe();
            assertEquals(Status.CONNECT_INVALID_PARAMETERS, cqe.status());
            assertEquals(16, cqe.dw0() & 0xffff, "IPO names CNTLID");
        }
    }

    /**
     * The SQE an external NVMe fuzzer sent through another host (opcode 74h, reserved bits in
     * CDW0, PSDT 11b, a data pointer), byte for byte: it stalled the target once. Every queue
     * answers it with its own status, and the queue serves on.
     */
    static ByteBuffer fuzzerFoundSqe() {
        ByteBuffer b = Flyweight.allocate(SubmissionQueueEntry.SIZE);
        b.put(0, (byte) 0x74).put(1, (byte) (2 << 2 | 3 << 6)).putShort(2, (short) 47293).putInt(4, 2)
                .putInt(8, (int) 3970961851L).putInt(12, (int) 3697910604L).putLong(16, 1566724744L)
                .put(24, Base64.getDecoder().decode("+QLCUld6iROiz9P8fK2DKg=="));
        long[] cdw = {732724870L, 1081535892L, 3083063182L, 2297664069L, 673100775L, 1459873953L};
        for (int i = 0; i < cdw.length; i++) {
            b.putInt(40 + 4 * i, (int) cdw[i]);
        }
        return b;
    }

    @Test
    void theFuzzersCommandIsAnsweredOnEveryQueue() throws IOException {
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address);
             RawHost fresh = new RawHost(address)) {
            int cntlid = admin.bringUpAdmin(NQN);
            io.bringUpIo(NQN, 1, cntlid);
            fresh.icreq();
            for (RawHost h : new RawHost[] {admin, io, fresh}) {
                CompletionQueueEntry cqe = h.command(s -> s.buffer().put(s.offset(), fuzzerFoundSqe(), 0,
                        SubmissionQueueEntry.SIZE), null).cqe();
                assertEquals(47293, cqe.cid());
                // PSDT 11b is an Invalid Field on a fabric, checked before anything else, as the kernel does
                assertEquals(Status.INVALID_FIELD, cqe.status(), h == admin ? "admin" : h == io ? "I/O" : "before Connect");
            }
            assertTrue(admin.command(RawHost::keepAlive, null).cqe().status().isSuccess(), "the admin queue serves on");
            assertTrue(io.command(s -> s.opcode(NvmOpcode.FLUSH.code).psdt(1).nsid(1), null).cqe().status().isSuccess(),
                    "the I/O queue serves on");
            assertEquals(Status.INVALID_OPCODE, admin.command(s -> {
                s.buffer().put(s.offset(), fuzzerFoundSqe(), 0, SubmissionQueueEntry.SIZE);
                s.psdt(1);
            }, null).cqe().status(), "with PSDT 01b: opcode 74h is implemented by nobody");
        }
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
