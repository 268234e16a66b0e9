package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * RBD namespaces as users serve them, against a real one-node Ceph cluster: the target process
 * with {@code --namespace rbd:POOL/IMAGE,conf=...} and with a JSON configuration that declares the
 * cluster; what our initiator writes over NVMe/TCP is what Ceph's {@code rbd export} reads, and
 * what {@code rbd import} wrote our initiator reads; the namespace's identity is the image's.
 */
class RbdNamespaceTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:rbd";
    @org.junit.jupiter.api.extension.RegisterExtension
    static final io.nvmeof.target.backend.CephCluster.PerClass CEPH = new io.nvmeof.target.backend.CephCluster.PerClass();

    @Test
    void whatTheHostWritesRbdExportReads() throws Exception {
        CEPH.get().rbd("create", "--size", "32M", "rbd/w");
        byte[] expected = new byte[32 << 20];
        Path work = Files.createDirectories(CEPH.dir().resolve("w"));
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, work, "--listen", "tcp://127.0.0.1:0", "--subsystem", NQN,
                "--namespace", "rbd:rbd/w,conf=" + CEPH.get().conf());
             Controller c = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults().ioQueues(2)
                     .controllerLossTimeout(Duration.ZERO))) {
            BlockDevice d = c.namespace(1);
            assertEquals(32 << 20, d.size());
            Random random = new Random(11);
            ByteBuffer b = ByteBuffer.allocateDirect(128 << 10);
            for (int round = 0; round < 3; round++) { // more than one round, overwriting
                for (int i = 0; i < 64; i++) {
                    long at = (long) random.nextInt((32 << 20) / 4096 - 32) * 4096;
                    byte[] data = new byte[128 << 10];
                    random.nextBytes(data);
                    System.arraycopy(data, 0, expected, (int) at, data.length);
                    d.write(at, b.clear().put(data).flip());
                }
            }
            d.flush();
            ByteBuffer back = ByteBuffer.allocateDirect(1 << 20);
            d.read(0, back);
            byte[] got = new byte[1 << 20];
            back.flip().get(got);
            assertArrayEquals(java.util.Arrays.copyOf(expected, 1 << 20), got, "reads back what it wrote");
            int exit = t.stop();
            assertEquals(0, exit, t.out() + t.err());
            t.assertNoLeaks();
        }
        Path out = CEPH.dir().resolve("w.export");
        CEPH.get().rbd("export", "rbd/w", out.toString());
        assertArrayEquals(expected, Files.readAllBytes(out), "rbd export reads what the host wrote");
    }

    @Test
    void aConfiguredClusterServesWhatRbdImportWrote() throws Exception {
        byte[] imported = new byte[8 << 20];
        new Random(5).nextBytes(imported);
        Path in = CEPH.dir().resolve("i.img");
        Files.write(in, imported);
        CEPH.get().rbd("import", in.toString(), "rbd/i");
        Path work = Files.createDirectories(CEPH.dir().resolve("i"));
        Path config = work.resolve("target.json");
        Files.writeString(config, """
                {"rbd_clusters": [{"name": "main", "conf": "%s", "id": "admin"}],
                 "ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "namespaces": [
                     {"nsid": 1, "backend": "rbd", "cluster": "main", "pool": "rbd", "image": "i", "block_size": 4096},
                     {"nsid": 2, "backend": "rbd", "cluster": "main", "pool": "rbd", "image": "i", "read_only": true}]}]}
                """.formatted(CEPH.get().conf(), NQN, NQN));
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, work, "--config", config.toString());
             Controller c = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults().ioQueues(1)
                     .controllerLossTimeout(Duration.ZERO))) {
            BlockDevice d = c.namespace(1);
            assertEquals(8 << 20, d.size());
            assertEquals(4096, d.blockSize());
            ByteBuffer back = ByteBuffer.allocateDirect(imported.length);
            d.read(0, back);
            byte[] got = new byte[imported.length];
            back.flip().get(got);
            assertArrayEquals(imported, got, "the host reads what rbd import wrote");
            BlockDevice two = c.namespace(2);
            assertEquals(512, two.blockSize(), "512-byte blocks unless configured");
            assertArrayEquals(c.identifyNamespace(1).nguid(), c.identifyNamespace(2).nguid(), "one image, one identity");
            int exit = t.stop();
            assertEquals(0, exit, t.out() + t.err());
            t.assertNoLeaks();
        }
    }
}
