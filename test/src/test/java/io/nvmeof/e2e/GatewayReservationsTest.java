package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.Command;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.initiator.Reservations;
import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.FeatureId;
import io.nvmeof.protocol.Status;
import io.nvmeof.target.backend.CephCluster;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Reservations that hold across gateways: two gateways (target processes) of a gateway group
 * over one RBD image, host 1 through gateway a and host 2 through gateway b (each its own host
 * NQN and Host ID). What one does through one gateway, the other sees through the other, at once
 * (the change completes only once every gateway has it): registrations, the holder, a write
 * refused as a conflict, a Preempt and Abort, a release, a clear. Also the time from a change
 * completing at one gateway to its effect at the other's data path, and a Register's and an
 * Acquire's cost beside the same on a file namespace of one process.
 */
class GatewayReservationsTest {
    static final String NQN = "nqn.2026-12.io.nvmeof:gw-resv";
    @RegisterExtension
    static final CephCluster.PerClass CEPH = new CephCluster.PerClass();

    @Test
    void aReservationTakenThroughOneGatewayHoldsAtTheOther() throws Exception {
        CEPH.get().rbd("create", "--size", "8M", "rbd/resv");
        GroupGateway.Group group = new GroupGateway.Group(NQN, "resv", 3000, 2000, "a",
                Map.of("a", "127.0.0.1", "b", "127.0.0.1"));
        try (GroupGateway a = new GroupGateway(CEPH.dir(), group, "a", 1, CEPH.get(), "127.0.0.1", Ports.free(), List.of());
             GroupGateway b = new GroupGateway(CEPH.dir(), group, "b", 2, CEPH.get(), "127.0.0.1", Ports.free(), List.of())) {
            a.start();
            b.start();
            a.awaitRole("owner", Duration.ofSeconds(30));
            b.awaitRole("standby", Duration.ofSeconds(30));
            UUID id1 = UUID.fromString("11111111-1111-4111-8111-111111111111");
            UUID id2 = UUID.fromString("22222222-2222-4222-8222-222222222222");
            ConnectOptions o1 = ConnectOptions.defaults().ioQueues(1).reconnectDelay(Duration.ofSeconds(1))
                    .identity(HostIdentity.of("nqn.2014-08.org.nvmexpress:uuid:" + id1, id1));
            ConnectOptions o2 = ConnectOptions.defaults().ioQueues(1)
                    .identity(HostIdentity.of("nqn.2014-08.org.nvmexpress:uuid:" + id2, id2));
            try (Controller c1 = Nvmeof.connect(a.process.uri(NQN), o1);
                 Controller c2 = Nvmeof.connect(b.process.uri(NQN), o2)) {
                BlockDevice h1 = c1.namespace(1);
                BlockDevice h2 = c2.namespace(1);
                Reservations r1 = h1.reservations();
                Reservations r2 = h2.reservations();
                List<Controller.AsyncEvent> events1 = new CopyOnWriteArrayList<>();
                c1.onEvent(events1::add);
                r1.register(0xA1);
                r2.register(0xB2);
                Reservations.Report seenAtB = r2.report();
                assertEquals(2, seenAtB.registrants().size(), "b reports a's registration too: " + seenAtB);

                // Set Features Reservation Persistence through a: b reports PTPL on (the reservation
                // lives in the cluster, so each gateway offers it); and off again
                for (boolean on : new boolean[] {true, false}) {
                    c1.admin(Command.admin(AdminOpcode.SET_FEATURES, "Set Features 83h").nsid(1)
                            .cdw(10, FeatureId.RESERVATION_PERSISTENCE).cdw(11, on ? 1 : 0));
                    assertEquals(on, r2.report().ptpl(), "PTPL set to " + on + " through a, as b reports it");
                }

                long t0 = System.nanoTime();
                r1.acquire(0xA1, Reservations.Type.WRITE_EXCLUSIVE);
                NvmeStatusException conflict = assertThrows(NvmeStatusException.class, () -> h2.write(0, block(2)),
                        "host 2's write through b right after host 1 acquired through a");
                long seenUs = (System.nanoTime() - t0) / 1000;
                assertEquals(Status.RESERVATION_CONFLICT.sc(), conflict.status().sc(), conflict.toString());
                h2.read(0, ByteBuffer.allocateDirect(4096)); // Write Exclusive: reads stay open
                Reservations.Report r = r2.report();
                assertEquals(Reservations.Type.WRITE_EXCLUSIVE, r.type());
                assertTrue(r.registrants().stream().anyMatch(g -> g.hostId().equals(id1) && g.holds()), r.toString());
                h1.write(0, block(1)); // the holder writes through its gateway

                // host 2 preempts host 1 and aborts its commands, through the other gateway, while host 1
                // keeps 8 writes in flight through a over 64 blocks
                Writers writers = new Writers(h1, 8, 64);
                AtomicLong landed = writers.landed;
                AtomicLong refused = writers.refused;
                Awaitility.await("host 1 writing").atMost(Duration.ofSeconds(30)).until(() -> landed.get() > 100);
                events1.clear();
                r2.preempt(0xB2, 0xA1, Reservations.Type.WRITE_EXCLUSIVE, true);
                long landedAtPreempt = landed.get();
                for (int blk = 0; blk < 64; blk++) { // host 2 writes every block host 1 was writing, after the preempt
                    h2.write(blk * 4096L, block(2));
                }
                Awaitility.await("host 1's writes refused").atMost(Duration.ofSeconds(30)).until(() -> refused.get() > 50);
                writers.stop(Duration.ofSeconds(60));
                assertTrue(landed.get() <= landedAtPreempt + 8, "at most what was already in flight completed after the"
                        + " preempt: " + landedAtPreempt + " then " + landed.get());
                NvmeStatusException gone = assertThrows(NvmeStatusException.class, () -> h1.write(0, block(3)),
                        "host 1, preempted through b, writes through a");
                assertEquals(Status.RESERVATION_CONFLICT.sc(), gone.status().sc(), gone.toString());
                for (int blk = 0; blk < 64; blk++) {
                    ByteBuffer got = ByteBuffer.allocateDirect(4096);
                    h1.read(blk * 4096L, got);
                    assertEquals(block(2), got.flip(), "block " + blk + " holds host 2's write: none of host 1's landed"
                            + " after the preempt and abort completed");
                }
                System.out.println("preempt and abort through b while host 1 wrote through a: " + landedAtPreempt
                        + " writes of host 1's landed before it, " + (landed.get() - landedAtPreempt) + " completed"
                        + " after (already past the check), " + refused.get() + " refused");
                // host 1, preempted through b, hears of it through a: the reservation notice (log page 80h)
                Awaitility.await("host 1's reservation notice through a").atMost(Duration.ofSeconds(10))
                        .until(() -> events1.stream().anyMatch(e -> e.type() == 6 && e.logPage() == 0x80));
                Reservations.Report afterPreempt = r1.report();
                assertEquals(1, afterPreempt.registrants().size(), "a reports host 1 gone: " + afterPreempt);
                assertTrue(afterPreempt.registrants().get(0).holds());

                // the gateway host 1 reached it through dies: the reservation holds at the survivor, and
                // at a again when it is back (a new process, reading the reservation from the cluster)
                a.process.signal("KILL");
                Reservations.Report afterKill = r2.report();
                assertTrue(afterKill.registrants().stream().anyMatch(g -> g.hostId().equals(id2) && g.holds()),
                        afterKill.toString());
                a.start();
                try (Controller again = Nvmeof.connect(a.process.uri(NQN), o1)) {
                    Reservations.Report atA = again.namespace(1).reservations().report();
                    assertEquals(Reservations.Type.WRITE_EXCLUSIVE, atA.type(), "a, restarted, reports it: " + atA);
                    NvmeStatusException stillRefused = assertThrows(NvmeStatusException.class,
                            () -> again.namespace(1).write(0, block(3)), "host 1 through a restarted gateway a");
                    assertEquals(Status.RESERVATION_CONFLICT.sc(), stillRefused.status().sc());
                }
                // and host 1's own controller, reconnected to the restarted a: the ANA change that a
                // reports as it takes its group back arrives while that reconnect is finishing (this
                // once held the controller's thread, and the commands waiting, up to the loss timeout)
                Awaitility.await("host 1's controller, reconnected to a").atMost(Duration.ofSeconds(60))
                        .ignoreExceptions().until(() -> r1.report().type() == Reservations.Type.WRITE_EXCLUSIVE);

                r2.release(0xB2, Reservations.Type.WRITE_EXCLUSIVE);
                try (Controller c1again = Nvmeof.connect(a.process.uri(NQN), o1)) {
                    Reservations r1again = c1again.namespace(1).reservations();
                    assertNull(r1again.report().type(), "released through b, as seen through a");
                    r1again.register(0xA1);
                    r1again.clear(0xA1);
                    assertEquals(0, r2.report().registrants().size(), "cleared through a, as seen through b");
                    h2.write(0, block(4));

                    // the operator's clear_registrations at b removes host 1's registration made through a
                    r1again.register(0xA2);
                    r1again.acquire(0xA2, Reservations.Type.EXCLUSIVE_ACCESS);
                    JsonNode cleared = ManagementApiTest.rpc(b.socket, "clear_registrations",
                            "{\"nqn\": \"" + NQN + "\", \"nsid\": 1, \"host_id\": \"" + id1 + "\"}");
                    assertTrue(cleared.has("result"), cleared.toString());
                    Reservations.Report afterClear = r1again.report();
                    assertEquals(0, afterClear.registrants().size(), "cleared by the operator at b, as a reports it: "
                            + afterClear);
                    assertNull(afterClear.type(), "its reservation went with it");
                    h2.write(0, block(4));

                // the cost: a Register and an Acquire here (shared through the cluster), and the time seen above
                List<Long> register = new ArrayList<>();
                List<Long> acquire = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    long s = System.nanoTime();
                    r1again.register(0x100 + i);
                    register.add((System.nanoTime() - s) / 1000);
                    s = System.nanoTime();
                    r1again.acquire(0x100 + i, Reservations.Type.WRITE_EXCLUSIVE);
                    acquire.add((System.nanoTime() - s) / 1000);
                    r1again.clear(0x100 + i);
                }
                Collections.sort(register);
                Collections.sort(acquire);
                String local = oneProcess(CEPH.dir(), o1);
                System.out.println("shared reservations across two gateways: a change at a refused host 2's next write"
                        + " at b within " + seenUs + " us of the Acquire starting; Register median "
                        + register.get(10) + " us (worst " + register.get(19) + "), Acquire median " + acquire.get(10)
                        + " us (worst " + acquire.get(19) + "); " + local);
                assertFalse(b.process.err().contains("did not take the change"), b.process.err());
                }
            }
        }
    }

    /**
     * A gateway that does not take a change is fenced before the change completes. Gateway a is
     * the standby (no lease, so nothing else would fence it) and is frozen (SIGSTOP) while host 1,
     * a registrant under host 2's Write Exclusive - Registrants Only, writes through it; host 2
     * preempts and aborts host 1 through b, the owner. b's notify waits out its timeout, b fences
     * a's client, and only then does the Preempt and Abort complete; host 2 then writes every block
     * host 1 was writing. Thawed, a can land nothing of what it held (its client is fenced), finds
     * itself fenced and rejoins, and every block holds host 2's data.
     */
    @Test
    void aGatewayThatDoesNotTakeAChangeIsFencedBeforeItCompletes() throws Exception {
        CEPH.get().rbd("create", "--size", "8M", "rbd/silent");
        GroupGateway.Group group = new GroupGateway.Group(NQN, "silent", 3000, 2000, "b",
                Map.of("a", "127.0.0.1", "b", "127.0.0.1"));
        try (GroupGateway a = new GroupGateway(CEPH.dir(), group, "a", 1, CEPH.get(), "127.0.0.1", Ports.free(), List.of());
             GroupGateway b = new GroupGateway(CEPH.dir(), group, "b", 2, CEPH.get(), "127.0.0.1", Ports.free(), List.of())) {
            b.start();
            b.awaitRole("owner", Duration.ofSeconds(30));
            a.start();
            a.awaitRole("standby", Duration.ofSeconds(30));
            String aClient = a.address();
            UUID id1 = UUID.fromString("33333333-3333-4333-8333-333333333333");
            UUID id2 = UUID.fromString("44444444-4444-4444-8444-444444444444");
            ConnectOptions o1 = ConnectOptions.defaults().ioQueues(1).keepAlive(Duration.ofSeconds(1))
                    .commandTimeout(Duration.ofSeconds(5)).reconnectDelay(Duration.ofSeconds(1))
                    .controllerLossTimeout(Duration.ofSeconds(60))
                    .identity(HostIdentity.of("nqn.2014-08.org.nvmexpress:uuid:" + id1, id1));
            ConnectOptions o2 = ConnectOptions.defaults().ioQueues(1)
                    .identity(HostIdentity.of("nqn.2014-08.org.nvmexpress:uuid:" + id2, id2));
            try (Controller c1 = Nvmeof.connect(a.process.uri(NQN), o1);
                 Controller c2 = Nvmeof.connect(b.process.uri(NQN), o2)) {
                BlockDevice h1 = c1.namespace(1);
                BlockDevice h2 = c2.namespace(1);
                h1.reservations().register(0xC1);
                h2.reservations().register(0xD2);
                h2.reservations().acquire(0xD2, Reservations.Type.WRITE_EXCLUSIVE_REGISTRANTS_ONLY);
                // refused, timed out, or lost with a: what matters is what the blocks hold
                Writers writers = new Writers(h1, 4, 32);
                AtomicLong landed = writers.landed;
                Awaitility.await("host 1 writing through a").atMost(Duration.ofSeconds(30)).until(() -> landed.get() > 50);
                a.process.signal("STOP");
                long t0 = System.nanoTime();
                h2.reservations().preempt(0xD2, 0xC1, Reservations.Type.WRITE_EXCLUSIVE, true);
                long tookMs = (System.nanoTime() - t0) / 1_000_000;
                assertTrue(CEPH.get().ceph("osd", "blocklist", "ls").contains(aClient),
                        "a's client " + aClient + " is fenced when the Preempt and Abort completes");
                for (int blk = 0; blk < 32; blk++) {
                    h2.write(blk * 4096L, block(2));
                }
                a.process.signal("CONT");
                Awaitility.await("a finds itself fenced and rejoins").atMost(Duration.ofSeconds(60)).ignoreExceptions()
                        .until(() -> !aClient.equals(a.address()));
                writers.stop(Duration.ofSeconds(120));
                for (int blk = 0; blk < 32; blk++) {
                    ByteBuffer got = ByteBuffer.allocateDirect(4096);
                    h2.read(blk * 4096L, got);
                    assertEquals(block(2), got.flip(), "block " + blk + " holds host 2's write: nothing host 1 sent"
                            + " through the frozen gateway landed after the Preempt and Abort completed");
                }
                assertTrue(b.process.err().contains("which did not take the change"), b.process.err());
                System.out.println("a frozen standby: the Preempt and Abort at b completed in " + tookMs + " ms (the"
                        + " notify's timeout, then a fenced); host 1 had " + landed.get() + " writes acknowledged");
            }
        }
    }

    /** Threads that write 4 KiB blocks of 0x11 through one host until stopped, one lane of 8 blocks each, over {@code blocks}. */
    private static final class Writers {
        final AtomicBoolean writing = new AtomicBoolean(true);
        final AtomicLong landed = new AtomicLong();
        final AtomicLong refused = new AtomicLong();
        final List<CompletableFuture<Void>> done = new ArrayList<>();

        Writers(BlockDevice host, int lanes, int blocks) {
            for (int w = 0; w < lanes; w++) {
                int lane = w;
                CompletableFuture<Void> f = new CompletableFuture<>();
                done.add(f);
                Thread t = new Thread(() -> {
                    ByteBuffer mine = block(0x11);
                    for (long i = 0; writing.get(); i++) {
                        try {
                            host.write(((lane * 8 + i % 8) % blocks) * 4096, mine.duplicate());
                            landed.incrementAndGet();
                        } catch (IOException e) {
                            refused.incrementAndGet();
                        }
                    }
                    f.complete(null);
                });
                t.start();
            }
        }

        void stop(Duration within) throws Exception {
            writing.set(false);
            CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(within.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** The same Registers and Acquires against a RAM namespace of one target process (the per-process table). */
    private static String oneProcess(Path dir, ConnectOptions o) throws Exception {
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, "--listen", "tcp://127.0.0.1:0", "--subsystem",
                "nqn.2026-12.io.nvmeof:resv-local", "--namespace", "ram:4M");
             Controller c = Nvmeof.connect(t.uri("nqn.2026-12.io.nvmeof:resv-local"), o)) {
            Reservations r = c.namespace(1).reservations();
            List<Long> register = new ArrayList<>();
            List<Long> acquire = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                long s = System.nanoTime();
                r.register(0x100 + i);
                register.add((System.nanoTime() - s) / 1000);
                s = System.nanoTime();
                r.acquire(0x100 + i, Reservations.Type.WRITE_EXCLUSIVE);
                acquire.add((System.nanoTime() - s) / 1000);
                r.clear(0x100 + i);
            }
            Collections.sort(register);
            Collections.sort(acquire);
            return "one process, RAM namespace: Register median " + register.get(10) + " us, Acquire median "
                    + acquire.get(10) + " us";
        }
    }

    private static ByteBuffer block(int fill) {
        ByteBuffer b = ByteBuffer.allocateDirect(4096);
        while (b.hasRemaining()) {
            b.put((byte) fill);
        }
        return b.flip();
    }
}
