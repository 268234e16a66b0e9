package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.CompletionQueueEntry;
import io.nvmeof.protocol.FeatureId;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.protocol.Registers;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.tcp.DataPdu;
import io.nvmeof.protocol.tcp.FatalErrorStatus;
import io.nvmeof.protocol.tcp.Pdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.protocol.tcp.R2TPdu;
import io.nvmeof.protocol.tcp.TermReqPdu;
import io.nvmeof.target.backend.FileBackend;
import io.nvmeof.target.backend.RamBackend;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What one host may take from the target before and after it connects, and how it is told. */
class LimitsTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:limits";
    @TempDir
    Path dir;
    Target target;
    Subsystem subsystem;
    InetSocketAddress address;

    @BeforeEach
    void start() throws IOException {
        Target.Options o = Target.Options.defaults();
        o = o.with(Settings.EVENT_LOOP_THREADS, 2);
        o = o.with(Settings.CONNECT_TIMEOUT_MS, 400L);
        o = o.with(Settings.MAX_CONTROLLERS_PER_HOST, 2);
        o = o.with(Settings.MAX_CONNECTIONS, 6);
        o = o.with(Settings.MIN_KEEP_ALIVE_MS, 1000L);
        o = o.with(Settings.DATA_TIMEOUT_MS, 400L);
        o = o.with(Settings.MAX_BUFFER_MEMORY, (long) (64 << 10));
        target = new Target(o);
        subsystem = new Subsystem(NQN, "LIM1", "limits", "1.0");
        subsystem.addNamespace(new Namespace(NQN, 1, new RamBackend(1 << 20, 4096), false, null));
        // a file namespace: its reads need a buffer of the budget (a RAM namespace's are sent from its memory)
        subsystem.addNamespace(new Namespace(NQN, 2, FileBackend.open(dir.resolve("ns2.img"), 1 << 20, 4096, false),
                false, null));
        target.addSubsystem(subsystem);
        address = target.listenTcp(new InetSocketAddress("127.0.0.1", 0));
    }

    @AfterEach
    void stop() throws IOException {
        target.close();
    }

    private static long elapsedMs(long t0) {
        return (System.nanoTime() - t0) / 1_000_000;
    }

    @Test
    void aSocketThatDoesNotConnectIsClosedAtTheDeadline() throws IOException {
        try (RawHost silent = new RawHost(address); RawHost icreqOnly = new RawHost(address)) {
            long t0 = System.nanoTime();
            icreqOnly.icreq();
            assertTrue(silent.closedByPeer(), "a socket that sends nothing");
            assertTrue(icreqOnly.closedByPeer(), "a socket that sends ICReq and no Connect");
            long ms = elapsedMs(t0);
            assertTrue(ms >= 300 && ms < 5000, "closed after " + ms + " ms");
        }
        try (RawHost h = new RawHost(address)) {
            h.bringUpAdmin(NQN);
            sleep(800);
            assertTrue(h.command(RawHost::keepAlive, null).cqe().status().isSuccess(), "a connected host stays");
        }
    }

    @Test
    void connectDataLengthIsCheckedBeforeAnyBufferAndOneCommandAtATime() throws IOException {
        try (RawHost h = new RawHost(address)) {
            h.icreq();
            // a Connect whose SGL claims 1 MiB to be fetched by R2T: refused at once, no R2T
            RawHost.Received r = h.command(s -> s.connect(0, 32, 0, 0).sgl(0, 1 << 20, Sgl.TCP_TRANSPORT),
                    null);
            assertEquals(PduType.CAPSULE_RESP, r.type());
            assertEquals(Status.DATA_SGL_LENGTH_INVALID, r.cqe().status());
            // a Connect fetching its 1024 bytes by R2T, and a second command before it is done
            r = h.command(s -> s.connect(0, 32, 0, 0).sgl(0, 1024, Sgl.TCP_TRANSPORT), null);
            assertEquals(PduType.R2T, r.type());
            h.send(h.capsule(RawHost::keepAlive, null));
            RawHost.Received term = h.receive();
            assertEquals(PduType.C2H_TERM_REQ, term.type());
            assertEquals(FatalErrorStatus.PDU_SEQUENCE_ERROR.code, term.u16(8));
            assertTrue(h.closedByPeer());
        }
    }

    @Test
    void oneHostHoldsAtMostItsShareOfControllers() throws IOException {
        List<RawHost> held = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                RawHost h = new RawHost(address);
                held.add(h);
                h.bringUpAdmin(NQN);
            }
            try (RawHost third = new RawHost(address)) {
                third.icreq();
                assertEquals(Status.CONNECT_CONTROLLER_BUSY,
                        third.connect(0, NQN, RawHost.HOST_NQN, 0xffff).cqe().status());
                assertTrue(third.connect(0, NQN, "nqn.2026-11.io.nvmeof:another-host", 0xffff).cqe().status()
                        .isSuccess(), "another host is not held back");
            }
        } finally {
            for (RawHost h : held) {
                h.close();
            }
        }
    }

    @Test
    void connectionsBeyondTheTargetsLimitAreRefusedAndComeBack() throws Exception {
        List<RawHost> open = new ArrayList<>();
        try {
            for (int i = 0; i < 6; i++) {
                RawHost h = new RawHost(address);
                open.add(h);
                h.icreq();
                assertTrue(h.connect(0, NQN, "nqn.2026-11.io.nvmeof:host-" + i, 0xffff).cqe().status().isSuccess());
            }
            try (RawHost seventh = new RawHost(address)) {
                assertTrue(seventh.closedByPeer(), "the seventh connection is closed at once");
            }
            open.remove(0).close();
            long t0 = System.nanoTime();
            while (target.connectionCount() > 5 && elapsedMs(t0) < 5000) {
                sleep(20);
            }
            try (RawHost again = new RawHost(address)) {
                again.bringUpAdmin(NQN);
            }
        } finally {
            for (RawHost h : open) {
                h.close();
            }
        }
    }

    @Test
    void dataOwedAfterAnR2tThatNeverComesFailsTheCommandNotTheQueue() throws IOException {
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            int cntlid = admin.bringUpAdmin(NQN);
            io.bringUpIo(NQN, 1, cntlid);
            RawHost.Received r2t = io.command(x -> x.blocks(NvmOpcode.WRITE, 0, 2).psdt(1).nsid(1).cid(11)
                    .sgl(0, 8192, Sgl.TCP_TRANSPORT), null);
            assertEquals(PduType.R2T, r2t.type());
            long t0 = System.nanoTime();
            // the host keeps its controller alive and sends no data
            assertTrue(admin.command(RawHost::keepAlive, null).cqe().status().isSuccess());
            RawHost.Received failed = io.receive();
            long ms = elapsedMs(t0);
            assertEquals(11, failed.cqe().cid());
            assertEquals(Status.DATA_TRANSFER_ERROR, failed.cqe().status().withDnr(false));
            assertTrue(ms >= 300 && ms < 5000, "failed after " + ms + " ms");
            // the queue serves on: a write whose data comes
            byte[] data = new byte[4096];
            assertTrue(io.command(x -> x.blocks(NvmOpcode.WRITE, 0, 1).psdt(1).nsid(1).sgl(0, 4096, Sgl.IN_CAPSULE),
                    data).cqe().status().isSuccess());
        }
    }

    /**
     * Data a host sends late, for a write whose data timed out, under the TTAG of that write's
     * R2T: the slot and even the CID have gone to a new write, but the TTAG has not, so the stale
     * data ends the connection instead of landing in the new write.
     */
    @Test
    void lateDataForAnEndedWriteCannotLandInTheNextOne() throws IOException {
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            int cntlid = admin.bringUpAdmin(NQN);
            io.bringUpIo(NQN, 1, cntlid);
            RawHost.Received stale = io.command(x -> x.blocks(NvmOpcode.WRITE, 0, 1).psdt(1).nsid(1).cid(5)
                    .sgl(0, 4096, Sgl.TCP_TRANSPORT), null);
            assertEquals(PduType.R2T, stale.type());
            assertEquals(Status.DATA_TRANSFER_ERROR, io.receive().cqe().status().withDnr(false));
            RawHost.Received fresh = io.command(x -> x.blocks(NvmOpcode.WRITE, 0, 1).psdt(1).nsid(1).cid(5)
                    .sgl(0, 4096, Sgl.TCP_TRANSPORT), null);
            assertEquals(PduType.R2T, fresh.type());
            assertNotEquals(stale.u16(R2TPdu.TTAG_OFFSET), fresh.u16(R2TPdu.TTAG_OFFSET), "a TTAG reused");
            byte[] old = new byte[4096];
            Arrays.fill(old, (byte) 0xee);
            io.answer(stale, old);
            RawHost.Received term = io.receive();
            assertEquals(PduType.C2H_TERM_REQ, term.type());
            assertEquals(DataPdu.TTAG_OFFSET, term.u32(TermReqPdu.FEI_OFFSET));
            assertTrue(io.closedByPeer());
        }
        // the stale bytes are nowhere
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            io.bringUpIo(NQN, 1, admin.bringUpAdmin(NQN));
            RawHost.Received read = io.command(x -> x.blocks(NvmOpcode.READ, 0, 1).psdt(1).nsid(1)
                    .sgl(0, 4096, Sgl.TCP_TRANSPORT), null);
            assertEquals(PduType.C2H_DATA, read.type());
            assertNotEquals((byte) 0xee, read.bytes().get(read.u8(Pdu.PDO_OFFSET)));
        }
    }

    @Test
    void commandsWaitForABufferInsteadOfFailing() throws Exception {
        BufferBudget budget = target.bufferBudget();
        byte[] data = new byte[32 << 10];
        new Random(3).nextBytes(data);
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            int cntlid = admin.bringUpAdmin(NQN);
            io.bringUpIo(NQN, 1, cntlid);
            // 64 KiB of budget: writes 1 and 2 (32 KiB each) hold it all; write 3 and read 4 wait
            for (int cid = 1; cid <= 3; cid++) {
                long lba = (cid - 1) * 8L;
                int c = cid;
                io.send(io.capsule(x -> x.blocks(NvmOpcode.WRITE, lba, 8).psdt(1).nsid(2).cid(c)
                        .sgl(0, 32 << 10, Sgl.TCP_TRANSPORT), null));
            }
            io.send(io.capsule(x -> x.blocks(NvmOpcode.READ, 0, 8).psdt(1).nsid(2).cid(4)
                    .sgl(0, 32 << 10, Sgl.TCP_TRANSPORT), null));
            Map<Integer, RawHost.Received> r2ts = new HashMap<>();
            for (int i = 0; i < 2; i++) {
                RawHost.Received r = io.receive();
                assertEquals(PduType.R2T, r.type());
                r2ts.put(r.u16(R2TPdu.CCCID_OFFSET), r);
            }
            assertEquals(Set.of(1, 2), r2ts.keySet());
            long t0 = System.nanoTime();
            while (budget.waiting() < 2 && elapsedMs(t0) < 5000) {
                sleep(10);
            }
            assertEquals(2, budget.waiting(), "write 3 and read 4 wait for a buffer");
            assertTrue(budget.waits() >= 2);
            // a read of the RAM namespace needs no buffer: it goes out from the namespace's memory at once
            io.send(io.capsule(x -> x.blocks(NvmOpcode.READ, 0, 8).psdt(1).nsid(1).cid(5)
                    .sgl(0, 32 << 10, Sgl.TCP_TRANSPORT), null));
            RawHost.Received ram = io.receive();
            assertEquals(PduType.C2H_DATA, ram.type());
            assertEquals(5, ram.u16(DataPdu.CCCID_OFFSET));
            assertEquals(5, io.receive().cqe().cid());
            assertEquals(2, budget.waiting(), "still waiting");

            // data for write 1: it completes, its 32 KiB go to write 3 (first come, first served)
            io.answer(r2ts.get(1), data);
            RawHost.Received done = io.receive();
            assertEquals(1, done.cqe().cid());
            assertTrue(done.cqe().status().isSuccess());
            RawHost.Received r2t3 = io.receive();
            assertEquals(PduType.R2T, r2t3.type());
            assertEquals(3, r2t3.u16(R2TPdu.CCCID_OFFSET));
            // write 2 completes: the read gets its buffer and reads write 1's data
            io.answer(r2ts.get(2), data);
            assertTrue(io.receive().cqe().status().isSuccess());
            RawHost.Received read = io.receive();
            assertEquals(PduType.C2H_DATA, read.type());
            byte[] back = new byte[32 << 10];
            read.bytes().get(read.u8(Pdu.PDO_OFFSET), back);
            assertArrayEquals(data, back);
            assertEquals(4, io.receive().cqe().cid());
            io.answer(r2t3, data);
            assertTrue(io.receive().cqe().status().isSuccess());
        }
        long t0 = System.nanoTime();
        while (budget.used() != 0 && elapsedMs(t0) < 5000) {
            sleep(10);
        }
        assertEquals(0, budget.used(), "every buffer came back");
    }

    private static long kato(RawHost h) throws IOException {
        CompletionQueueEntry cqe = h.command(s -> s.opcode(AdminOpcode.GET_FEATURES.code).psdt(1)
                .featureId(FeatureId.KEEP_ALIVE_TIMER), null).cqe();
        assertTrue(cqe.status().isSuccess());
        return cqe.dw0() & 0xffffffffL;
    }

    private static void connect(RawHost h, String nqn, long kato) throws IOException {
        h.icreq();
        CompletionQueueEntry cqe = h.command(s -> s.connect(0, 32, 0, kato).sgl(0, 1024, Sgl.IN_CAPSULE),
                RawHost.connectData(nqn, RawHost.HOST_NQN, 0xffff)).cqe();
        assertTrue(cqe.status().isSuccess(), cqe.status().toString());
        assertTrue(h.command(s -> s.propertySet(Registers.CC, 4, Registers.ccEnable()), null).cqe().status().isSuccess());
    }

    @Test
    void keepAliveTimeoutsAreBounded() throws IOException {
        try (RawHost discovery = new RawHost(address); RawHost quick = new RawHost(address);
             RawHost none = new RawHost(address)) {
            connect(discovery, Nqn.DISCOVERY, 0);
            assertEquals(Target.DISCOVERY_KATO_MILLIS, kato(discovery), "a discovery controller asked for no KATO");
            connect(quick, NQN, 100);
            assertEquals(1000, kato(quick), "KATO 100 ms is raised to the minimum");
            connect(none, NQN, 0);
            assertEquals(0, kato(none), "an I/O controller may have none");
        }
    }

    @Test
    void aHostNoLongerAllowedIsDisconnectedAtOnce() throws IOException {
        subsystem.allowHost(RawHost.HOST_NQN);
        try (RawHost h = new RawHost(address); RawHost other = new RawHost(address)) {
            h.bringUpAdmin(NQN);
            other.icreq();
            assertEquals(Status.CONNECT_INVALID_HOST,
                    other.connect(0, NQN, "nqn.2026-11.io.nvmeof:stays", 0xffff).cqe().status(), "not allowed yet");
            subsystem.allowHost("nqn.2026-11.io.nvmeof:stays");
            subsystem.disallowHost(RawHost.HOST_NQN);
            long t0 = System.nanoTime();
            assertTrue(h.closedByPeer(), "the revoked host's connection is closed");
            assertTrue(elapsedMs(t0) < 2000, "at once, not at a keep-alive timeout");
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
