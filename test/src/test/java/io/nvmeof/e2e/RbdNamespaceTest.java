package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.protocol.Status;
import io.nvmeof.target.backend.CephCluster;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * RBD namespaces as users serve them, against a real one-node Ceph cluster: the target process
 * with {@code --namespace rbd:POOL/IMAGE,conf=...} and with a JSON configuration that declares the
 * cluster; what our initiator writes over NVMe/TCP is what Ceph's {@code rbd export} reads, and
 * what {@code rbd import} wrote our initiator reads; the namespace's identity is the image's.
 */
class RbdNamespaceTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:rbd";
    @RegisterExtension
    static final CephCluster.PerClass CEPH = new CephCluster.PerClass("bluestore"); // its OSD survives a kill

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
        Path config = configure(work, ", \"id\": \"admin\"", "\"namespaces\": [" + rbd(1, "i", ", \"block_size\": 4096")
                + ", " + rbd(2, "i", ", \"read_only\": true") + "]");
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

    /**
     * A resize by the management API ({@code nvmeof ns resize}, which resizes the image) and one by
     * Ceph's own {@code rbd resize} both reach a connected host: its namespace's size follows, by
     * the namespace attribute notice, while it writes.
     */
    @Test
    void resizesByTheApiAndByRbdReachAConnectedHost() throws Exception {
        CEPH.get().rbd("create", "--size", "16M", "rbd/r");
        Path work = Files.createDirectories(CEPH.dir().resolve("r"));
        Path config = configure(work, "", "\"namespaces\": [" + rbd(1, "r", "") + "]");
        String socket = work.resolve("rpc.sock").toString();
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, work, "--config", config.toString(), "--rpc-socket", socket,
                "--state-dir", work.resolve("state").toString());
             Controller c = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults().ioQueues(1)
                     .controllerLossTimeout(Duration.ZERO))) {
            t.await("the management API", () -> t.out().contains("management API on"));
            BlockDevice d = c.namespace(1);
            assertEquals(16 << 20, d.size());
            TargetProcess.Run r = TargetProcess.cli(60, "ns", "resize", "--socket", socket, "--subsystem", NQN, "--nsid", "1",
                    "--size", "64M");
            assertEquals(0, r.exit(), r.out() + r.err());
            org.awaitility.Awaitility.await("the host sees the API's resize").atMost(Duration.ofSeconds(20))
                    .until(() -> d.size() == 64 << 20);
            assertTrue(CEPH.get().rbd("info", "rbd/r").contains("64 MiB"), "the image itself grew");
            d.write((64 << 20) - 4096, ByteBuffer.allocateDirect(4096));
            r = TargetProcess.cli(60, "ns", "resize", "--socket", socket, "--subsystem", NQN, "--nsid", "1", "--size", "32M");
            assertTrue(r.exit() != 0 && (r.out() + r.err()).contains("shrink"), r.out() + r.err());
            CEPH.get().rbd("resize", "--size", "96M", "rbd/r");
            org.awaitility.Awaitility.await("the host sees rbd resize").atMost(Duration.ofSeconds(20))
                    .until(() -> d.size() == 96 << 20);
            assertTrue(t.err().contains("resized by others"), t.err());
            int exit = t.stop();
            assertEquals(0, exit, t.out() + t.err());
        }
    }

    /**
     * The cluster out of reach (its OSD frozen) under I/O: a command librados gives up on (here
     * after rbd_op_timeout_ms of 3 s) ends in Namespace Not Ready without Do Not Retry, well within
     * a host's 30 s I/O timeout, and the target stays up; the cluster back, I/O goes on with no
     * restart, and what was written before reads back.
     */
    @Test
    void aClusterOutOfReachIsNamespaceNotReadyAndIoResumes() throws Exception {
        CEPH.get().rbd("create", "--size", "8M", "rbd/f");
        Path work = Files.createDirectories(CEPH.dir().resolve("f"));
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, work, "--listen", "tcp://127.0.0.1:0", "--subsystem", NQN,
                "--namespace", "rbd:rbd/f,conf=" + CEPH.get().conf(), "--rbd-op-timeout-ms", "3000");
             Controller c = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults().ioQueues(1)
                     .controllerLossTimeout(Duration.ZERO))) {
            BlockDevice d = c.namespace(1);
            byte[] data = new byte[4096];
            new Random(3).nextBytes(data);
            d.write(0, ByteBuffer.allocateDirect(4096).put(data).flip());
            CEPH.get().pauseOsd();
            try {
                long start = System.nanoTime();
                io.nvmeof.initiator.NvmeStatusException e = org.junit.jupiter.api.Assertions.assertThrows(
                        io.nvmeof.initiator.NvmeStatusException.class,
                        () -> d.write(4096, ByteBuffer.allocateDirect(4096)));
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertEquals(io.nvmeof.protocol.Status.NAMESPACE_NOT_READY.sc(), e.status().sc(), e.getMessage());
                assertTrue(!e.status().dnr(), "without Do Not Retry: " + e.status());
                assertTrue(ms < 25_000, "answered after " + ms + " ms, within a host's 30 s I/O timeout");
                System.out.println("cluster out of reach: Namespace Not Ready after " + ms + " ms");
            } finally {
                CEPH.get().resumeOsd();
            }
            org.awaitility.Awaitility.await("I/O resumes").atMost(Duration.ofSeconds(60)).ignoreExceptions()
                    .until(() -> {
                        d.write(8192, ByteBuffer.allocateDirect(4096));
                        return true;
                    });
            ByteBuffer back = ByteBuffer.allocateDirect(4096);
            d.read(0, back);
            byte[] got = new byte[4096];
            back.flip().get(got);
            assertArrayEquals(data, got, "written before the outage, read after it");
            int exit = t.stop();
            assertEquals(0, exit, t.out() + t.err());
        }
    }

    /**
     * The cluster's only OSD killed (SIGKILL, as a crash) under writes from two hosts' threads and
     * started again: while it is away writes fail as Namespace Not Ready without Do Not Retry
     * within the op timeout (never a hang past a host's 30 s), once it is back they complete
     * again without a restart of the target, and every write acknowledged before, during or
     * after the outage reads back, through the target and through {@code rbd export}.
     */
    @Test
    void theOsdKilledAndRestartedUnderWritesLosesNoAcknowledgedWrite() throws Exception {
        CEPH.get().rbd("create", "--size", "8M", "rbd/k");
        Path work = Files.createDirectories(CEPH.dir().resolve("k"));
        int block = 4096;
        int blocks = (8 << 20) / block;
        byte[][] acked = new byte[blocks][];
        boolean[] unsure = new boolean[blocks]; // a write failed and none succeeded after it: old or new data
        java.util.concurrent.atomic.AtomicInteger notReady = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicLong slowest = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.ConcurrentLinkedQueue<String> wrong = new java.util.concurrent.ConcurrentLinkedQueue<>();
        java.util.concurrent.atomic.AtomicInteger phase = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger[] afterRestart = {new java.util.concurrent.atomic.AtomicInteger(),
            new java.util.concurrent.atomic.AtomicInteger()};
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, work, "--listen", "tcp://127.0.0.1:0", "--subsystem", NQN,
                "--namespace", "rbd:rbd/k,conf=" + CEPH.get().conf(), "--rbd-op-timeout-ms", "3000");
             Controller c = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults().ioQueues(2)
                     .controllerLossTimeout(Duration.ZERO))) {
            BlockDevice d = c.namespace(1);
            Thread[] writers = new Thread[2];
            for (int w = 0; w < 2; w++) {
                int me = w;
                writers[w] = new Thread(() -> {
                    Random random = new Random(100 + me);
                    ByteBuffer b = ByteBuffer.allocateDirect(block);
                    while (phase.get() < 2 || afterRestart[me].get() < 20) {
                        int at = me * (blocks / 2) + random.nextInt(blocks / 2); // each writer its own half
                        byte[] data = new byte[block];
                        random.nextBytes(data);
                        long start = System.nanoTime();
                        try {
                            d.write((long) at * block, b.clear().put(data).flip());
                            acked[at] = data;
                            unsure[at] = false;
                            if (phase.get() == 2) {
                                afterRestart[me].incrementAndGet();
                            }
                        } catch (NvmeStatusException e) {
                            unsure[at] = true;
                            if (e.status().sc() == Status.NAMESPACE_NOT_READY.sc() && !e.status().dnr()) {
                                notReady.incrementAndGet();
                            } else {
                                wrong.add(e.getMessage());
                            }
                            if (phase.get() == 2 && afterRestart[me].get() == 0) {
                                try {
                                    Thread.sleep(200); // until the cluster answers again
                                } catch (InterruptedException x) {
                                    return;
                                }
                            }
                        } catch (Exception e) {
                            unsure[at] = true;
                            wrong.add(e.toString());
                        }
                        slowest.accumulateAndGet((System.nanoTime() - start) / 1_000_000, Math::max);
                    }
                });
                writers[w].start();
            }
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> countAcked(acked) > 200);
            CEPH.get().killOsd();
            phase.set(1);
            org.awaitility.Awaitility.await("writes fail while the OSD is away").atMost(Duration.ofSeconds(30))
                    .until(() -> notReady.get() >= 2);
            CEPH.get().startOsd();
            phase.set(2);
            for (Thread w : writers) {
                w.join(120_000);
                assertTrue(!w.isAlive(), "writes complete again once the OSD is back");
            }
            assertTrue(wrong.isEmpty(), "only Namespace Not Ready, without Do Not Retry: " + wrong);
            assertTrue(slowest.get() < 25_000, "every write answered within 25 s; the slowest took " + slowest + " ms");
            System.out.println("OSD killed and restarted: " + notReady + " writes Namespace Not Ready, slowest answer "
                    + slowest + " ms");
            ByteBuffer back = ByteBuffer.allocateDirect(block);
            byte[] got = new byte[block];
            for (int i = 0; i < blocks; i++) {
                if (acked[i] != null && !unsure[i]) {
                    d.read((long) i * block, back.clear());
                    back.flip().get(got);
                    assertArrayEquals(acked[i], got, "block " + i + " reads as acknowledged");
                }
            }
            int exit = t.stop();
            assertEquals(0, exit, t.out() + t.err());
        }
        Path out = CEPH.dir().resolve("k.export");
        CEPH.get().rbd("export", "rbd/k", out.toString());
        byte[] image = Files.readAllBytes(out);
        for (int i = 0; i < blocks; i++) {
            if (acked[i] != null && !unsure[i]) {
                assertArrayEquals(acked[i], java.util.Arrays.copyOfRange(image, i * block, (i + 1) * block),
                        "rbd export: block " + i);
            }
        }
    }

    private static int countAcked(byte[][] acked) {
        int n = 0;
        for (byte[] a : acked) {
            n += a == null ? 0 : 1;
        }
        return n;
    }

    /**
     * The cluster blocklists the target's client (fenced, as another gateway's break of the
     * image's lock does): writes fail at once with a path error, without Do Not Retry, so a host
     * retries through another gateway; none succeeds, none hangs, and the target lives.
     */
    @Test
    void aBlocklistedTargetFailsWritesWithAPathError() throws Exception {
        CEPH.get().rbd("create", "--size", "8M", "rbd/b");
        Path work = Files.createDirectories(CEPH.dir().resolve("b"));
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, work, "--listen", "tcp://127.0.0.1:0", "--subsystem", NQN,
                "--namespace", "rbd:rbd/b,conf=" + CEPH.get().conf(), "--rbd-op-timeout-ms", "3000");
             Controller c = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults().ioQueues(1)
                     .controllerLossTimeout(Duration.ZERO))) {
            BlockDevice d = c.namespace(1);
            d.write(0, ByteBuffer.allocateDirect(4096)); // the image open, its watch and lock held
            String status = CEPH.get().rbd("status", "rbd/b");
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("watcher=(\\S+)").matcher(status);
            assertTrue(m.find(), "the target watches the image: " + status);
            CEPH.get().ceph("osd", "blocklist", "add", m.group(1));
            try {
                long start = System.nanoTime();
                NvmeStatusException e = org.junit.jupiter.api.Assertions.assertThrows(NvmeStatusException.class,
                        () -> d.write(4096, ByteBuffer.allocateDirect(4096)));
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertEquals(Status.INTERNAL_PATH_ERROR.sct(), e.status().sct(), e.getMessage());
                assertEquals(Status.INTERNAL_PATH_ERROR.sc(), e.status().sc(), e.getMessage());
                assertTrue(!e.status().dnr(), "without Do Not Retry: " + e.status());
                assertTrue(ms < 25_000, "answered after " + ms + " ms");
                assertThrows(NvmeStatusException.class, () -> d.write(8192, ByteBuffer.allocateDirect(4096)),
                        "a fenced gateway completes no write");
                System.out.println("blocklisted: path error after " + ms + " ms");
            } finally {
                CEPH.get().ceph("osd", "blocklist", "rm", m.group(1));
            }
            assertTrue(t.isAlive(), "the target lives");
            int exit = t.stop();
            assertEquals(0, exit, t.out() + t.err());
        }
    }

    /**
     * A namespace's QoS limit from the configuration holds an RBD namespace's reads and writes as
     * any other's: 300 of each at QD16 under 200 IOPS take at least (300 - the 5-command burst) /
     * 200 s, a lower bound only the limit can give, and every command completes.
     */
    @Test
    void aQosLimitHoldsAnRbdNamespace() throws Exception {
        CEPH.get().rbd("create", "--size", "8M", "rbd/q");
        Path work = Files.createDirectories(CEPH.dir().resolve("q"));
        Path config = configure(work, "", "\"namespaces\": [" + rbd(1, "q", ", \"qos\": {\"rw_ios_per_sec\": 200}") + "]");
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, work, "--config", config.toString());
             Controller c = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults().ioQueues(2))) {
            BlockDevice d = c.namespace(1);
            long writes = QosEndToEndTest.io(d, 300, 16, 4096, true);
            long reads = QosEndToEndTest.io(d, 300, 16, 4096, false);
            System.out.println("RBD under 200 IOPS: 300 writes in " + writes / 1_000_000 + " ms, 300 reads in "
                    + reads / 1_000_000 + " ms");
            assertTrue(writes >= 1_400_000_000L, "300 writes took " + writes / 1e6 + " ms under a 200-IOPS limit");
            assertTrue(reads >= 1_400_000_000L, "300 reads took " + reads / 1e6 + " ms under a 200-IOPS limit");
            int exit = t.stop();
            assertEquals(0, exit, t.out() + t.err());
        }
    }

    /**
     * Two of our targets, separate processes, serve one image in one subsystem ({@code gateways:
     * true}, disjoint controller IDs): hosts write through both, interleaved, and the image's
     * exclusive lock passes between them as librbd's cooperative locking has it; each reads what
     * the other wrote (no client cache), and {@code rbd export} holds every write.
     */
    @Test
    void twoTargetsWriteOneImageUnderItsCooperativeLock() throws Exception {
        CEPH.get().rbd("create", "--size", "8M", "rbd/g");
        byte[] expected = new byte[8 << 20];
        TargetProcess[] targets = new TargetProcess[2];
        Controller[] hosts = new Controller[2];
        try {
            for (int g = 0; g < 2; g++) {
                Path work = Files.createDirectories(CEPH.dir().resolve("g" + g));
                Path config = configure(work, "", "\"serial\": \"rbdgw\", \"gateways\": true, \"cntlid_min\": "
                        + (1 + g * 1000) + ", \"cntlid_max\": " + (999 + g * 1000) + ", \"namespaces\": ["
                        + rbd(1, "g", "") + "]");
                targets[g] = TargetProcess.start(Fabric.TCP, work, "--config", config.toString());
                hosts[g] = Nvmeof.connect(targets[g].uri(NQN), ConnectOptions.defaults().ioQueues(1)
                        .controllerLossTimeout(Duration.ZERO));
            }
            assertArrayEquals(hosts[0].identifyNamespace(1).nguid(), hosts[1].identifyNamespace(1).nguid(),
                    "both gateways give the image's identity");
            Random random = new Random(17);
            ByteBuffer b = ByteBuffer.allocateDirect(16 << 10);
            for (int i = 0; i < 40; i++) {
                int g = i % 2;
                long at = (long) random.nextInt((8 << 20) / 4096 - 4) * 4096;
                byte[] data = new byte[16 << 10];
                random.nextBytes(data);
                System.arraycopy(data, 0, expected, (int) at, data.length);
                hosts[g].namespace(1).write(at, b.clear().put(data).flip());
                // the other gateway reads it at once
                ByteBuffer back = ByteBuffer.allocateDirect(16 << 10);
                hosts[1 - g].namespace(1).read(at, back);
                byte[] got = new byte[16 << 10];
                back.flip().get(got);
                assertArrayEquals(data, got, "gateway " + (1 - g) + " reads what gateway " + g + " wrote (write " + i + ")");
            }
        } finally {
            for (int g = 0; g < 2; g++) {
                if (hosts[g] != null) {
                    hosts[g].close();
                }
                if (targets[g] != null) {
                    int exit = targets[g].stop();
                    assertEquals(0, exit, targets[g].out() + targets[g].err());
                }
            }
        }
        Path out = CEPH.dir().resolve("g.export");
        CEPH.get().rbd("export", "rbd/g", out.toString());
        assertArrayEquals(expected, Files.readAllBytes(out), "rbd export holds every write of both gateways");
    }

    /**
     * The management API adds an RBD namespace by a configured cluster's name, never a
     * configuration file or client of the caller's, and creates its image only in a pool the
     * configuration lists as creatable.
     */
    @Test
    void theApiCreatesImagesOnlyInCreatablePoolsOfConfiguredClusters() throws Exception {
        Path work = Files.createDirectories(CEPH.dir().resolve("m"));
        Path config = configure(work, ", \"creatable_pools\": [\"rbd\"]", "\"namespaces\": []");
        String socket = work.resolve("rpc.sock").toString();
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, work, "--config", config.toString(), "--rpc-socket", socket,
                "--state-dir", work.resolve("state").toString())) {
            t.await("the management API", () -> t.out().contains("management API on"));
            String add = "{\"nqn\": \"" + NQN + "\", \"backend\": \"rbd\", \"cluster\": \"main\", \"pool\": \"rbd\","
                    + " \"image\": \"made\", \"create\": true, \"size\": \"16M\"%s}";
            String[][] refused = {
                {add.formatted(", \"conf\": \"/tmp/evil.conf\""), "conf"},
                {add.formatted("").replace("\"cluster\": \"main\"", "\"cluster\": \"other\""), "params.cluster"},
                {add.formatted("").replace("\"pool\": \"rbd\"", "\"pool\": \"volumes\""), "params.pool"},
            };
            for (String[] r : refused) {
                TargetProcess.Run run = TargetProcess.cli(60, "rpc", "--socket", socket, "add_namespace", r[0]);
                assertTrue(run.exit() != 0 && (run.out() + run.err()).contains(r[1]), r[0] + ": " + run.out() + run.err());
            }
            TargetProcess.Run run = TargetProcess.cli(60, "rpc", "--socket", socket, "add_namespace", add.formatted(""));
            assertEquals(0, run.exit(), run.out() + run.err());
            assertTrue(CEPH.get().rbd("info", "rbd/made").contains("16 MiB"), "the image was made");
            run = TargetProcess.cli(60, "rpc", "--socket", socket, "add_namespace", add.formatted(", \"nsid\": 2"));
            assertTrue(run.exit() != 0 && (run.out() + run.err()).contains("params.image"), run.out() + run.err());
            try (Controller c = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults().ioQueues(1)
                    .controllerLossTimeout(Duration.ZERO))) {
                assertEquals(16 << 20, c.namespace(1).size());
            }
            int exit = t.stop();
            assertEquals(0, exit, t.out() + t.err());
        }
    }

    /**
     * A cluster that cannot be reached at start fails its namespace within rbd_connect_timeout_ms
     * (here 3 s), naming it, and the target starts and serves the rest.
     */
    @Test
    void aClusterOutOfReachAtStartFailsItsNamespaceAndTheRestIsServed() throws Exception {
        Path work = Files.createDirectories(CEPH.dir().resolve("s"));
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Path dead = work.resolve("dead.conf");
        Files.writeString(dead, Files.readString(CEPH.get().conf()).replaceAll("v2:127\\.0\\.0\\.1:[0-9]+",
                "v2:127.0.0.1:" + port));
        Path config = work.resolve("target.json");
        Files.writeString(config, """
                {"settings": {"rbd_connect_timeout_ms": 3000},
                 "rbd_clusters": [{"name": "away", "conf": "%s"}],
                 "ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "namespaces": [
                     {"nsid": 1, "backend": "rbd", "cluster": "away", "pool": "rbd", "image": "x"},
                     {"nsid": 2, "backend": "ram", "size": "8M"}]}]}
                """.formatted(dead, NQN, NQN));
        long start = System.nanoTime();
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, work, "--config", config.toString());
             Controller c = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults().ioQueues(1)
                     .controllerLossTimeout(Duration.ZERO))) {
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(t.err().contains("namespace 1 (rbd)") && t.err().contains(dead.toString()), t.err());
            assertEquals(8 << 20, c.namespace(2).size(), "the rest is served");
            assertEquals(java.util.List.of(2), c.activeNamespaces(), "namespace 1 is not");
            assertTrue(ms < 60_000, "started after " + ms + " ms");
            int exit = t.stop();
            assertEquals(0, exit, t.out() + t.err());
        }
    }

    /**
     * An RBD namespace removed while hosts write to it, three rounds: its last commands finish
     * (or fail) as it goes, the image closes off the event loops once nothing polls it, and the
     * target lives on serving its other namespace, then stops cleanly.
     */
    @Test
    void removingAnRbdNamespaceUnderWritesLeavesTheTargetServing() throws Exception {
        CEPH.get().rbd("create", "--size", "32M", "rbd/x");
        Path work = Files.createDirectories(CEPH.dir().resolve("x"));
        Path config = configure(work, "", "\"namespaces\": [{\"nsid\": 2, \"backend\": \"ram\", \"size\": \"8M\"}]");
        String socket = work.resolve("rpc.sock").toString();
        String add = "{\"nqn\": \"" + NQN + "\", \"nsid\": 1, \"backend\": \"rbd\", \"cluster\": \"main\","
                + " \"pool\": \"rbd\", \"image\": \"x\"}";
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, work, "--config", config.toString(), "--rpc-socket", socket,
                "--state-dir", work.resolve("state").toString())) {
            t.await("the management API", () -> t.out().contains("management API on"));
            for (int round = 0; round < 3; round++) {
                TargetProcess.Run r = TargetProcess.cli(60, "rpc", "--socket", socket, "add_namespace", add);
                assertEquals(0, r.exit(), r.out() + r.err());
                try (Controller c = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults().ioQueues(2)
                        .controllerLossTimeout(Duration.ZERO))) {
                    BlockDevice d = c.namespace(1);
                    java.util.concurrent.atomic.AtomicLong writes = new java.util.concurrent.atomic.AtomicLong();
                    java.util.List<Thread> writers = new java.util.ArrayList<>();
                    for (int w = 0; w < 4; w++) {
                        int seed = w;
                        Thread th = new Thread(() -> {
                            ByteBuffer b = ByteBuffer.allocateDirect(64 << 10);
                            Random random = new Random(seed);
                            try {
                                while (true) {
                                    d.write((long) random.nextInt(500) * (64 << 10), b.clear());
                                    writes.incrementAndGet();
                                }
                            } catch (Exception e) {
                                // the namespace went: writes end
                            }
                        });
                        th.start();
                        writers.add(th);
                    }
                    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> writes.get() > 50);
                    r = TargetProcess.cli(60, "rpc", "--socket", socket, "remove_namespace",
                            "{\"nqn\": \"" + NQN + "\", \"nsid\": 1}");
                    assertEquals(0, r.exit(), r.out() + r.err());
                    for (Thread th : writers) {
                        th.join(60_000);
                    }
                    ByteBuffer back = ByteBuffer.allocateDirect(4096);
                    c.namespace(2).read(0, back);
                    assertTrue(t.isAlive(), "round " + round + ": the target lives");
                }
            }
            int exit = t.stop();
            assertEquals(0, exit, t.out() + t.err());
        }
    }

    /**
     * Writes {@code work}/target.json: the class's cluster declared as {@code main} (with {@code
     * clusterFields} after its conf), one port on 127.0.0.1 that serves {@link #NQN}, and that
     * subsystem with {@code subsystemFields} after its NQN. Returns the file.
     */
    private static Path configure(Path work, String clusterFields, String subsystemFields) throws Exception {
        Path config = work.resolve("target.json");
        Files.writeString(config, "{\"rbd_clusters\": [{\"name\": \"main\", \"conf\": \"" + CEPH.get().conf() + "\""
                + clusterFields + "}],\n \"ports\": [{\"portid\": 1, \"traddr\": \"127.0.0.1\", \"trsvcid\": 0,"
                + " \"subsystems\": [\"" + NQN + "\"]}],\n \"subsystems\": [{\"nqn\": \"" + NQN + "\", " + subsystemFields
                + "}]}\n");
        return config;
    }

    /** A namespace entry for image {@code image} of pool rbd on cluster main, with {@code fields} after it. */
    private static String rbd(int nsid, String image, String fields) {
        return "{\"nsid\": " + nsid + ", \"backend\": \"rbd\", \"cluster\": \"main\", \"pool\": \"rbd\", \"image\": \""
                + image + "\"" + fields + "}";
    }
}
