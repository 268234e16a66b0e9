package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.daemon.config.ConfigApplier;
import io.nvmeof.daemon.config.ConfigLoader;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.Command;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.initiator.Reservations;
import io.nvmeof.initiator.Reservations.Type;
import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.FeatureId;
import io.nvmeof.protocol.IdentifyNamespace;
import io.nvmeof.protocol.Status;
import io.nvmeof.target.Target;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reservations between two hosts through our initiator's API, over NVMe/TCP to a target in this
 * process: the state machine, what each type lets the other host do, the notices, fencing by
 * preempt-and-abort, one host's two controllers as one registrant, and an impostor refused.
 * {@link #persistThroughPowerLoss} runs the launcher as a process, kills it, and finds the
 * reservation again.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ReservationsTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:resv";
    static final HostIdentity A = HostIdentity.of("nqn.2026-11.io.nvmeof:host-a", UUID.fromString("0a0a0a0a-0000-4000-8000-00000000000a"));
    static final HostIdentity B = HostIdentity.of("nqn.2026-11.io.nvmeof:host-b", UUID.fromString("0b0b0b0b-0000-4000-8000-00000000000b"));
    static final long KEY_A = 0xaaaa;
    static final long KEY_B = 0xbbbb;
    Target target;
    int port;

    @BeforeEach
    void start() throws IOException {
        target = new Target();
        new ConfigApplier(target).apply(ConfigLoader.parse("""
                {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "namespaces": [{"nsid": 1, "backend": "ram", "size": "1M"}]}]}
                """.formatted(NQN, NQN)));
        port = target.ports().get(0).bound().getPort();
    }

    @AfterEach
    void stop() throws IOException {
        target.close();
    }

    Controller connect(HostIdentity host) throws IOException {
        return Nvmeof.connect("nvme+tcp://127.0.0.1:" + port + "/" + NQN, ConnectOptions.defaults()
                .identity(host).ioQueues(1).controllerLossTimeout(Duration.ZERO));
    }

    static Status status(IoCall call) throws IOException {
        try {
            call.run();
            return Status.SUCCESS;
        } catch (NvmeStatusException e) {
            return e.status();
        }
    }

    interface IoCall {
        void run() throws IOException;
    }

    static Status write(BlockDevice d) throws IOException {
        return status(() -> d.write(0, ByteBuffer.allocateDirect(4096)));
    }

    static Status read(BlockDevice d) throws IOException {
        return status(() -> d.read(0, ByteBuffer.allocateDirect(4096)));
    }

    @Test
    void twoHostsThroughTheStateMachine() throws Exception {
        try (Controller a = connect(A); Controller b = connect(B)) {
            IdentifyNamespace id = a.identifyNamespace(1);
            assertEquals(0xfe, id.rescap(), "every type and IEKEY; no PTPL without a state directory");
            assertTrue((a.identify().oncs() & 1 << 5) != 0, "ONCS: reservations");
            assertEquals(1, a.identify().ctratt() & 1, "CTRATT: 128-bit Host Identifier");
            List<Controller.AsyncEvent> eventsA = new CopyOnWriteArrayList<>();
            a.onEvent(eventsA::add);
            BlockDevice da = a.namespace(1);
            BlockDevice db = b.namespace(1);
            Reservations ra = da.reservations();
            Reservations rb = db.reservations();

            ra.register(KEY_A);
            rb.register(KEY_B);
            ra.register(KEY_A); // again with the same key: no error
            assertEquals(Status.RESERVATION_CONFLICT, status(() -> rb.register(KEY_A)), "registered: another key conflicts");
            Reservations.Report r = ra.report();
            assertEquals(2, r.registered());
            assertEquals(2, r.generation());
            assertNull(r.type());
            assertEquals(List.of(A.hostId(), B.hostId()), r.registrants().stream().map(Reservations.Registrant::hostId).toList());

            // Write Exclusive by A: B reads, cannot write; A does both
            ra.acquire(KEY_A, Type.WRITE_EXCLUSIVE);
            assertEquals(Status.RESERVATION_CONFLICT, write(db));
            assertEquals(Status.SUCCESS, read(db));
            assertEquals(Status.SUCCESS, write(da));
            assertEquals(Status.RESERVATION_CONFLICT, status(() -> rb.acquire(KEY_B, Type.WRITE_EXCLUSIVE)));
            assertEquals(Status.SUCCESS, status(() -> rb.release(KEY_B, Type.WRITE_EXCLUSIVE)),
                    "releasing what B does not hold: no error, no effect");
            assertEquals(Type.WRITE_EXCLUSIVE, ra.report().type());
            assertEquals(Status.INVALID_FIELD, status(() -> ra.release(KEY_A, Type.EXCLUSIVE_ACCESS)), "another type");
            // registrants only: B, registered, writes
            ra.release(KEY_A, Type.WRITE_EXCLUSIVE);
            ra.acquire(KEY_A, Type.WRITE_EXCLUSIVE_REGISTRANTS_ONLY);
            assertEquals(Status.SUCCESS, write(db));

            // B fences A: preempt and abort, taking Exclusive Access; A loses its registration and hears of it
            rb.preempt(KEY_B, KEY_A, Type.EXCLUSIVE_ACCESS, true);
            r = rb.report();
            assertEquals(Type.EXCLUSIVE_ACCESS, r.type());
            assertEquals(List.of(B.hostId()), r.registrants().stream().map(Reservations.Registrant::hostId).toList());
            assertTrue(r.registrants().get(0).holds());
            assertEquals(Status.RESERVATION_CONFLICT, read(da));
            assertEquals(Status.RESERVATION_CONFLICT, write(da));
            assertEquals(Status.SUCCESS, write(db));
            Awaitility.await("A's reservation notice").atMost(Duration.ofSeconds(10))
                    .until(() -> eventsA.stream().anyMatch(e -> e.type() == 6 && e.logPage() == 0x80));
            // A can no longer act as a registrant
            assertEquals(Status.RESERVATION_CONFLICT, status(() -> ra.release(KEY_A, Type.EXCLUSIVE_ACCESS)));

            // B clears: nothing left, everyone writes
            rb.clear(KEY_B);
            r = ra.report();
            assertEquals(0, r.registered());
            assertNull(r.type());
            assertEquals(Status.SUCCESS, write(da));
        }
    }

    @Test
    void aHostsTwoControllersAreOneRegistrantAndAnImpostorIsRefused() throws Exception {
        try (Controller a1 = connect(A); Controller a2 = connect(A)) {
            a1.namespace(1).reservations().register(KEY_A);
            Reservations via2 = a2.namespace(1).reservations();
            via2.acquire(KEY_A, Type.EXCLUSIVE_ACCESS); // the same host through its other controller
            Reservations.Report r = via2.report();
            assertEquals(1, r.registered());
            assertEquals(0xffff, r.registrants().get(0).cntlid(), "a registrant is a host, not a controller");
            assertEquals(Status.SUCCESS, write(a1.namespace(1)));
            assertEquals(Status.SUCCESS, write(a2.namespace(1)));

            HostIdentity impostor = HostIdentity.of("nqn.2026-11.io.nvmeof:impostor", A.hostId());
            IOException e = assertThrows(IOException.class, () -> connect(impostor).close());
            assertTrue(String.valueOf(e.getMessage()).contains("Connect Invalid Parameters"), e.toString());
        }
    }

    @Test
    void notificationMaskAndPersistenceFeatures() throws Exception {
        try (Controller a = connect(A); Controller b = connect(B)) {
            List<Controller.AsyncEvent> eventsA = new CopyOnWriteArrayList<>();
            a.onEvent(eventsA::add);
            // A masks "registration preempted" (bit 1) on namespace 1
            a.admin(Command.admin(AdminOpcode.SET_FEATURES, "Set Features").nsid(1)
                    .cdw(10, FeatureId.RESERVATION_NOTIFICATION_MASK).cdw(11, 1 << 1));
            Command get = Command.admin(AdminOpcode.GET_FEATURES, "Get Features").nsid(1)
                    .cdw(10, FeatureId.RESERVATION_NOTIFICATION_MASK);
            a.admin(get);
            assertEquals(1 << 1, get.result());
            Command ptpl = Command.admin(AdminOpcode.SET_FEATURES, "Set Features").nsid(1)
                    .cdw(10, FeatureId.RESERVATION_PERSISTENCE).cdw(11, 1);
            NvmeStatusException x = assertThrows(NvmeStatusException.class, () -> a.admin(ptpl));
            assertEquals(Status.INVALID_FIELD, x.status(), "no PTPL without a place to keep it");

            // masked: A's preemption is not logged; the release after it is, and is the first notice
            // A's event reports (the mask itself is checked on the wire by ReservationCommandsTest)
            a.namespace(1).reservations().register(KEY_A);
            b.namespace(1).reservations().register(KEY_B);
            b.namespace(1).reservations().preempt(KEY_B, KEY_A, Type.WRITE_EXCLUSIVE, false);
            a.namespace(1).reservations().register(KEY_A);
            b.namespace(1).reservations().release(KEY_B, Type.WRITE_EXCLUSIVE);
            b.namespace(1).reservations().acquire(KEY_B, Type.WRITE_EXCLUSIVE_REGISTRANTS_ONLY);
            b.namespace(1).reservations().release(KEY_B, Type.WRITE_EXCLUSIVE_REGISTRANTS_ONLY); // A: released
            Awaitility.await("A's reservation notice").atMost(Duration.ofSeconds(10))
                    .until(() -> eventsA.stream().anyMatch(e -> e.type() == 6 && e.logPage() == 0x80));
        }
    }

    @Test
    void persistThroughPowerLoss(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("disk.img");
        try (var f = java.nio.channels.FileChannel.open(data, java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.WRITE)) {
            f.truncate(0).write(ByteBuffer.allocate(1), (1 << 20) - 1);
        }
        Path config = dir.resolve("target.json");
        Files.writeString(config, """
                {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "namespaces": [{"nsid": 1, "backend": "file", "path": "%s",
                    "uuid": "5f7d0c6e-2b0a-4c4e-9a53-6c1f3a9b0d11"}]}]}
                """.formatted(NQN, NQN, data));
        Path state = dir.resolve("state");
        String hostA = "--hostnqn=" + A.hostNqn();
        String idA = "--hostid=" + A.hostId();
        String reportBefore;
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, "--config", config.toString(), "--state-dir", state.toString())) {
            String uri = t.uri(NQN);
            TargetProcess.Run r = TargetProcess.cli(60, "resv-register", uri, hostA, idA, "--nrkey=0xaaaa", "--cptpl=3");
            assertEquals(0, r.exit(), r.err());
            r = TargetProcess.cli(60, "resv-acquire", uri, hostA, idA, "--crkey=0xaaaa", "--rtype=1");
            assertEquals(0, r.exit(), r.err());
            r = TargetProcess.cli(60, "resv-report", uri, hostA, idA);
            assertEquals(0, r.exit(), r.err());
            reportBefore = r.out();
            assertTrue(reportBefore.contains("rtype     : 1") && reportBefore.contains("ptpls     : 1")
                    && reportBefore.contains("rkey       : aaaa"), reportBefore);
            t.process.destroyForcibly(); // no shutdown: a crash
            t.process.waitFor();
        }
        assertTrue(Files.isRegularFile(state.resolve("reservations.json")));
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, "--config", config.toString(), "--state-dir", state.toString())) {
            TargetProcess.Run r = TargetProcess.cli(60, "resv-report", t.uri(NQN), hostA, idA);
            assertEquals(0, r.exit(), r.err());
            assertEquals(reportBefore, r.out(), "the reservation as it was before the crash");
            // another host still cannot write
            r = TargetProcess.cli(60, "write", t.uri(NQN), "--hostnqn=" + B.hostNqn(), "--hostid=" + B.hostId(),
                    "--offset=0", "--input=" + config);
            assertTrue(r.exit() != 0 && r.err().contains("Reservation Conflict"), r.out() + r.err());
            assertEquals(0, t.stop());
        }
        Files.writeString(state.resolve("reservations.json"), "{\"version\": 1, \"namespaces\": {\"x\": {\"type\": 9}}}");
        IOException e = assertThrows(IOException.class, () -> TargetProcess.start(Fabric.TCP, dir, "--config",
                config.toString(), "--state-dir", state.toString()).close());
        assertTrue(e.getMessage().contains("reservations.json") && e.getMessage().contains("corrupt"), e.getMessage());
    }
}
