package io.nvmeof.e2e;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.Command;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.protocol.AnaLog;
import io.nvmeof.protocol.IdentifyController;
import io.nvmeof.protocol.LogPage;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Registers;
import io.nvmeof.protocol.Status;
import io.nvmeof.target.AnaState;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Port;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.RamBackend;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Asymmetric Namespace Access as NVMe 1.4 and Linux nvmet have it: two ports to one subsystem,
 * namespace 1 in ANA group 1 and namespace 2 in group 2, each group optimized on one port and
 * non-optimized on the other. What Identify reports, the ANA log per port (and its RGO form),
 * the change notice, and the path statuses I/O gets where a group cannot be served.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class AnaTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:ana";
    Target target;
    Port a;
    Port b;

    @BeforeEach
    void start() throws IOException {
        target = new Target();
        Subsystem s = new Subsystem(NQN, "ANA0001", "ana", "1.0");
        s.allowAnyHost(true);
        Namespace one = new Namespace(NQN, 1, new RamBackend(1 << 20, 4096), false, null);
        Namespace two = new Namespace(NQN, 2, new RamBackend(1 << 20, 4096), false, null);
        two.anaGroup(2);
        s.addNamespace(one);
        s.addNamespace(two);
        target.addSubsystem(s);
        a = target.addPort(new Port(1, "tcp", new InetSocketAddress("127.0.0.1", 0), false, List.of(NQN)));
        b = target.addPort(new Port(2, "tcp", new InetSocketAddress("127.0.0.1", 0), false, List.of(NQN)));
        target.anaState(a, 1, AnaState.OPTIMIZED);
        target.anaState(a, 2, AnaState.NON_OPTIMIZED);
        target.anaState(b, 1, AnaState.NON_OPTIMIZED);
        target.anaState(b, 2, AnaState.OPTIMIZED);
    }

    @AfterEach
    void stop() throws IOException {
        target.close();
    }

    Controller connect(Port p) throws IOException {
        return Nvmeof.connect("nvme+tcp://127.0.0.1:" + p.bound().getPort() + "/" + NQN,
                ConnectOptions.defaults().ioQueues(1).controllerLossTimeout(Duration.ZERO));
    }

    static Status read(Controller c, int nsid) throws IOException {
        try {
            c.io(Command.of("Read", s -> s.opcode(NvmOpcode.READ.code).nsid(nsid)).dataIn(ByteBuffer.allocate(4096), 4096));
            return Status.SUCCESS;
        } catch (NvmeStatusException e) {
            return e.status();
        }
    }

    /** The ANA log through {@code c}; with {@code groupsOnly} the RGO form (LSP bit 0). */
    static ByteBuffer anaLog(Controller c, boolean groupsOnly) throws IOException {
        int length = 4096;
        ByteBuffer page = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        Command cmd = Command.getLogPage(LogPage.ANA, 0, page, length, false);
        if (groupsOnly) {
            cmd.cdw(10, LogPage.ANA | AnaLog.LSP_RGO << 8 | (length / 4 - 1) << 16);
        }
        c.admin(cmd);
        return page;
    }

    /** "group:state:nsid,nsid" per descriptor, in order. */
    static String describe(ByteBuffer log) {
        StringBuilder out = new StringBuilder();
        int at = AnaLog.HEADER_SIZE;
        for (int i = 0; i < AnaLog.groupCount(log); i++) {
            out.append(i == 0 ? "" : " ").append(AnaLog.group(log, at)).append(':').append(AnaLog.state(log, at)).append(':');
            int n = AnaLog.nsidCount(log, at);
            for (int k = 0; k < n; k++) {
                out.append(k == 0 ? "" : ",").append(AnaLog.nsid(log, at, k));
            }
            at += AnaLog.DESCRIPTOR_SIZE + 4 * n;
        }
        return out.toString();
    }

    @Test
    void identifyReportsAnaAsNvme14() throws IOException {
        try (Controller c = connect(a)) {
            IdentifyController id = c.identify();
            assertEquals(Registers.VERSION_1_4, id.version());
            assertEquals(1 << 1 | 1 << 3, id.cmic() & 0xb, "CMIC: multi-controller and ANA reporting");
            assertTrue((id.oaes() & 1 << 11) != 0, "OAES: ANA change notices");
            assertEquals(10, id.anatt());
            assertEquals(0x1f, id.anacap());
            assertEquals(128, id.anagrpmax());
            assertEquals(128, id.nanagrpid());
            assertEquals(1024, id.mnan());
            assertEquals(1, c.identifyNamespace(1).anagrpid());
            assertEquals(2, c.identifyNamespace(2).anagrpid());
            assertEquals(1, c.identifyNamespace(2).nmic() & 1, "NMIC: may be shared");
        }
    }

    @Test
    void eachPortReportsItsOwnStatesAndTheGroupsOnlyFormHasNoNamespaces() throws IOException {
        try (Controller ca = connect(a); Controller cb = connect(b)) {
            ByteBuffer la = anaLog(ca, false);
            assertEquals("1:1:1 2:2:2", describe(la));
            assertEquals("1:2:1 2:1:2", describe(anaLog(cb, false)));
            ByteBuffer rgo = anaLog(ca, true);
            assertEquals("1:1: 2:2:", describe(rgo));
            assertEquals(AnaLog.changeCount(la), AnaLog.changeCount(rgo));
            assertEquals(Status.SUCCESS, read(ca, 1));
            assertEquals(Status.SUCCESS, read(ca, 2)); // non-optimized still serves
            assertEquals(Status.SUCCESS, read(cb, 1));
        }
    }

    @Test
    void aChangeToInaccessibleIsAnnouncedAndIoGetsThePathStatusWhileTheOtherPathServes() throws IOException {
        try (Controller ca = connect(a); Controller cb = connect(b)) {
            List<Controller.AsyncEvent> eventsA = new CopyOnWriteArrayList<>();
            List<Controller.AsyncEvent> eventsB = new CopyOnWriteArrayList<>();
            ca.onEvent(eventsA::add);
            cb.onEvent(eventsB::add);
            long before = AnaLog.changeCount(anaLog(ca, false));
            target.anaState(a, 1, AnaState.INACCESSIBLE);
            await().atMost(Duration.ofSeconds(10)).until(() -> !eventsA.isEmpty());
            Controller.AsyncEvent e = eventsA.get(0);
            assertEquals(2, e.type());
            assertEquals(3, e.info());
            assertEquals(LogPage.ANA, e.logPage());
            ByteBuffer log = anaLog(ca, false);
            assertTrue(AnaLog.changeCount(log) > before);
            assertEquals("1:3:1 2:2:2", describe(log)); // Get Log Page answers on an inaccessible path
            Status s = read(ca, 1);
            assertEquals(Status.ANA_INACCESSIBLE, s);
            assertTrue(!s.dnr(), "a path status lets the host retry elsewhere");
            assertEquals(1, ca.identifyNamespace(1).anagrpid()); // and Identify
            assertEquals(Status.SUCCESS, read(ca, 2));
            assertEquals(Status.SUCCESS, read(cb, 1));
            assertTrue(eventsB.isEmpty(), "port 2's controller was told of port 1's change");

            target.anaState(a, 1, AnaState.PERSISTENT_LOSS);
            assertEquals(Status.ANA_PERSISTENT_LOSS, read(ca, 1));
            target.anaState(a, 1, AnaState.OPTIMIZED);
            assertEquals(Status.SUCCESS, read(ca, 1));
            await().atMost(Duration.ofSeconds(10)).until(() -> eventsA.size() >= 2);
        }
    }

    @Test
    void aGroupLeftInChangeGoesInaccessibleWithinAnatt() throws IOException {
        try (Controller ca = connect(a)) {
            target.anaState(a, 2, AnaState.CHANGE);
            assertEquals(Status.ANA_TRANSITION, read(ca, 2));
            long t0 = System.nanoTime();
            await().atMost(Duration.ofSeconds(15)).until(() -> a.anaState(2) == AnaState.INACCESSIBLE);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms < 10_000, "left in change for " + ms + " ms, ANATT is 10 s");
            assertEquals(Status.ANA_INACCESSIBLE, read(ca, 2));
            assertEquals("1:1:1 2:3:2", describe(anaLog(ca, false)));
        }
    }
}
