package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.daemon.config.ConfigApplier;
import io.nvmeof.daemon.config.ConfigLoader;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.protocol.CopyRange;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.Status;
import io.nvmeof.target.IoStats;
import io.nvmeof.target.RawHost;
import io.nvmeof.target.Target;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
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

    /**
     * Issue 47, item 18: a Copy whose source or destination starts near 2^63 is out of range; the
     * sum past the end wrapped negative and passed the check, reaching the backend (Internal Error).
     * A raw host, so that nothing on the host's side checks the LBAs first.
     */
    @Test
    void aCopyNearTheEndOfTheLbaSpaceIsOutOfRange(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("t.json");
        Files.writeString(config, """
                {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "namespaces": [{"nsid": 1, "backend": "file", "path": "%s", "size": "16M"}]}]}
                """.formatted(NQN, NQN, dir.resolve("ns1.img")));
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, "--config", config.toString());
             RawHost admin = new RawHost(new InetSocketAddress("127.0.0.1", t.port));
             RawHost io = new RawHost(new InetSocketAddress("127.0.0.1", t.port))) {
            io.bringUpIo(NQN, 1, admin.bringUpAdmin(NQN));
            long top = Long.MAX_VALUE - 1;
            assertEquals(Status.LBA_OUT_OF_RANGE, rawCopy(io, 0, top, 2), "a source range that wraps past 2^63");
            assertEquals(Status.LBA_OUT_OF_RANGE, rawCopy(io, top, 0, 2), "a destination that wraps past 2^63");
            assertEquals(Status.LBA_OUT_OF_RANGE, rawCopy(io, 0, Long.MAX_VALUE, 1), "the last LBA there is");
            assertEquals(Status.SUCCESS, rawCopy(io, 16, 0, 2), "and a copy within the namespace still copies");
            t.assertNoLeaks();
        }
    }

    /** A Copy of {@code blocks} blocks from {@code slba} to {@code sdlba} as one format 0 descriptor, in the capsule. */
    static Status rawCopy(RawHost io, long sdlba, long slba, int blocks) throws Exception {
        ByteBuffer d = ByteBuffer.allocate(CopyRange.SIZE).order(ByteOrder.LITTLE_ENDIAN);
        d.putLong(CopyRange.SLBA_OFFSET, slba).putShort(CopyRange.NLB_OFFSET, (short) (blocks - 1));
        return io.command(q -> q.opcode(NvmOpcode.COPY.code).psdt(1).nsid(1).cdw(10, (int) sdlba).cdw(11, (int) (sdlba >>> 32))
                .cdw(12, 0).sgl(0, CopyRange.SIZE, Sgl.IN_CAPSULE), d.array()).cqe().status();
    }

    /**
     * Issue 47, item 15: one host's Copy flood (32 MiB Copies at queue depth 16, no QoS) leaves
     * another host's 2 MiB Write Zeroes within 3 x their median latency without it. The flood
     * runs at most 60 s; each median is of 40 Write Zeroes, one at a time.
     */
    @Test
    void aCopyFloodLeavesOtherHostsAlone(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("t.json");
        Files.writeString(config, """
                {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "namespaces": [{"nsid": 1, "backend": "ram", "size": "128M"},
                    {"nsid": 2, "backend": "ram", "size": "16M"}]}]}
                """.formatted(NQN, NQN));
        HostIdentity other = HostIdentity.of("nqn.2026-11.io.nvmeof:copy-bystander",
                UUID.fromString("5a5a5a5a-0000-4000-8000-0000000000c1"));
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, "--config", config.toString());
             Controller flooder = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults().ioQueues(2));
             Controller bystander = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults().identity(other).ioQueues(1))) {
            BlockDevice victim = bystander.namespace(2);
            medianWriteZeroes(victim, 100); // warm both sides' code
            long quiet = medianWriteZeroes(victim, 40);

            BlockDevice d = flooder.namespace(1);
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong copies = new AtomicLong();
            Thread flood = new Thread(() -> {
                Semaphore slots = new Semaphore(16);
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                for (int i = 0; !stop.get() && System.nanoTime() < until; i++) {
                    slots.acquireUninterruptibly();
                    long from = (i & 1) * (32L << 20);
                    d.copyAsync(from, from + (64L << 20), 32L << 20).whenComplete((v, e) -> {
                        copies.incrementAndGet();
                        slots.release();
                    });
                }
                slots.acquireUninterruptibly(16);
            });
            long floodStart = System.nanoTime();
            flood.start();
            try {
                Awaitility.await("the flood under way").atMost(Duration.ofSeconds(30)).until(() -> copies.get() >= 16);
                long loaded = medianWriteZeroes(victim, 40);
                long copied = copies.get();
                String seen = String.format("the bystander's 2 MiB Write Zeroes: median %.2f ms alone, %.2f ms beside the"
                        + " flood (%d copies of 32 MiB by then, %.2f GiB/s)", quiet / 1e6, loaded / 1e6, copied,
                        copied / 32.0 / ((System.nanoTime() - floodStart) / 1e9));
                System.out.println(seen);
                assertTrue(loaded <= 3 * quiet, seen);
            } finally {
                stop.set(true);
                flood.join();
            }
            t.assertNoLeaks();
        }
    }

    /** The median of {@code n} 2 MiB Write Zeroes one after another, in nanoseconds. */
    static long medianWriteZeroes(BlockDevice d, int n) throws Exception {
        long[] took = new long[n];
        for (int i = 0; i < n; i++) {
            long start = System.nanoTime();
            d.writeZeroes(i % 8 * (2L << 20), 2L << 20);
            took[i] = System.nanoTime() - start;
        }
        java.util.Arrays.sort(took);
        return took[n / 2];
    }
}
