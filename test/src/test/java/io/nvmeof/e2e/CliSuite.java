package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The CLI as a user runs it: the jar as a process against a target process. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class CliSuite {
    /** The fabric this run of the suite uses. */
    abstract Fabric fabric();

    static final String NQN = "nqn.2026-11.io.nvmeof:cli";
    @TempDir
    static Path dir;
    TargetProcess target;

    @BeforeAll
    void start() throws Exception {
        target = TargetProcess.start(fabric(), dir, "--listen", fabric().listen(), "--subsystem", NQN,
                "--namespace", "ram:32M", "--namespace", "file:" + dir.resolve("ns2.img") + ",size=8M,bs=512",
                "--max-buffer-memory", "24M");
    }

    @Test
    void theBufferBudgetIsTheOneAskedFor() throws Exception {
        // a small budget serves a bench of large blocks at depth: commands wait for buffers, none fails
        Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> target.out().contains("command data buffers: at most 24 MiB in use"));
        TargetProcess.Run b = TargetProcess.cli(90, "bench", target.uri(NQN, 1), "--rw", "randwrite", "--bs", "1M",
                "--iodepth", "32", "--runtime", "2");
        assertEquals(0, b.exit(), b.err());
        assertTrue(b.out().contains("IOPS"), b.out());
    }

    @AfterAll
    void stop() throws Exception {
        assertEquals(0, target.stop());
        target.assertNoLeaks();
        target.close();
    }

    @Test
    void writeThenReadBackAFileOfOddLength() throws Exception {
        byte[] data = new byte[10_000 + 123];
        new Random(5).nextBytes(data);
        Path in = dir.resolve("in.bin");
        Path out = dir.resolve("out.bin");
        Files.write(in, data);
        String uri = target.uri(NQN, 2);
        TargetProcess.Run w = TargetProcess.cli(60, "write", uri, "--offset", "8192", "--input", in.toString());
        assertEquals(0, w.exit(), w.err());
        assertTrue(w.out().contains("wrote 10123 bytes"), w.out());
        TargetProcess.Run r = TargetProcess.cli(60, "read", uri, "--offset", "8192", "--length", "10123", "--output",
                out.toString());
        assertEquals(0, r.exit(), r.err());
        assertArrayEquals(data, Files.readAllBytes(out));
        // an unaligned read of the middle
        TargetProcess.Run mid = TargetProcess.cli(60, "read", uri, "--offset", "9000", "--length", "777", "--output",
                out.toString());
        assertEquals(0, mid.exit(), mid.err());
        byte[] want = new byte[777];
        System.arraycopy(data, 9000 - 8192, want, 0, 777);
        assertArrayEquals(want, Files.readAllBytes(out));
    }

    /** A target and host that poll without sleeping move data like any other, and the loop does spin. */
    @Test
    void busyPollingTargetAndHostMoveDataAndStopCleanly() throws Exception {
        busyPolling("--busy-poll", true);
    }

    /** With a window the loops poll after each event and sleep when idle: data moves, an idle loop rests. */
    @Test
    void aBusyPollWindowMovesDataAndRestsWhenIdle() throws Exception {
        busyPolling("--busy-poll=200", false);
    }

    /** The default (an adaptive window): data moves, an idle loop rests. */
    @Test
    void theDefaultAdaptivePollMovesDataAndRestsWhenIdle() throws Exception {
        busyPolling("--busy-poll=adaptive", false);
    }

    private void busyPolling(String flag, boolean spinsWhenIdle) throws Exception {
        try (TargetProcess t = TargetProcess.start(fabric(), dir, "--listen", fabric().listen(), "--subsystem", NQN,
                "--namespace", "ram:4M", "--threads", "1", flag)) {
            byte[] data = new byte[300_000];
            new Random(9).nextBytes(data);
            Path in = dir.resolve("busy-in.bin");
            Path out = dir.resolve("busy-out.bin");
            Files.write(in, data);
            TargetProcess.Run w = TargetProcess.cli(60, "write", t.uri(NQN), "--offset", "4096", "--input", in.toString(),
                    flag);
            assertEquals(0, w.exit(), w.err());
            TargetProcess.Run r = TargetProcess.cli(60, "read", t.uri(NQN), "--offset", "4096", "--length",
                    Integer.toString(data.length), "--output", out.toString(), flag);
            assertEquals(0, r.exit(), r.err());
            assertArrayEquals(data, Files.readAllBytes(out));
            // idle: a loop that always polls spends CPU time with the wall clock; one with a window rests
            long before = loopCpuTicks(t.process.pid());
            Thread.sleep(1000);
            long spent = loopCpuTicks(t.process.pid()) - before;
            if (spinsWhenIdle) {
                assertTrue(spent >= 20, "a busy-polling loop spent " + spent + " ticks of CPU in 100 while idle");
            } else {
                assertTrue(spent < 10, "a loop with a busy-poll window spent " + spent + " ticks of CPU in 100 while idle");
            }
            assertEquals(0, t.stop());
            t.assertNoLeaks();
        }
    }

    /** utime + stime of the target's event loop threads, in clock ticks (1/100 s). */
    private static long loopCpuTicks(long pid) throws Exception {
        long ticks = 0;
        try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                if (Files.readString(task.resolve("comm")).startsWith("nvmeof-target")) {
                    String stat = Files.readString(task.resolve("stat"));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
                }
            }
        }
        return ticks;
    }

    @Test
    void benchWritesFioJson() throws Exception {
        TargetProcess.Run r = TargetProcess.cli(60, "bench", target.uri(NQN), "--rw", "randread", "--bs", "4k",
                "--iodepth", "8", "--runtime", "1", "--output-format", "json");
        assertEquals(0, r.exit(), r.err());
        JsonNode job = new ObjectMapper().readTree(r.out()).get("jobs").get(0);
        JsonNode read = job.get("read");
        assertTrue(read.get("iops").asDouble() > 0, r.out());
        assertTrue(read.get("total_ios").asLong() > 0);
        assertEquals(read.get("total_ios").asLong() * 4096, read.get("io_bytes").asLong());
        assertTrue(read.get("bw").asLong() > 0);
        JsonNode lat = read.get("lat_ns");
        assertTrue(lat.get("mean").asDouble() > 0);
        long p50 = lat.get("percentile").get("50.000000").asLong();
        long p99 = lat.get("percentile").get("99.000000").asLong();
        assertTrue(p50 > 0 && p99 >= p50, "p50 " + p50 + " p99 " + p99);
        assertEquals(0, job.get("write").get("total_ios").asLong());

        // fio's ramp_time: the load runs first and none of it is counted
        TargetProcess.Run ramped = TargetProcess.cli(60, "bench", target.uri(NQN), "--rw", "randwrite", "--bs", "4k",
                "--iodepth", "4", "--ramp_time", "1.5", "--runtime", "1", "--output-format", "json");
        assertEquals(0, ramped.exit(), ramped.err());
        JsonNode w = new ObjectMapper().readTree(ramped.out()).get("jobs").get(0).get("write");
        long ms = w.get("runtime").asLong();
        // at least the 1 s run, and less than the ramp and the run together (a busy machine may take long to drain the last I/Os)
        assertTrue(ms >= 1000 && ms < 2500, "measured " + ms + " ms of a 1.5 s ramp and a 1 s run");
        assertTrue(w.get("total_ios").asLong() > 0, ramped.out());
        assertEquals(w.get("total_ios").asLong(), w.get("lat_ns").get("N").asLong(), "latencies of measured I/Os only");

        TargetProcess.Run text = TargetProcess.cli(60, "bench", target.uri(NQN), "--rw", "write", "--bs", "64k",
                "--iodepth", "4", "--runtime", "0.5");
        assertEquals(0, text.exit(), text.err());
        assertTrue(text.out().contains("write: IOPS="), text.out());
        assertTrue(text.out().contains("99.00th="), text.out());
    }

    @Test
    void benchMixesReadsAndWritesAndStopsAtAnIoBound() throws Exception {
        // randrw with 75% reads, bounded by a number of I/Os rather than by time
        TargetProcess.Run mix = TargetProcess.cli(60, "bench", target.uri(NQN), "--rw", "randrw", "--rwmixread", "75",
                "--bs", "4k", "--iodepth", "8", "--number_ios", "4000", "--output-format", "json");
        assertEquals(0, mix.exit(), mix.err());
        JsonNode job = new ObjectMapper().readTree(mix.out()).get("jobs").get(0);
        long reads = job.get("read").get("total_ios").asLong();
        long writes = job.get("write").get("total_ios").asLong();
        assertEquals(4000, reads + writes, "exactly --number_ios I/Os");
        double share = reads / 4000.0;
        assertTrue(share > 0.70 && share < 0.80, "read share " + share + " for --rwmixread 75");
        assertEquals("75", job.get("job options").get("rwmixread").asText());
        assertEquals(reads, job.get("read").get("lat_ns").get("N").asLong(), "read latencies apart from writes");
        // sequential writes in a region, bounded by bytes: the region wraps, the byte count is exact
        TargetProcess.Run bounded = TargetProcess.cli(60, "bench", target.uri(NQN), "--rw", "write", "--bs", "64k",
                "--offset", "1M", "--size", "2M", "--io_size", "8M", "--output-format", "json");
        assertEquals(0, bounded.exit(), bounded.err());
        JsonNode w = new ObjectMapper().readTree(bounded.out()).get("jobs").get(0).get("write");
        assertEquals(8 << 20, w.get("io_bytes").asLong());
        assertEquals(128, w.get("total_ios").asLong());
        // a mixed run in text shows both directions
        TargetProcess.Run text = TargetProcess.cli(60, "bench", target.uri(NQN), "--rw", "rw", "--bs", "4k",
                "--iodepth", "4", "--runtime", "0.5");
        assertEquals(0, text.exit(), text.err());
        assertTrue(text.out().contains("read: IOPS=") && text.out().contains("write: IOPS="), text.out());
        assertOneLineError(TargetProcess.cli(30, "bench", target.uri(NQN), "--rw", "randrw", "--rwmixread", "150"), 1,
                "--rwmixread must be 0..100");
    }

    @Test
    void benchVerifyCatchesACorruptedAndAMisplacedBlock() throws Exception {
        // two passes of sequential 4 KiB writes over the first MiB of the file namespace, read back and checked
        TargetProcess.Run w = TargetProcess.cli(60, "bench", target.uri(NQN, 2), "--rw", "write", "--bs", "4k",
                "--size", "1M", "--io_size", "2M", "--verify", "crc32c");
        assertEquals(0, w.exit(), w.out() + w.err());
        assertTrue(w.out().contains("verify (crc32c): 256 blocks read back, 0 bad"), w.out());
        // one block damaged in the backing file, another overwritten with a copy of a third
        try (java.nio.channels.FileChannel f = java.nio.channels.FileChannel.open(dir.resolve("ns2.img"),
                java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
            f.write(java.nio.ByteBuffer.wrap(new byte[] {1, 2, 3}), 5 * 4096 + 1000);
            java.nio.ByteBuffer copy = java.nio.ByteBuffer.allocate(4096);
            f.read(copy, 9 * 4096);
            f.write(copy.flip(), 12 * 4096);
        }
        TargetProcess.Run check = TargetProcess.cli(60, "bench", target.uri(NQN, 2), "--rw", "read", "--bs", "4k",
                "--size", "1M", "--verify_only", "--verify", "crc32c");
        assertEquals(1, check.exit(), check.out() + check.err());
        assertTrue(check.out().contains("256 blocks read back, 2 bad"), check.out());
        assertTrue(check.out().contains("offset 0x5000: crc32c mismatch"), check.out());
        assertTrue(check.out().contains("offset 0xc000: misplaced: it is the block written for offset 0x9000"), check.out());
        assertTrue(check.firstErrLine().startsWith("nvmeof: verify failed: 2 of 256 blocks bad"), check.err());
    }

    @Test
    void benchJobsRatesAndDistributions() throws Exception {
        // three jobs, each its own connection: three entries, or one with group_reporting
        TargetProcess.Run jobs = TargetProcess.cli(60, "bench", target.uri(NQN), "--numjobs", "3", "--iodepth", "2",
                "--runtime", "0.5", "--output-format", "json");
        assertEquals(0, jobs.exit(), jobs.err());
        JsonNode all = new ObjectMapper().readTree(jobs.out()).get("jobs");
        assertEquals(3, all.size());
        for (JsonNode j : all) {
            assertTrue(j.get("read").get("total_ios").asLong() > 0, jobs.out());
        }
        TargetProcess.Run grouped = TargetProcess.cli(60, "bench", target.uri(NQN), "--numjobs", "3", "--iodepth", "2",
                "--runtime", "0.5", "--group_reporting", "--output-format", "json");
        assertEquals(0, grouped.exit(), grouped.err());
        JsonNode one = new ObjectMapper().readTree(grouped.out()).get("jobs");
        assertEquals(1, one.size());
        assertEquals("6", one.get(0).get("job options").get("iodepth").asText(), "the jobs' depths together");
        // a rate cap holds (a 2 s run at 500 IOPS: 1000 I/Os, give or take the start)
        TargetProcess.Run capped = TargetProcess.cli(60, "bench", target.uri(NQN), "--rate_iops", "500", "--iodepth", "8",
                "--runtime", "2", "--output-format", "json");
        assertEquals(0, capped.exit(), capped.err());
        double iops = new ObjectMapper().readTree(capped.out()).get("jobs").get(0).get("read").get("iops").asDouble();
        assertTrue(iops > 400 && iops < 560, "--rate_iops 500 gave " + iops);
        TargetProcess.Run zipf = TargetProcess.cli(60, "bench", target.uri(NQN), "--random_distribution", "zipf:1.2",
                "--runtime", "0.3");
        assertEquals(0, zipf.exit(), zipf.err());
        assertOneLineError(TargetProcess.cli(30, "bench", target.uri(NQN), "--random_distribution", "pareto:0.5"), 1,
                "--random_distribution must be random, uniform or zipf:THETA");
    }

    private void assertOneLineError(TargetProcess.Run r, int exit, String part) {
        assertEquals(exit, r.exit(), r.out() + r.err());
        assertEquals(1, r.err().lines().count(), "one line:\n" + r.err());
        assertTrue(r.firstErrLine().startsWith("nvmeof: "), r.err());
        assertTrue(r.err().contains(part), r.err());
    }

    @Test
    void mistakesGetOneLineErrors() throws Exception {
        if (!fabric().rdma()) {
            commandLineMistakesGetOneLineErrors(); // what is refused before any connection: the same on every fabric
        }
        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        assertOneLineError(TargetProcess.cli(30, "bench", fabric().uri(closed, NQN)), 1,
                "cannot connect");
        assertOneLineError(TargetProcess.cli(30, "bench", fabric().uri(target.port, "nqn.2026-11.io.nvmeof:nosuch")), 1, "no such subsystem");
        if (!fabric().rdma()) {
            // a peer that accepts and never answers the ICReq: the connect deadline is the one asked for
            try (ServerSocket silent = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
                assertOneLineError(TargetProcess.cli(60, "bench", fabric().uri(silent.getLocalPort(), NQN), "--connect-timeout",
                        "2"), 1, "timed out after 2000 ms");
            }
        }
        Path small = Files.write(dir.resolve("small.bin"), new byte[100]);
        assertOneLineError(TargetProcess.cli(30, "write", target.uri(NQN), "--offset", "100", "--input",
                small.toString()), 1, "not a multiple of the block size");
        // fio's spellings: times with units, --time_based, --ioengine (ours only), sizes with suffixes
        TargetProcess.Run fio = TargetProcess.cli(60, "bench", target.uri(NQN), "--runtime", "300ms", "--time_based",
                "--ioengine", "nvmeof", "--output-format", "json");
        assertEquals(0, fio.exit(), fio.err());
        long ms = new com.fasterxml.jackson.databind.ObjectMapper().readTree(fio.out()).path("jobs").get(0).path("read")
                .path("runtime").asLong();
        assertTrue(ms >= 250 && ms < 2000, "--runtime 300ms ran " + ms + " ms");
        assertOneLineError(TargetProcess.cli(30, "bench", target.uri(NQN), "--size", "1T"), 1, "goes past the end of the device");
        // fio's --timeout is the runtime, --filename what to measure, --percentile_list the percentiles reported
        TargetProcess.Run named = TargetProcess.cli(60, "bench", "--filename", target.uri(NQN), "--timeout", "300ms",
                "--percentile_list", "50:99.9:99.999", "--output-format", "json");
        assertEquals(0, named.exit(), named.err());
        com.fasterxml.jackson.databind.JsonNode read = new com.fasterxml.jackson.databind.ObjectMapper().readTree(named.out())
                .path("jobs").get(0).path("read");
        ms = read.path("runtime").asLong();
        assertTrue(ms >= 250 && ms < 2000, "--timeout 300ms ran " + ms + " ms");
        List<String> keys = new java.util.ArrayList<>();
        read.path("clat_ns").path("percentile").fieldNames().forEachRemaining(keys::add);
        assertEquals(List.of("50.000000", "99.900000", "99.999000"), keys);
        TargetProcess.Run text = TargetProcess.cli(60, "bench", target.uri(NQN), "--runtime", "300ms", "--percentile_list",
                "90:99.999");
        assertEquals(0, text.exit(), text.err());
        assertTrue(text.out().contains("lat percentiles (usec): 90.00th=[") && text.out().contains(", 99.999th=["), text.out());
        // the command timeout is --io-timeout everywhere; --timeout, its old name, still works outside bench, with a warning
        TargetProcess.Run io = TargetProcess.cli(30, "id-ctrl", target.uri(NQN), "--io-timeout", "5");
        assertEquals(0, io.exit(), io.err());
        TargetProcess.Run old = TargetProcess.cli(30, "id-ctrl", target.uri(NQN), "--timeout", "5");
        assertEquals(0, old.exit(), old.err());
        assertTrue(old.err().contains("--timeout is now --io-timeout; the old name goes in the next release"), old.err());
        assertTrue(io.out().contains(NQN) && old.out().contains(NQN), io.out() + old.out());
        TargetProcess.Run sized = TargetProcess.cli(30, "read", target.uri(NQN), "--offset", "8k", "--length", "4k",
                "--output", dir.resolve("sized.bin").toString());
        assertEquals(0, sized.exit(), sized.err());
        assertEquals(4096, Files.size(dir.resolve("sized.bin")));
        // operating-system errors name the object and the cause
        Path nowhere = dir.resolve("no-dir");
        assertOneLineError(TargetProcess.cli(30, "read", target.uri(NQN), "--offset", "0", "--length", "4096", "--output",
                nowhere.resolve("out.bin").toString()), 1, nowhere.resolve("out.bin") + ": no such file or directory ("
                + nowhere + " does not exist)");
        TargetProcess.Run os = TargetProcess.cli(30, "target", "--listen", fabric().listen(), "--subsystem", NQN,
                "--namespace", "file:" + nowhere.resolve("x.img") + ",size=1M");
        assertEquals(1, os.exit(), os.err());
        assertTrue(os.err().contains(nowhere.resolve("x.img") + ": no such file or directory (" + nowhere
                + " does not exist)"), os.err());
        os = TargetProcess.cli(30, "target", "--config", nowhere.resolve("target.json").toString());
        assertEquals(1, os.exit(), os.err());
        assertTrue(os.err().contains("cannot read the configuration: " + nowhere.resolve("target.json")
                + ": no such file or directory"), os.err());
        if (!fabric().rdma()) {
            os = TargetProcess.cli(30, "target", "--listen", "tcp://127.0.0.1:" + target.port, "--subsystem", NQN,
                    "--namespace", "ram:1M");
            assertEquals(1, os.exit(), os.err());
            assertTrue(os.err().contains("cannot listen on tcp://127.0.0.1:" + target.port + ": ")
                    && os.err().contains("Address already in use"), os.err());
        }
        assertOneLineError(TargetProcess.cli(30, "target", "--listen", fabric().listen(), "--subsystem", NQN,
                "--namespace", "ram:huge"), 1, "ram size 'huge'");
    }

    /** Mistakes refused before any connection is made (options, URIs, local files): checked on one fabric. */
    private void commandLineMistakesGetOneLineErrors() throws Exception {
        assertOneLineError(TargetProcess.cli(30, "bench", target.uri(NQN), "--bogus"), 2, "Unknown option: '--bogus'");
        assertOneLineError(TargetProcess.cli(30, "read", "nvme+tcp://127.0.0.1/not-an-nqn", "--offset", "0",
                "--length", "1", "--output", dir.resolve("x").toString()), 1, "bad URI");
        assertOneLineError(TargetProcess.cli(30, "bench", "http://127.0.0.1:1/" + NQN), 1, "scheme must be nvme+");
        assertOneLineError(TargetProcess.cli(30, "bench", target.uri(NQN), "--connect-timeout", "0"), 1,
                "--connect-timeout must be at least 1 second");
        assertOneLineError(TargetProcess.cli(30, "write", target.uri(NQN), "--offset", "0", "--input",
                dir.resolve("missing.bin").toString()), 1, "no such file or directory");
        assertOneLineError(TargetProcess.cli(30, "bench", target.uri(NQN), "--runtime", "5x"), 2, "unknown time unit 'x'");
        assertOneLineError(TargetProcess.cli(30, "bench", target.uri(NQN), "--ioengine", "libaio"), 1,
                "--ioengine=libaio: nvmeof bench runs its own engine");
        assertOneLineError(TargetProcess.cli(30, "bench", target.uri(NQN), "--percentile_list", "50:101"), 1,
                "--percentile_list: 101 is not between 0 and 100");
        assertOneLineError(TargetProcess.cli(30, "bench", target.uri(NQN), "--runtime", "1", "--timeout", "2"), 1,
                "in bench both are the runtime, as in fio");
        assertOneLineError(TargetProcess.cli(30, "bench"), 2, "Missing what to measure");
        assertOneLineError(TargetProcess.cli(30, "bench", target.uri(NQN), "--rw", "sideways"), 1, "--rw 'sideways'");
        TargetProcess.Run help = TargetProcess.cli(30, "--help");
        assertEquals(0, help.exit());
        assertTrue(help.out().contains("bench"), help.out());
    }

    @Test
    void notAllowedHostIsRefused() throws Exception {
        try (TargetProcess t = TargetProcess.start(fabric(), dir, "--listen", fabric().listen(), "--subsystem", NQN,
                "--namespace", "ram:4M", "--allow-host", "nqn.2026-11.io.nvmeof:host-a")) {
            TargetProcess.Run refused = TargetProcess.cli(30, "bench", t.uri(NQN), "--runtime", "0.2",
                    "--hostnqn", "nqn.2026-11.io.nvmeof:host-b");
            assertOneLineError(refused, 1, "not allowed");
            TargetProcess.Run allowed = TargetProcess.cli(30, "bench", t.uri(NQN), "--runtime", "0.2",
                    "--hostnqn", "nqn.2026-11.io.nvmeof:host-a");
            assertEquals(0, allowed.exit(), allowed.err());
            assertEquals(0, t.stop());
        }
    }

    @Test
    void discoverIdentifyAndList() throws Exception {
        TargetProcess.Run d = TargetProcess.cli(60, fabric().discoverArgs("-a", "127.0.0.1", "-s",
                Integer.toString(target.port)));
        assertEquals(0, d.exit(), d.err());
        assertTrue(d.out().contains("Discovery Log Number of Records 2"), d.out());
        assertTrue(d.out().contains("subnqn:  " + NQN), d.out());
        assertTrue(d.out().contains("subtype: current discovery subsystem"), d.out());
        JsonNode dj = new ObjectMapper().readTree(TargetProcess.cli(60, fabric().discoverArgs("-a", "127.0.0.1", "-s",
                Integer.toString(target.port), "-o", "json")).out());
        JsonNode rec = dj.get("records").get(1);
        assertEquals("nvme subsystem", rec.get("subtype").asText());
        assertEquals(fabric().rdma() ? "rdma" : "tcp", rec.get("trtype").asText());
        if (fabric().rdma()) {
            assertEquals("connected", rec.get("rdma_qptype").asText());
            assertEquals("rdma-cm", rec.get("rdma_cms").asText());
        }
        assertEquals(target.uri(NQN), rec.get("uri").asText(), "each entry's URI connects");
        // the discovery service as a URI, as every other command takes a target
        String discoveryUri = target.uri(NQN).replace("/" + NQN, "/");
        TargetProcess.Run byUri = TargetProcess.cli(60, "discover", discoveryUri);
        assertEquals(0, byUri.exit(), byUri.err());
        assertEquals(d.out(), byUri.out(), "discover URI lists what discover -a -s does");
        assertOneLineError(TargetProcess.cli(30, "discover"), 1, "which discovery service?");

        JsonNode ctrl = new ObjectMapper().readTree(TargetProcess.cli(60, "id-ctrl", target.uri(NQN), "-o", "json").out());
        assertEquals(NQN, ctrl.get("subnqn").asText());
        assertEquals(0x66, ctrl.get("sqes").asInt());
        assertEquals(8, ctrl.get("mdts").asInt());
        assertEquals(System.getProperty("project.version"), ctrl.get("fr").asText(), "the firmware revision is the release");
        TargetProcess.Run text = TargetProcess.cli(60, "id-ctrl", target.uri(NQN));
        assertTrue(text.out().contains("sqes      : 0x66"), text.out());

        TargetProcess.Run ns = TargetProcess.cli(60, "id-ns", target.uri(NQN, 2));
        assertEquals(0, ns.exit(), ns.err());
        assertTrue(ns.out().contains("nsze      : 0x4000"), ns.out()); // 8 MiB of 512-byte blocks
        assertTrue(ns.out().contains("lbads:9"), ns.out());
        JsonNode list = new ObjectMapper().readTree(TargetProcess.cli(60, "list", target.uri(NQN), "-o", "json").out());
        assertEquals(2, list.get("namespaces").size());
        assertEquals(32L << 20, list.get("namespaces").get(0).get("size").asLong());
        assertEquals(512, list.get("namespaces").get(1).get("sector_size").asInt());
    }

    @Test
    void demoRunsToACleanExit() throws Exception {
        TargetProcess.Run r = TargetProcess.cli(90, "demo", "--runtime", "0.3", "--size", "64M");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("all bytes match"), r.out());
        assertTrue(r.out().contains("randread-qd32"), r.out());
        assertTrue(r.out().contains("target shut down cleanly"), r.out());
        assertNotEquals(-1, r.out().indexOf("IOPS="));
    }
}
