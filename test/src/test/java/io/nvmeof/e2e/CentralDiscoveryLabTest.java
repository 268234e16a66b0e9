package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Discovery;
import io.nvmeof.initiator.DiscoveryEntry;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.protocol.DiscoveryLogEntry;
import io.nvmeof.protocol.Nqn;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lab of the discovery guide, with real processes: one target acting as central discovery
 * controller ({@code --cdc=true}, a discovery-only port) and three targets that register with it
 * ({@code --cdc-address}). A host that knows only the CDC's address finds all three subsystems
 * and connects to each; one target is killed and its entry ages out after its keep-alive with
 * the change notice; one stops in order and withdraws its entry at once; the CDC restarts and the
 * target left registers again by itself.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class CentralDiscoveryLabTest {
    static final String HOST = "nqn.2026-12.io.nvmeof:lab-host";

    static String nqn(int i) {
        return "nqn.2026-12.io.nvmeof:lab-vol" + i;
    }

    static TargetProcess cdc(Path dir, int port) throws Exception {
        return TargetProcess.start(Fabric.TCP, dir, "--discovery", "tcp://127.0.0.1:" + port, "--cdc=true");
    }

    static TreeSet<String> listed(Controller c) throws IOException {
        TreeSet<String> out = new TreeSet<>();
        for (DiscoveryEntry e : Discovery.read(c).entries()) {
            if (e.subtype() == DiscoveryLogEntry.SUBTYPE_NVM) {
                out.add(e.subsystemNqn());
            }
        }
        return out;
    }

    @Test
    void threeTargetsRegisterOneDiesOneLeavesAndTheCdcComesBack(@TempDir Path dir) throws Exception {
        int cdcPort = Ports.free();
        List<TargetProcess> targets = new ArrayList<>();
        TargetProcess cdc = cdc(dir, cdcPort);
        Controller host = null;
        try {
            for (int i = 1; i <= 3; i++) {
                targets.add(TargetProcess.start(Fabric.TCP, dir, "--listen", "tcp://127.0.0.1:0", "--subsystem", nqn(i),
                        "--namespace", "null:64M", "--cdc-address", "nvme+tcp://127.0.0.1:" + cdcPort));
            }
            host = Nvmeof.connect("nvme+tcp://127.0.0.1:" + cdcPort + "/" + Nqn.DISCOVERY, ConnectOptions.defaults()
                    .identity(HostIdentity.of(HOST, UUID.nameUUIDFromBytes(HOST.getBytes()))).controllerLossTimeout(Duration.ZERO));
            AtomicInteger notices = new AtomicInteger();
            host.onEvent(e -> notices.incrementAndGet());
            Controller h = host;
            TreeSet<String> all = new TreeSet<>(List.of(nqn(1), nqn(2), nqn(3)));
            Awaitility.await("three registrations").atMost(Duration.ofSeconds(60)).until(() -> listed(h).equals(all));
            // the host knows the CDC only, and reaches every subsystem through what it lists
            for (DiscoveryEntry e : Discovery.read(h).entries()) {
                if (e.subtype() == DiscoveryLogEntry.SUBTYPE_NVM) {
                    try (Controller io = Nvmeof.connect(e.uri().toString(), ConnectOptions.defaults().ioQueues(1))) {
                        assertEquals(e.subsystemNqn(), io.identify().subsystemNqn());
                    }
                }
            }
            TargetProcess.Run discover = TargetProcess.cli(60, "discover", "nvme+tcp://127.0.0.1:" + cdcPort);
            assertEquals(0, discover.exit(), discover.err());
            for (String n : all) {
                assertTrue(discover.out().contains(n), discover.out());
            }
            // killed: gone after its keep-alive, with the notice
            int before = notices.get();
            long killed = System.nanoTime();
            targets.get(1).signal("KILL");
            Awaitility.await("the killed target's entry ages out").atMost(Duration.ofSeconds(60))
                    .until(() -> !listed(h).contains(nqn(2)));
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
            Awaitility.await("the notice").atMost(Duration.ofSeconds(10)).until(() -> notices.get() > before);
            assertEquals(new TreeSet<>(List.of(nqn(1), nqn(3))), listed(h));
            System.out.println("CentralDiscoveryLabTest: a killed registrant's entry left the CDC's log after " + took + " ms");
            assertTrue(cdc.out().contains("expired") || cdc.err().contains("expired"), cdc.err());
            // stopped in order: withdrawn at once
            assertEquals(0, targets.get(2).stop());
            assertTrue(targets.get(2).out().contains("deregistered from the central discovery controller"),
                    targets.get(2).out());
            Awaitility.await("the stopped target's entry").atMost(Duration.ofSeconds(10))
                    .until(() -> listed(h).equals(new TreeSet<>(List.of(nqn(1)))));
            // the CDC restarts empty; the target left registers again by itself
            host.close();
            host = null;
            assertEquals(0, cdc.stop());
            cdc = cdc(dir, cdcPort);
            Controller again = Nvmeof.connect("nvme+tcp://127.0.0.1:" + cdcPort + "/" + Nqn.DISCOVERY,
                    ConnectOptions.defaults().identity(HostIdentity.of(HOST, UUID.nameUUIDFromBytes(HOST.getBytes()))));
            host = again;
            Awaitility.await("the registration after the CDC's restart").atMost(Duration.ofSeconds(90))
                    .until(() -> listed(again).equals(new TreeSet<>(List.of(nqn(1)))));
            for (TargetProcess t : List.of(cdc, targets.get(0))) {
                t.assertNoLeaks();
            }
        } finally {
            if (host != null) {
                host.close();
            }
            for (TargetProcess t : targets) {
                t.close();
            }
            cdc.close();
        }
    }
}
