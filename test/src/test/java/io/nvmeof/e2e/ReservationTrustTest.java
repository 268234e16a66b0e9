package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.initiator.Reservations;
import io.nvmeof.initiator.Reservations.Type;
import io.nvmeof.protocol.Reservation;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.protocol.auth.DhchapKey;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reservations against hosts that are let in but not trusted (issue 47, items 12 and 13), with the
 * target as users run it (the launcher's process, its state directory and management socket) and
 * our initiator as the hosts: a host presenting another's Host ID is refused at Connect while the
 * other's registration stands, connected or not, whatever keys it holds; one host NQN cannot fill
 * a namespace's registrant table; and the operator sees and clears registrations through the
 * management API and its CLI, across restarts.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ReservationTrustTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final String NQN = "nqn.2026-11.io.nvmeof:resv-trust";
    static final String A = "nqn.2026-11.io.nvmeof:host-a";
    static final String B = "nqn.2026-11.io.nvmeof:host-b";
    static final UUID ID_A = UUID.fromString("0a0a0a0a-0000-4000-8000-00000000000a");
    static final UUID ID_B = UUID.fromString("0b0b0b0b-0000-4000-8000-00000000000b");
    static final SecureRandom RANDOM = new SecureRandom();

    @TempDir
    Path dir;

    private Path config(String hosts) throws IOException {
        Path c = dir.resolve("target.json");
        Files.writeString(c, """
                {"ports": [{"portid": 1, "trtype": "tcp", "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "allowed_hosts": ["%s", "%s"],
                    "namespaces": [{"nsid": 1, "backend": "ram", "size": "1M",
                                    "uuid": "3e0c2a47-6d0f-4a53-9a21-7c5b1e2f4d10"}]}]%s}
                """.formatted(NQN, NQN, A, B, hosts));
        Files.setPosixFilePermissions(c, PosixFilePermissions.fromString("rw-------")); // it may hold keys
        return c;
    }

    private TargetProcess start(Path config) throws Exception {
        return TargetProcess.startManaged(dir, config);
    }

    private Path socket() {
        return TargetProcess.managementSocket(dir);
    }

    private static Controller connect(TargetProcess t, String nqn, UUID id, DhchapKey key) throws IOException {
        ConnectOptions o = ConnectOptions.defaults().identity(HostIdentity.of(nqn, id)).ioQueues(1)
                .controllerLossTimeout(Duration.ZERO);
        return Nvmeof.connect(t.uri(NQN), key == null ? o : o.dhchapSecret(key));
    }

    /** The status a reservation command completed with. */
    private static Status status(java.util.concurrent.CompletableFuture<?> f) throws Exception {
        try {
            f.get(60, TimeUnit.SECONDS);
            return Status.SUCCESS;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof NvmeStatusException s) {
                return s.status();
            }
            throw e;
        }
    }

    private static Status register(Reservations r, long key) throws Exception {
        return status(r.registerAsync(Reservation.REGISTER, false, Reservation.CPTPL_SET, 0, key));
    }

    private static Status write(Controller c) throws Exception {
        try {
            c.namespace(1).write(0, ByteBuffer.allocateDirect(4096));
            return Status.SUCCESS;
        } catch (NvmeStatusException e) {
            return e.status();
        }
    }

    private JsonNode rpc(String method, String params) throws IOException {
        return ManagementApiTest.rpc(socket(), method, params);
    }

    /**
     * Item 12: B, let in with keys of its own, presents A's Host ID while A is away. It is refused
     * at Connect as a duplicate Host ID is while A is connected (Connect Invalid Parameters at
     * HOSTID), before and after a restart, until the operator clears A's registration. B under its
     * own Host ID is a host like any other: A's Write Exclusive keeps its writes out.
     */
    @Test
    void aHostIdRegisteredByAnotherNqnIsRefusedAtConnectUntilTheOperatorClearsIt() throws Exception {
        DhchapKey keyA = DhchapKey.create(DhchapKey.randomSecret(32, RANDOM), DhchapHash.SHA256, A);
        DhchapKey keyB = DhchapKey.create(DhchapKey.randomSecret(32, RANDOM), DhchapHash.SHA256, B);
        Path config = config(",\n \"hosts\": [{\"nqn\": \"%s\", \"dhchap_key\": \"%s\"}, {\"nqn\": \"%s\", \"dhchap_key\": \"%s\"}]"
                .formatted(A, keyA.format(), B, keyB.format()));
        try (TargetProcess t = start(config)) {
            try (Controller a = connect(t, A, ID_A, keyA)) {
                assertEquals(Status.SUCCESS, register(a.namespace(1).reservations(), 0xaaaa));
                a.namespace(1).reservations().acquire(0xaaaa, Type.WRITE_EXCLUSIVE);
            }
            // A is away; B, with its own valid key, claims A's Host ID
            IOException e = assertThrows(IOException.class, () -> connect(t, B, ID_A, keyB).close(),
                    "B connected as A's registrant");
            assertTrue(String.valueOf(e.getMessage()).contains("Connect Invalid Parameters"), e.toString());
            assertTrue(t.err().contains("host ID " + ID_A) && t.err().contains("registered by host " + A), t.err());

            try (Controller b = connect(t, B, ID_B, keyB)) {
                assertEquals(Status.RESERVATION_CONFLICT, write(b), "A's Write Exclusive holds against B");
            }
            // restarted: the kept registration still binds A's Host ID to A
            t.process.destroyForcibly();
            t.process.waitFor();
        }
        try (TargetProcess t = start(config)) {
            IOException e = assertThrows(IOException.class, () -> connect(t, B, ID_A, keyB).close(),
                    "B connected as A's registrant after a restart");
            assertTrue(String.valueOf(e.getMessage()).contains("Connect Invalid Parameters"), e.toString());
            // the operator clears A's stale registration: its Host ID is free, and the reservation went with it
            JsonNode r = rpc("clear_registrations", "{\"nqn\": \"" + NQN + "\", \"nsid\": 1, \"host\": \"" + A + "\"}");
            assertEquals(1, r.at("/result/removed").size(), r.toString());
            try (Controller b = connect(t, B, ID_A, keyB)) {
                assertEquals(Status.SUCCESS, write(b));
            }
            try (Controller a = connect(t, A, ID_A, keyA)) {
                assertEquals(0, a.namespace(1).reservations().report().registered());
            }
            t.assertNoLeaks();
        }
    }

    /**
     * Item 13: one host NQN registers under as many Host IDs as it likes; past two, Register is
     * Reservation Conflict and changes nothing, so the legitimate host still registers. The
     * operator sees every registration (get_reservations, {@code nvmeof reservations show}) and
     * clears the greedy host's ({@code nvmeof reservations clear}); what it cleared stays cleared
     * across a restart. Bad parameters are refused naming the field.
     */
    @Test
    void oneHostNqnCannotFillTheRegistrantTableAndTheOperatorClearsIt() throws Exception {
        Path config = config("");
        List<Status> greedy = new ArrayList<>();
        try (TargetProcess t = start(config)) {
            for (int i = 0; i < 16; i++) {
                try (Controller m = connect(t, B, new UUID(0xbadL, i), null)) {
                    greedy.add(register(m.namespace(1).reservations(), 0xb000 + i));
                }
            }
            List<Status> want = new ArrayList<>(List.of(Status.SUCCESS, Status.SUCCESS));
            while (want.size() < 16) {
                want.add(Status.RESERVATION_CONFLICT);
            }
            assertEquals(want, greedy, "two registrations per host NQN");
            try (Controller a = connect(t, A, ID_A, null)) {
                assertEquals(Status.SUCCESS, register(a.namespace(1).reservations(), 0xaaaa), "the legitimate host");
                Reservations.Report r = a.namespace(1).reservations().report();
                assertEquals(3, r.registered());
                assertEquals(3, r.generation(), "the refused Registers changed nothing");
            }
            t.process.destroyForcibly();
            t.process.waitFor();
        }
        try (TargetProcess t = start(config)) {
            String s = socket().toString();
            TargetProcess.Run run = TargetProcess.cli(60, "reservations", "show", "--socket", s, "--subsystem", NQN,
                    "--nsid", "1");
            assertEquals(0, run.exit(), run.err());
            JsonNode shown = JSON.readTree(run.out());
            assertEquals(3, shown.get("registrants").size(), run.out());
            assertEquals(B, shown.at("/registrants/0/host_nqn").asText(), run.out());
            assertEquals(new UUID(0xbadL, 0).toString(), shown.at("/registrants/0/host_id").asText(), run.out());
            assertEquals("0xb000", shown.at("/registrants/0/key").asText(), run.out());
            assertTrue(shown.get("ptpl").asBoolean(), run.out());

            // bad parameters: refused, the field named, nothing changed
            JsonNode e = rpc("clear_registrations", "{\"nqn\": \"" + NQN + "\"}");
            assertEquals(-32602, e.at("/error/code").asInt(), e.toString());
            assertEquals("params.nsid", e.at("/error/data/field").asText(), e.toString());
            e = rpc("clear_registrations", "{\"nqn\": \"" + NQN + "\", \"nsid\": 7}");
            assertEquals("params.nsid", e.at("/error/data/field").asText(), e.toString());
            e = rpc("clear_registrations", "{\"nqn\": \"nqn.2026-11.io.nvmeof:none\", \"nsid\": 1}");
            assertEquals("params.nqn", e.at("/error/data/field").asText(), e.toString());
            e = rpc("clear_registrations", "{\"nqn\": \"" + NQN + "\", \"nsid\": 1, \"host_id\": \"not-a-uuid\"}");
            assertEquals("params.host_id", e.at("/error/data/field").asText(), e.toString());
            e = rpc("clear_registrations", "{\"nqn\": \"" + NQN + "\", \"nsid\": 1, \"host\": \"nqn.2026-11.io.nvmeof:x\"}");
            assertEquals("params.host", e.at("/error/data/field").asText(), e.toString());
            e = rpc("get_reservations", "{\"nqn\": \"" + NQN + "\", \"nsid\": 1, \"hostnqn\": \"" + B + "\"}");
            assertEquals("params.hostnqn", e.at("/error/data/field").asText(), e.toString());
            assertEquals(3, rpc("get_reservations", "{\"nqn\": \"" + NQN + "\", \"nsid\": 1}")
                    .at("/result/registrants").size());

            run = TargetProcess.cli(60, "reservations", "clear", "--socket", s, "--subsystem", NQN, "--nsid", "1",
                    "--host", B);
            assertEquals(0, run.exit(), run.err());
            assertEquals(2, JSON.readTree(run.out()).get("removed").size(), run.out());
            try (Controller a = connect(t, A, ID_A, null)) {
                Reservations.Report r = a.namespace(1).reservations().report();
                assertEquals(List.of(ID_A), r.registrants().stream().map(Reservations.Registrant::hostId).toList());
            }
            // B may register again, up to its two
            try (Controller m = connect(t, B, new UUID(0xbadL, 99), null)) {
                assertEquals(Status.SUCCESS, register(m.namespace(1).reservations(), 0xb099));
            }
            assertEquals(0, t.stop());
            t.assertNoLeaks();
        }
        try (TargetProcess t = start(config)) {
            JsonNode r = rpc("get_reservations", "{\"nqn\": \"" + NQN + "\", \"nsid\": 1}");
            assertEquals(2, r.at("/result/registrants").size(), "the clear was kept: " + r);
            assertEquals(0, t.stop());
        }
    }
}
