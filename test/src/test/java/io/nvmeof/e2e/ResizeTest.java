package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Resize in place against the launcher as a process: `nvmeof ns resize` grows a file namespace
 * while our initiator writes to it without a pause; the host's BlockDevice.size() follows the
 * notice; the I/O sees no error; a smaller size is refused without --shrink and taken with it; and
 * the size persists across a restart (the management API's state).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ResizeTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:resize";

    @Test
    void growUnderIoThenShrinkWithItsFlag(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("t.json");
        Files.writeString(config, """
                {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "namespaces": [{"nsid": 1, "backend": "file", "path": "%s", "size": "16M",
                                 "direct_io": true}]}]}
                """.formatted(NQN, NQN, dir.resolve("ns.img")));
        String socket = dir.resolve("rpc.sock").toString();
        String[] args = {"--config", config.toString(), "--rpc-socket", socket, "--state-dir", dir.resolve("state").toString()};
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, args);
             Controller c = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults().ioQueues(1)
                     .controllerLossTimeout(Duration.ZERO))) {
            t.await("the management API", () -> t.out().contains("management API on"));
            BlockDevice d = c.namespace(1);
            assertEquals(16 << 20, d.size());
            AtomicBoolean run = new AtomicBoolean(true);
            AtomicLong writes = new AtomicLong();
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread writer = new Thread(() -> {
                ByteBuffer b = ByteBuffer.allocateDirect(4096);
                try {
                    while (run.get()) {
                        long blocks = d.size() / 4096;
                        d.write((writes.get() * 7919 % blocks) * 4096, b.clear());
                        writes.incrementAndGet();
                    }
                } catch (Throwable e) {
                    failed.set(e);
                }
            });
            writer.start();
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> writes.get() > 100);
            TargetProcess.Run r = TargetProcess.cli(60, "ns", "resize", "--socket", socket, "--subsystem", NQN, "--nsid", "1",
                    "--size", "64M");
            assertEquals(0, r.exit(), r.out() + r.err());
            Awaitility.await("the host sees the new size").atMost(Duration.ofSeconds(20)).until(() -> d.size() == 64 << 20);
            long at = writes.get();
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> writes.get() > at + 100);
            run.set(false);
            writer.join();
            assertEquals(null, failed.get(), "the writes never failed across the resize");
            assertEquals(64 << 20, Files.size(dir.resolve("ns.img")), "the file grew");

            r = TargetProcess.cli(60, "ns", "resize", "--socket", socket, "--subsystem", NQN, "--nsid", "1", "--size", "32M");
            assertTrue(r.exit() != 0 && (r.out() + r.err()).contains("allow_shrink"), r.out() + r.err());
            assertEquals(64 << 20, d.size());
            r = TargetProcess.cli(60, "ns", "resize", "--socket", socket, "--subsystem", NQN, "--nsid", "1", "--size", "32M",
                    "--shrink");
            assertEquals(0, r.exit(), r.out() + r.err());
            Awaitility.await("the host sees it shrink").atMost(Duration.ofSeconds(20)).until(() -> d.size() == 32 << 20);
            assertEquals(0, t.stop());
            t.assertNoLeaks();
        }
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, args);
             Controller c = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults().ioQueues(1))) {
            assertEquals(32 << 20, c.namespace(1).size(), "the size kept across a restart");
        }
    }

    /**
     * Shrinks under writes in flight to the part cut off (issue 47, item 19): five times the file
     * namespace grows to 64 MiB, four queues keep 128 KiB writes in flight to its last 32 MiB, and
     * it shrinks to 32 MiB. No write checked before a shrink lands after it: the file is 32 MiB
     * once the writes are over, every time (before, 1 in 5 grew it back).
     */
    @Test
    void aWriteInFlightNeverGrowsTheFileBackPastAShrink(@TempDir Path dir) throws Exception {
        Path img = dir.resolve("ns.img");
        Path config = dir.resolve("t.json");
        Files.writeString(config, """
                {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "namespaces": [{"nsid": 1, "backend": "file", "path": "%s", "size": "64M",
                                 "direct_io": true}]}]}
                """.formatted(NQN, NQN, img));
        Path socket = dir.resolve("rpc.sock");
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, "--config", config.toString(), "--rpc-socket",
                socket.toString(), "--state-dir", dir.resolve("state").toString());
             Controller c = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults().ioQueues(4)
                     .controllerLossTimeout(Duration.ZERO))) {
            t.await("the management API", () -> t.out().contains("management API on"));
            BlockDevice d = c.namespace(1);
            List<String> grown = new ArrayList<>();
            for (int round = 0; round < 5; round++) {
                if (round > 0) {
                    resize(socket, "64M", false);
                    Awaitility.await("the host sees it grow").atMost(Duration.ofSeconds(20)).until(() -> d.size() == 64 << 20);
                }
                AtomicBoolean run = new AtomicBoolean(true);
                AtomicLong done = new AtomicLong();
                List<Thread> writers = new ArrayList<>();
                for (int w = 0; w < 4; w++) {
                    long seed = round * 4L + w;
                    Thread th = new Thread(() -> keepWritingTheTail(d, seed, run, done), "tail-writer-" + w);
                    th.start();
                    writers.add(th);
                }
                long before = done.get();
                Awaitility.await("writes to the tail").atMost(Duration.ofSeconds(30)).until(() -> done.get() > before + 64);
                resize(socket, "32M", true);
                run.set(false);
                for (Thread th : writers) {
                    th.join(30_000);
                    assertTrue(!th.isAlive(), th.getName() + " still writing");
                }
                Awaitility.await("the host sees it shrink").atMost(Duration.ofSeconds(20)).until(() -> d.size() == 32 << 20);
                long size = Files.size(img);
                if (size != 32 << 20) {
                    grown.add("round " + round + ": " + size + " bytes");
                }
            }
            assertEquals(List.of(), grown, "the file grew back past a shrink to 32 MiB");
            assertEquals(0, t.stop());
            t.assertNoLeaks();
        }
    }

    private static void resize(Path socket, String size, boolean shrink) throws Exception {
        JsonNode r = ManagementApiTest.rpc(socket, "resize_namespace", "{\"nqn\": \"" + NQN + "\", \"nsid\": 1, \"size\": \""
                + size + "\", \"shrink\": " + shrink + "}");
        assertTrue(r.has("result"), r.toString());
    }

    /**
     * 128 KiB writes to the last 32 MiB of a 64 MiB namespace, 16 in flight, until {@code run}
     * clears; what fails (past the end once it shrank) is let go, as a host that raced the
     * shrink. Waits for every write it sent before it returns.
     */
    private static void keepWritingTheTail(BlockDevice d, long seed, AtomicBoolean run, AtomicLong done) {
        java.util.Random rnd = new java.util.Random(seed);
        ByteBuffer data = ByteBuffer.allocateDirect(128 << 10);
        List<CompletableFuture<Void>> window = new ArrayList<>();
        while (run.get()) {
            window.removeIf(CompletableFuture::isDone);
            if (window.size() >= 16) {
                CompletableFuture.anyOf(window.toArray(new CompletableFuture<?>[0])).handle((v, e) -> null).join();
                continue;
            }
            long at = (32L << 20) + (long) rnd.nextInt(256) * (128 << 10);
            try {
                window.add(d.writeAsync(at, data.duplicate()).whenComplete((v, e) -> done.incrementAndGet()));
            } catch (RuntimeException e) {
                done.incrementAndGet(); // refused by the host: past the end it knows
            }
        }
        CompletableFuture.allOf(window.toArray(new CompletableFuture<?>[0])).handle((v, e) -> null).join();
    }
}
