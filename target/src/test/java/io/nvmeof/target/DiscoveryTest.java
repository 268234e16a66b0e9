package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.CompletionQueueEntry;
import io.nvmeof.protocol.DiscoveryLogEntry;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.IdentifyCns;
import io.nvmeof.protocol.IdentifyController;
import io.nvmeof.protocol.LogPage;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.tcp.Pdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.target.backend.RamBackend;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The discovery subsystem on every port, a discovery-only port (which tells of every port) and
 * a port that serves subsystems (which tells of itself only), and the log page a host sees.
 */
class DiscoveryTest {
    static final String OPEN = "nqn.2026-11.io.nvmeof:open";
    static final String LOCKED = "nqn.2026-11.io.nvmeof:locked";
    static final String ELSEWHERE = "nqn.2026-11.io.nvmeof:elsewhere";
    Target target;
    Port io;
    Port other;
    Port disc;

    @BeforeEach
    void start() throws IOException {
        target = new Target();
        for (String nqn : List.of(OPEN, LOCKED, ELSEWHERE)) {
            Subsystem s = new Subsystem(nqn, "S", "m", "1");
            s.addNamespace(new Namespace(nqn, 1, new RamBackend(1 << 20, 4096), false, null));
            if (nqn.equals(LOCKED)) {
                s.allowHost("nqn.2026-11.io.nvmeof:someone-else");
            }
            target.addSubsystem(s);
        }
        io = target.addPort(new Port(1, "tcp", new InetSocketAddress("127.0.0.1", 0), false, List.of(OPEN, LOCKED)));
        other = target.addPort(new Port(2, "tcp", new InetSocketAddress("127.0.0.1", 0), false, List.of(ELSEWHERE)));
        disc = target.addPort(new Port(3, "tcp", new InetSocketAddress("127.0.0.1", 0), false, List.of()));
    }

    @AfterEach
    void stop() throws IOException {
        target.close();
    }

    /** Reads the discovery log as nvme-cli does: header, then the entries, then the header again. */
    static List<DiscoveryLogEntry> readLog(RawHost h, long[] genctr) throws IOException {
        ByteBuffer header = getLog(h, 0, 1024);
        long numrec = header.getLong(DiscoveryLogEntry.NUMREC_OFFSET);
        genctr[0] = header.getLong(DiscoveryLogEntry.GENCTR_OFFSET);
        List<DiscoveryLogEntry> entries = new ArrayList<>();
        if (numrec > 0) {
            ByteBuffer body = getLog(h, 1024, (int) numrec * 1024);
            for (int i = 0; i < numrec; i++) {
                entries.add(new DiscoveryLogEntry().wrap(body, i * 1024));
            }
        }
        assertEquals(genctr[0], getLog(h, 0, 1024).getLong(0), "generation stable between reads");
        return entries;
    }

    static ByteBuffer getLog(RawHost h, long offset, int length) throws IOException {
        h.send(h.capsule(s -> {
            s.opcode(AdminOpcode.GET_LOG_PAGE.code).psdt(1).sgl(0, length, Sgl.TCP_TRANSPORT);
            LogPage.request(s, LogPage.DISCOVERY, offset, length, false);
        }, null));
        RawHost.Received data = h.receive();
        assertEquals(PduType.C2H_DATA, data.type());
        int pdo = data.u8(Pdu.PDO_OFFSET);
        ByteBuffer out = Flyweight.allocate(length);
        out.put(0, data.bytes(), pdo, length);
        assertTrue(h.receive().cqe().status().isSuccess());
        return out;
    }

    @Test
    void discoveryOnEveryPortListsWhatTheHostMaySee() throws IOException {
        for (Port p : List.of(io, disc)) {
            try (RawHost h = new RawHost(p.bound())) {
                h.bringUpAdmin(Nqn.DISCOVERY);
                h.send(h.capsule(s -> s.opcode(AdminOpcode.IDENTIFY.code).psdt(1).identifyCns(IdentifyCns.CONTROLLER)
                        .sgl(0, 4096, Sgl.TCP_TRANSPORT), null));
                RawHost.Received id = h.receive();
                IdentifyController ic = new IdentifyController().wrap(id.bytes(), id.u8(Pdu.PDO_OFFSET));
                assertEquals(IdentifyController.CNTRLTYPE_DISCOVERY, ic.controllerType());
                assertEquals(Nqn.DISCOVERY, ic.subsystemNqn());
                assertEquals(0, ic.nn());
                h.receive();

                long[] gen = new long[1];
                List<DiscoveryLogEntry> log = readLog(h, gen);
                if (p == io) {
                    // a port that serves subsystems tells of itself only, as nvmet's does (attack 6)
                    assertEquals(2, log.size(), "this discovery subsystem and OPEN on port 1; not port 2's ELSEWHERE");
                    assertEquals(OPEN, log.get(1).subsystemNqn());
                    assertEquals(1, log.get(1).portId());
                    continue;
                }
                assertEquals(3, log.size(), "on the discovery-only port: this discovery subsystem, OPEN on port 1,"
                        + " ELSEWHERE on port 2");
                DiscoveryLogEntry self = log.get(0);
                assertEquals(DiscoveryLogEntry.SUBTYPE_CURRENT_DISCOVERY, self.subtype());
                assertEquals(p.id(), self.portId());
                assertEquals(Nqn.DISCOVERY, self.subsystemNqn());
                DiscoveryLogEntry open = log.get(1);
                assertEquals(DiscoveryLogEntry.TRTYPE_TCP, open.trtype());
                assertEquals(DiscoveryLogEntry.ADRFAM_IPV4, open.adrfam());
                assertEquals(DiscoveryLogEntry.SUBTYPE_NVM, open.subtype());
                assertEquals(1, open.portId());
                assertEquals(0xffff, open.cntlid());
                assertEquals(32, open.asqsz());
                assertEquals(OPEN, open.subsystemNqn());
                assertEquals("127.0.0.1", open.traddr());
                assertEquals(Integer.toString(io.bound().getPort()), open.trsvcid());
                assertEquals(ELSEWHERE, log.get(2).subsystemNqn());
                assertEquals(2, log.get(2).portId());

                // partial reads: the second entry alone, at its offset
                ByteBuffer second = getLog(h, 1024 + 2 * 1024, 1024);
                assertEquals(ELSEWHERE, new DiscoveryLogEntry().<DiscoveryLogEntry>wrap(second, 0).subsystemNqn());
                // any window of the log is those bytes of the whole: across the header's end, within and
                // across records, and running past the log's end (zero filled)
                ByteBuffer whole = getLog(h, 0, 4 * 1024);
                for (int[] w : new int[][] {{1016, 16}, {1024 + 256, 8}, {2044, 1032}, {3072 + 1020, 4}, {3072, 2048}}) {
                    ByteBuffer part = getLog(h, w[0], w[1]);
                    for (int i = 0; i < w[1]; i++) {
                        int at = w[0] + i;
                        assertEquals(at < whole.capacity() ? whole.get(at) : 0, part.get(i), "window at " + w[0] + ", byte " + i);
                    }
                }
                // and an offset past it is Invalid Field
                h.send(h.capsule(s -> {
                    s.opcode(AdminOpcode.GET_LOG_PAGE.code).psdt(1).sgl(0, 1024, Sgl.TCP_TRANSPORT);
                    LogPage.request(s, LogPage.DISCOVERY, 4 * 1024, 1024, false);
                }, null));
                assertEquals(Status.INVALID_FIELD.withDnr(false), h.receive().cqe().status().withDnr(false));
                // keep alive works on discovery controllers
                assertTrue(h.command(RawHost::keepAlive, null).cqe().status().isSuccess());
                // and an I/O command set command does not
                assertEquals(Status.INVALID_OPCODE, h.command(s -> s.opcode(AdminOpcode.ABORT.code).psdt(1), null).cqe()
                        .status().withDnr(true));
            }
        }
    }

    @Test
    void generationChangesWithTheSetOfEntries() throws IOException {
        try (RawHost h = new RawHost(disc.bound())) {
            h.bringUpAdmin(Nqn.DISCOVERY);
            long[] before = new long[1];
            int n = readLog(h, before).size();
            target.subsystem(LOCKED).allowHost(RawHost.HOST_NQN);
            long[] after = new long[1];
            List<DiscoveryLogEntry> log = readLog(h, after);
            assertNotEquals(before[0], after[0]);
            assertEquals(n + 1, log.size());
            assertTrue(log.stream().anyMatch(e -> e.subsystemNqn().equals(LOCKED)));
        }
    }

    /** Ports on every address are reported at the address the host used, never as 0.0.0.0. */
    @Test
    void wildcardPortsReportTheAddressTheHostUsed() throws IOException {
        Port any = target.addPort(new Port(4, "tcp", new InetSocketAddress("0.0.0.0", 0), false, List.of(OPEN)));
        Port anyDisc = target.addPort(new Port(5, "tcp", new InetSocketAddress("0.0.0.0", 0), false, List.of()));
        try (RawHost h = new RawHost(new InetSocketAddress("127.0.0.1", anyDisc.bound().getPort()))) {
            h.bringUpAdmin(Nqn.DISCOVERY);
            List<DiscoveryLogEntry> log = readLog(h, new long[1]);
            DiscoveryLogEntry e = log.stream().filter(x -> x.portId() == 4).findFirst().orElseThrow();
            assertEquals("127.0.0.1", e.traddr());
            assertEquals(Integer.toString(any.bound().getPort()), e.trsvcid());
            assertEquals("127.0.0.1", log.get(0).traddr(), "the current discovery entry too");
        }
    }

    @Test
    void subsystemsAreOnlyReachableThroughTheirPorts() throws IOException {
        try (RawHost h = new RawHost(disc.bound())) {
            h.icreq();
            CompletionQueueEntry cqe = h.connect(0, OPEN, RawHost.HOST_NQN, 0xffff).cqe();
            assertEquals(Status.CONNECT_INVALID_PARAMETERS, cqe.status());
            assertEquals(256, cqe.dw0() & 0xffff);
        }
        try (RawHost h = new RawHost(other.bound())) {
            h.icreq();
            assertEquals(Status.CONNECT_INVALID_PARAMETERS, h.connect(0, OPEN, RawHost.HOST_NQN, 0xffff).cqe().status());
        }
        try (RawHost h = new RawHost(io.bound())) {
            assertTrue(h.bringUpAdmin(OPEN) > 0);
        }
        try (RawHost admin = new RawHost(disc.bound()); RawHost ioq = new RawHost(disc.bound())) {
            int cntlid = admin.bringUpAdmin(Nqn.DISCOVERY);
            ioq.icreq();
            CompletionQueueEntry cqe = ioq.connect(1, Nqn.DISCOVERY, RawHost.HOST_NQN, cntlid).cqe();
            assertEquals(Status.CONNECT_INVALID_PARAMETERS, cqe.status(), "no I/O queues on discovery controllers");
        }
    }
}
