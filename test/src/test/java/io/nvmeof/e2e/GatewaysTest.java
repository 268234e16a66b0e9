package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.daemon.config.ConfigApplier;
import io.nvmeof.daemon.config.ConfigException;
import io.nvmeof.daemon.config.ConfigLoader;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.Command;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.protocol.IdentifyController;
import io.nvmeof.protocol.IdentifyNamespace;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import io.nvmeof.target.Target;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two gateways, one volume: two targets (here in one JVM, each with its own page cache bypassed)
 * serve one subsystem over one file. To a host they are one subsystem: same NQN, serial, model,
 * namespace identifiers; distinct controller IDs from their configured ranges; fused Compare and
 * Write not offered; each gateway's ANA group optimized on its own port.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class GatewaysTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:shared";

    static String config(Path file, int cntlidMin, int cntlidMax, String ownState) {
        return """
                {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"],
                            "ana_groups": [{"grpid": 1, "ana": {"state": "%s"}}]}],
                 "subsystems": [{"nqn": "%s", "serial": "GW0001", "model": "shared volume", "gateways": true,
                   "cntlid_min": %d, "cntlid_max": %d,
                   "namespaces": [{"nsid": 1, "backend": "file", "path": "%s", "size": "4M", "direct_io": true,
                                   "uuid": "3e0c8a4e-6b7f-4d1a-9c55-2f1e0d9b7a61"}]}]}
                """.formatted(NQN, ownState, NQN, cntlidMin, cntlidMax, file);
    }

    static Controller connect(Target t) throws IOException {
        return Nvmeof.connect("nvme+tcp://127.0.0.1:" + t.ports().get(0).bound().getPort() + "/" + NQN,
                ConnectOptions.defaults().ioQueues(1).controllerLossTimeout(Duration.ZERO));
    }

    @Test
    void twoGatewaysAreOneSubsystemToAHost(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("shared.img");
        try (Target a = new Target(); Target b = new Target()) {
            new ConfigApplier(a).apply(ConfigLoader.parse(config(file, 1, 999, "optimized")));
            new ConfigApplier(b).apply(ConfigLoader.parse(config(file, 1000, 1999, "non-optimized")));
            try (Controller ca = connect(a); Controller cb = connect(b)) {
                IdentifyController ia = ca.identify();
                IdentifyController ib = cb.identify();
                assertEquals(ia.subsystemNqn(), ib.subsystemNqn());
                assertEquals(ia.serialNumber(), ib.serialNumber());
                assertEquals(ia.modelNumber(), ib.modelNumber());
                assertTrue(ia.cntlid() >= 1 && ia.cntlid() <= 999, "cntlid " + ia.cntlid());
                assertTrue(ib.cntlid() >= 1000 && ib.cntlid() <= 1999, "cntlid " + ib.cntlid());
                assertNotEquals(ia.cntlid(), ib.cntlid());
                assertEquals(0, ia.fuses(), "fused Compare and Write is atomic in one process only");
                assertEquals(0, ia.acwu());
                IdentifyNamespace na = ca.identifyNamespace(1);
                IdentifyNamespace nb = cb.identifyNamespace(1);
                assertArrayEquals(na.nguid(), nb.nguid());
                assertEquals(na.nsze(), nb.nsze());

                // a write through one gateway reads back through the other (no page cache between)
                BlockDevice da = ca.namespace(1);
                BlockDevice db = cb.namespace(1);
                for (int round = 0; round < 3; round++) {
                    ByteBuffer w = ByteBuffer.allocateDirect(8192);
                    for (int i = 0; i < 8192; i++) {
                        w.put(i, (byte) (round * 17 + i));
                    }
                    (round % 2 == 0 ? da : db).write(8192L * round, w.duplicate());
                    ByteBuffer r = ByteBuffer.allocateDirect(8192);
                    (round % 2 == 0 ? db : da).read(8192L * round, r);
                    assertEquals(w.clear(), r.flip(), "round " + round);
                }

                NvmeStatusException e = assertThrows(NvmeStatusException.class, () -> ca.fused(
                        Command.of("Compare", s -> s.blocks(NvmOpcode.COMPARE, 0, 1).nsid(1)).dataOut(ByteBuffer.allocateDirect(4096), 4096),
                        Command.of("Write", s -> s.blocks(NvmOpcode.WRITE, 0, 1).nsid(1)).dataOut(ByteBuffer.allocateDirect(4096), 4096)));
                assertEquals(Status.INVALID_FIELD.sct(), e.status().sct());
                assertEquals(Status.INVALID_FIELD.sc(), e.status().sc());
            }
        }
    }

    @Test
    void aSharedNamespaceWithoutDirectIoIsRefused(@TempDir Path dir) {
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(
                config(dir.resolve("x.img"), 1, 10, "optimized").replace("\"direct_io\": true", "\"direct_io\": false")));
        assertEquals("subsystems[0].namespaces[0].direct_io", e.field());
        // a block device too: without direct_io refused, with it taken
        String block = config(dir.resolve("x.img"), 1, 10, "optimized")
                .replace("\"backend\": \"file\", \"path\": \"" + dir.resolve("x.img") + "\", \"size\": \"4M\"",
                        "\"backend\": \"block\", \"path\": \"/dev/loop0\"");
        assertTrue(block.contains("\"block\""), block);
        e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(block.replace("\"direct_io\": true", "\"direct_io\": false")));
        assertEquals("subsystems[0].namespaces[0].direct_io", e.field());
        assertTrue(ConfigLoader.parse(block).subsystems().get(0).namespaces().get(0).directIo());
        e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(block.replace("\"block\"", "\"ram\"")
                .replace("\"path\": \"/dev/loop0\", ", "\"size\": \"4M\", ").replace(", \"direct_io\": true", "")));
        assertEquals("subsystems[0].namespaces[0].backend", e.field());
        e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(
                config(dir.resolve("x.img"), 10, 5, "optimized")));
        assertEquals("subsystems[0].cntlid_max", e.field());
    }

    @Test
    void oneDiscoveryAddressFindsEveryGatewayThroughReferrals(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("shared.img");
        try (Target a = new Target(); Target b = new Target()) {
            new ConfigApplier(b).apply(ConfigLoader.parse(config(file, 1000, 1999, "non-optimized")));
            int bPort = b.ports().get(0).bound().getPort();
            ConfigApplier applyA = new ConfigApplier(a);
            String withReferral = config(file, 1, 999, "optimized").replace("\"ana_groups\"",
                    "\"referrals\": [{\"name\": \"gw-b\", \"trtype\": \"tcp\", \"traddr\": \"127.0.0.1\", \"trsvcid\": "
                            + bPort + ", \"portid\": 1}], \"ana_groups\"");
            applyA.apply(ConfigLoader.parse(withReferral));
            String discovery = "nvme+tcp://127.0.0.1:" + a.ports().get(0).bound().getPort() + "/" + io.nvmeof.protocol.Nqn.DISCOVERY;
            try (Controller d = Nvmeof.connect(discovery, ConnectOptions.defaults().controllerLossTimeout(Duration.ZERO))) {
                java.util.List<Controller.AsyncEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();
                d.onEvent(events::add);
                io.nvmeof.initiator.Discovery.Log log = io.nvmeof.initiator.Discovery.read(d);
                io.nvmeof.initiator.DiscoveryEntry referral = log.entries().stream()
                        .filter(e -> e.subtype() == io.nvmeof.protocol.DiscoveryLogEntry.SUBTYPE_REFERRAL).findFirst().orElseThrow();
                assertEquals("127.0.0.1", referral.traddr());
                assertEquals(Integer.toString(bPort), referral.trsvcid());
                assertEquals(io.nvmeof.protocol.Nqn.DISCOVERY, referral.subsystemNqn());
                assertTrue(log.entries().stream().anyMatch(e -> NQN.equals(e.subsystemNqn())), "gateway a's own entry");
                // following it: gateway b's discovery service lists the subsystem there
                try (Controller db = Nvmeof.connect(referral.uri(), ConnectOptions.defaults().controllerLossTimeout(Duration.ZERO))) {
                    assertTrue(io.nvmeof.initiator.Discovery.read(db).entries().stream()
                            .anyMatch(e -> NQN.equals(e.subsystemNqn()) && e.trsvcid().equals(Integer.toString(bPort))));
                }
                // the referral goes: hosts holding a discovery controller are told
                applyA.apply(ConfigLoader.parse(config(file, 1, 999, "optimized")));
                org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !events.isEmpty());
                assertEquals(0x70, events.get(0).logPage());
                assertTrue(io.nvmeof.initiator.Discovery.read(d).entries().stream()
                        .noneMatch(e -> e.subtype() == io.nvmeof.protocol.DiscoveryLogEntry.SUBTYPE_REFERRAL));
            }
        }
    }
}
