package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.daemon.config.ConfigApplier;
import io.nvmeof.daemon.config.ConfigLoader;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.target.IoStats;
import io.nvmeof.target.Target;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Copy through our initiator's API on a RAM and a direct-I/O file namespace (a copy larger than
 * one command's MCL, and overlapping copies both ways, each checked against a memmove of the same
 * bytes), with the target counting the bytes copied; and `nvmeof copy` (nvme-cli's options) against
 * the launcher as a process.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CopyTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:copy";
    static final int SIZE = 256 << 20;

    @Test
    void copiesThroughTheApi(@TempDir Path dir) throws Exception {
        try (Target target = new Target()) {
            new ConfigApplier(target).apply(ConfigLoader.parse("""
                    {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"]}],
                     "subsystems": [{"nqn": "%s", "namespaces": [{"nsid": 1, "backend": "ram", "size": "160M"},
                        {"nsid": 2, "backend": "file", "path": "%s", "size": "160M", "direct_io": true}]}]}
                    """.formatted(NQN, NQN, dir.resolve("ns2.img"))));
            int port = target.ports().get(0).bound().getPort();
            try (Controller c = Nvmeof.connect("nvme+tcp://127.0.0.1:" + port + "/" + NQN,
                    ConnectOptions.defaults().ioQueues(2).controllerLossTimeout(Duration.ZERO))) {
                for (int nsid : new int[] {1, 2}) {
                    BlockDevice d = c.namespace(nsid);
                    int span = 72 << 20; // more than one Copy command moves (MCL: 64 MiB)
                    byte[] model = new byte[2 * span];
                    new Random(nsid).nextBytes(model);
                    d.write(0, ByteBuffer.allocateDirect(model.length).put(model).flip());
                    long[][] cases = {{0, span, span}, {4096, 1 << 20, 8 << 20}, {1 << 20, 4096, 8 << 20}};
                    for (long[] k : cases) {
                        d.copy(k[0], k[1], k[2]);
                        System.arraycopy(model, (int) k[0], model, (int) k[1], (int) k[2]);
                        ByteBuffer back = ByteBuffer.allocateDirect(model.length);
                        d.read(0, back);
                        byte[] got = new byte[model.length];
                        back.flip().get(got);
                        assertArrayEquals(model, got, "nsid " + nsid + ": copy of " + k[2] + " from " + k[0] + " to " + k[1]);
                    }
                    assertEquals(span + 16L * (1 << 20), target.subsystem(NQN).namespace(nsid).stats().bytes(IoStats.Op.COPY),
                            "the target counted every byte copied");
                }
            }
        }
    }

    @Test
    void theCliCopiesLikeNvmeCli(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("t.json");
        Files.writeString(config, """
                {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "namespaces": [{"nsid": 1, "backend": "ram", "size": "16M"}]}]}
                """.formatted(NQN, NQN));
        byte[] data = new byte[64 * 4096];
        new Random(5).nextBytes(data);
        Files.write(dir.resolve("in"), data);
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, "--config", config.toString())) {
            String uri = t.uri(NQN);
            assertEquals(0, TargetProcess.cli(60, "write", uri, "-o", "0", "-d", dir.resolve("in").toString()).exit());
            // blocks 0..63 to 256..319 as SPDK's simple_copy does, then 10..14 and 40..42 to 512..519
            TargetProcess.Run r = TargetProcess.cli(60, "copy", uri, "--sdlba", "256", "--slbs", "0", "--blocks", "63");
            assertEquals(0, r.exit(), r.err());
            assertTrue(r.out().contains("NVMe Copy: success"), r.out());
            r = TargetProcess.cli(60, "copy", uri, "-d", "512", "-s", "10,40", "-b", "4,2");
            assertEquals(0, r.exit(), r.err());
            assertEquals(0, TargetProcess.cli(60, "read", uri, "-o", String.valueOf(256 * 4096), "-l", String.valueOf(264 * 4096),
                    "-d", dir.resolve("out").toString()).exit());
            byte[] out = Files.readAllBytes(dir.resolve("out"));
            byte[] want = new byte[264 * 4096];
            System.arraycopy(data, 0, want, 0, 64 * 4096);
            System.arraycopy(data, 10 * 4096, want, 256 * 4096, 5 * 4096);
            System.arraycopy(data, 40 * 4096, want, 261 * 4096, 3 * 4096);
            assertArrayEquals(want, out);
            r = TargetProcess.cli(60, "copy", uri, "-d", "0", "-s", "1,2", "-b", "0");
            assertTrue(r.exit() != 0 && r.err().contains("--slbs and --blocks"), r.err());
            t.assertNoLeaks();
        }
    }
}
