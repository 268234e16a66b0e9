package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bench's fio features as a user runs them (the jar as a process, a target process over
 * NVMe/TCP, and local files and devices): mixed block sizes, json+ bins and iodepth levels,
 * fio-format logs, plots, and a local disk measured like a remote one, with its verify catching
 * a block corrupted behind its back.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BenchFeaturesTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:bench";
    @TempDir
    static Path dir;
    TargetProcess target;
    final ObjectMapper json = new ObjectMapper();

    @BeforeAll
    void start() throws Exception {
        target = TargetProcess.start(Fabric.TCP, dir, "--listen", "tcp://127.0.0.1:0", "--subsystem", NQN,
                "--namespace", "ram:64M");
    }

    @AfterAll
    void stop() throws Exception {
        assertEquals(0, target.stop());
        target.assertNoLeaks();
        target.close();
    }

    JsonNode job(TargetProcess.Run r) throws Exception {
        assertEquals(0, r.exit(), r.err());
        return json.readTree(r.out()).get("jobs").get(0);
    }

    @Test
    void mixedBlockSizesWithBinsAndDepthLevels() throws Exception {
        JsonNode j = job(TargetProcess.cli(60, "bench", target.uri(NQN), "--rw", "randrw", "--bssplit", "4k/50:16k/50",
                "--iodepth", "8", "--io_size", "8M", "-o", "json+"));
        assertEquals("4k/50:16k/50", j.get("job options").get("bssplit").asText());
        long ios = 0;
        long bytes = 0;
        for (String d : new String[] {"read", "write"}) {
            JsonNode dir = j.get(d);
            ios += dir.get("total_ios").asLong();
            bytes += dir.get("io_bytes").asLong();
            long binned = 0;
            for (Iterator<Map.Entry<String, JsonNode>> it = dir.get("clat_ns").get("bins").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                assertTrue(Long.parseLong(e.getKey()) > 0, e.getKey());
                binned += e.getValue().asLong();
            }
            assertEquals(dir.get("total_ios").asLong(), binned, d + ": every I/O in a bin");
        }
        assertTrue(bytes <= 8 << 20 && bytes > (8 << 20) - 16384, "bounded by --io_size: " + bytes);
        assertTrue(bytes > ios * 4096 && bytes < ios * 16384, "both sizes used: " + bytes + " bytes in " + ios + " I/Os");
        JsonNode levels = j.get("iodepth_level");
        double sum = 0;
        for (String k : List.of("1", "2", "4", "8", "16", "32", ">=64")) {
            sum += levels.get(k).asDouble();
        }
        assertEquals(100.0, sum, 0.01);
        assertTrue(levels.get("8").asDouble() > 90, "a closed loop at depth 8 submits at depth 8: " + levels);

        // --number_ios counts I/Os whatever their sizes
        JsonNode n = job(TargetProcess.cli(60, "bench", target.uri(NQN), "--rw", "randread", "--bssplit", "4k/50:64k/50",
                "--number_ios", "3000", "-o", "json"));
        assertEquals(3000, n.get("read").get("total_ios").asLong());
    }

    /** Every key path of a JSON object, below {@code at}; the values of option maps, percentiles and bins are data. */
    static void paths(JsonNode n, String at, java.util.Set<String> out) {
        for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String p = at + "/" + e.getKey();
            out.add(p);
            if (e.getValue().isObject() && !List.of("job options", "percentile", "bins").contains(e.getKey())) {
                paths(e.getValue(), p, out);
            }
        }
    }

    /**
     * fio's JSON as fio 3.x writes it: every key fio's own run writes (fio's null engine as the
     * oracle) is in ours, fio's json+ tool reads ours and validates what it wrote against it, and
     * the bandwidth and IOPS samples agree with each other and with the run.
     */
    @Test
    void fiosOwnToolsReadOurJson() throws Exception {
        Path fio = Path.of("/usr/bin/fio");
        Path clat2csv = Path.of("/usr/bin/fio_jsonplus_clat2csv");
        Assumptions.assumeTrue(Files.isExecutable(fio) && Files.isExecutable(clat2csv),
                "skipped: Debian's fio package (fio, fio_jsonplus_clat2csv) is not installed here");
        TargetProcess.Run ours = TargetProcess.cli(60, "bench", target.uri(NQN), "--rw", "randrw", "--bs", "4k",
                "--iodepth", "4", "--runtime", "3", "-o", "json+");
        JsonNode j = job(ours);
        Path oursFile = dir.resolve("ours.json");
        Files.writeString(oursFile, ours.out());

        Process p = new ProcessBuilder(fio.toString(), "--name=oracle", "--ioengine=null", "--size=16m", "--rw=randrw",
                "--bs=4k", "--runtime=1", "--time_based", "--output-format=json+").redirectErrorStream(false).start();
        String fioOut = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "fio's own run: " + fioOut);
        JsonNode oracle = json.readTree(fioOut);
        java.util.Set<String> want = new java.util.TreeSet<>();
        java.util.Set<String> have = new java.util.TreeSet<>();
        paths(oracle.get("jobs").get(0), "", want);
        paths(j, "", have);
        want.removeAll(have);
        assertTrue(want.isEmpty(), "keys fio writes and we do not: " + want);
        for (String k : List.of("fio version", "timestamp", "timestamp_ms", "time", "jobs")) {
            assertTrue(json.readTree(ours.out()).has(k), k);
        }

        // the tool writes its CSV, then checks it against our JSON
        Path stub = dir.resolve("clat.csv");
        for (boolean validate : new boolean[] {false, true}) {
            ProcessBuilder b = validate ? new ProcessBuilder(clat2csv.toString(), "--validate", oursFile.toString(), stub.toString())
                    : new ProcessBuilder(clat2csv.toString(), oursFile.toString(), stub.toString());
            Process t = b.redirectErrorStream(true).start();
            String tOut = new String(t.getInputStream().readAllBytes());
            assertTrue(t.waitFor(60, TimeUnit.SECONDS) && t.exitValue() == 0, "fio_jsonplus_clat2csv: " + tOut);
            assertTrue(tOut.contains(validate ? "validated" : "generated"), tOut);
        }
        List<String> csv = Files.readAllLines(dir.resolve("clat_job0.csv"));
        assertTrue(csv.size() > 10, "latency rows: " + csv.size());

        for (String d : new String[] {"read", "write"}) {
            JsonNode x = j.get(d);
            long samples = x.get("bw_samples").asLong();
            // a sample every 500 ms of the 3 s run
            assertTrue(samples >= 3 && samples <= 7, d + ": " + samples + " samples");
            assertEquals(samples, x.get("iops_samples").asLong());
            double mean = x.get("bw_mean").asDouble();
            assertTrue(x.get("bw_min").asDouble() <= mean + 1 && mean <= x.get("bw_max").asDouble() + 1, d + ": " + x);
            // 4 KiB each: KiB/s is four times I/Os per second, sample by sample
            assertEquals(4 * x.get("iops_mean").asDouble(), mean, mean * 0.001 + 1, d);
            // the samples' mean is the run's bandwidth, give or take the edges of the run
            assertEquals(x.get("bw").asDouble(), mean, x.get("bw").asDouble() * 0.25, d);
            assertEquals(100.0, x.get("bw_agg").asDouble(), 0.01, d + ": one job has all of the bandwidth");
        }
        assertTrue(j.get("usr_cpu").asDouble() > 0, "the run cost CPU: " + j.get("usr_cpu"));
        assertTrue(j.get("ctx").asLong() > 0, "context switches: " + j.get("ctx"));
        double buckets = 0;
        for (String u : List.of("latency_ns", "latency_us", "latency_ms")) {
            for (Iterator<JsonNode> it = j.get(u).elements(); it.hasNext(); ) {
                buckets += it.next().asDouble();
            }
        }
        assertEquals(100.0, buckets, 0.01, "every I/O in one latency bucket");
        assertEquals(0, j.get("trim").get("total_ios").asLong());
    }

    /**
     * By default a run warms up first, unmeasured, and says how long (the text report's line,
     * JSON's ramp_time); --ramp_time 0 measures from the first I/O and says nothing of a ramp.
     */
    @Test
    void warmsUpByDefaultAndSaysSo() throws Exception {
        TargetProcess.Run text = TargetProcess.cliWith(List.of(), 60, "bench", target.uri(NQN), "--rw", "randread",
                "--bs", "4k", "--iodepth", "8", "--runtime", "1");
        assertEquals(0, text.exit(), text.err());
        java.util.regex.Matcher warm = java.util.regex.Pattern.compile("warm-up: ([0-9.]+) s unmeasured before the runtime")
                .matcher(text.out());
        assertTrue(warm.find(), text.out());
        double seconds = Double.parseDouble(warm.group(1));
        assertTrue(seconds >= 1 && seconds <= 10.5, "four windows of 250 ms at least, 10 s at most: " + seconds);
        JsonNode j = job(TargetProcess.cliWith(List.of(), 60, "bench", target.uri(NQN), "--rw", "randread", "--bs", "4k",
                "--iodepth", "8", "--runtime", "1", "-o", "json"));
        assertTrue(j.get("job options").get("ramp_time").asDouble() >= 1, j.get("job options").toString());
        assertTrue(j.get("read").get("total_ios").asLong() > 0);
        TargetProcess.Run none = TargetProcess.cliWith(List.of(), 60, "bench", target.uri(NQN), "--rw", "randread",
                "--bs", "4k", "--iodepth", "8", "--runtime", "1", "--ramp_time", "0");
        assertEquals(0, none.exit(), none.err());
        assertFalse(none.out().contains("warm-up:") || none.out().contains("ramp:"), none.out());
    }

    /** Several jobs without --group_reporting: each job's report, then fio's total of them all. */
    @Test
    void severalJobsEndWithTheirTotal() throws Exception {
        TargetProcess.Run r = TargetProcess.cli(60, "bench", target.uri(NQN), "--rw", "randread", "--bs", "4k",
                "--iodepth", "2", "--numjobs", "2", "--runtime", "1");
        assertEquals(0, r.exit(), r.err());
        java.util.regex.Matcher each = java.util.regex.Pattern.compile("read: IOPS=\\S+, BW=\\S+ \\(\\S+\\)\\(([0-9.]+)MiB/(\\d+)msec\\)")
                .matcher(r.out());
        double mib = 0;
        int jobs = 0;
        while (each.find()) {
            mib += Double.parseDouble(each.group(1));
            jobs++;
        }
        assertEquals(2, jobs, r.out());
        java.util.regex.Matcher total = java.util.regex.Pattern.compile(
                "Run status group 0 \\(all jobs\\):\\n   READ: bw=\\S+ \\(\\S+\\), \\S+-\\S+ \\(\\S+\\), io=([0-9.]+)(B|KiB|MiB|GiB) ").matcher(r.out());
        assertTrue(total.find(), r.out());
        double mibPerUnit = switch (total.group(2)) {
            case "B" -> 1.0 / (1 << 20);
            case "KiB" -> 1.0 / 1024;
            case "MiB" -> 1;
            default -> 1024;
        };
        double io = Double.parseDouble(total.group(1)) * mibPerUnit;
        assertEquals(mib, io, mib * 0.01 + 1, "the total is the jobs' sum: " + r.out());
    }

    @Test
    void fioLogsAndPlots() throws Exception {
        String each = dir.resolve("each").toString();
        String avg = dir.resolve("avg").toString();
        Path svg = dir.resolve("run.svg");
        JsonNode j = job(TargetProcess.cli(60, "bench", target.uri(NQN), "--rw", "randread", "--iodepth", "4",
                "--runtime", "2", "--rate_iops", "2000", "--write_lat_log", each, "--write_iops_log", each,
                "--plot", svg.toString(), "-o", "json"));
        long ios = j.get("read").get("total_ios").asLong();
        // what this machine delivered in this run, not what an idle one would: a busy machine
        // may run the bench late, slowly or in bursts; the rate cap and the logs' sums hold anyway
        long runtimeMs = j.get("job_runtime").asLong();
        assertTrue(ios > 0 && runtimeMs >= 2000, j.toString());
        List<String> lat = Files.readAllLines(Path.of(each + "_lat.1.log"));
        assertEquals(ios, lat.size(), "one line per I/O without --log_avg_msec");
        for (String line : lat) {
            String[] f = line.split(", ");
            assertEquals(6, f.length, line);
            assertTrue(Long.parseLong(f[0]) >= 0 && Long.parseLong(f[0]) <= runtimeMs + 1000, line);
            assertTrue(Long.parseLong(f[1]) > 0, line);
            assertEquals("0", f[2], "reads: " + line);
            assertEquals("4096", f[3], line);
            assertEquals(0, Long.parseLong(f[4]) % 4096, line);
        }
        assertTrue(Files.exists(Path.of(each + "_clat.1.log")) && Files.exists(Path.of(each + "_slat.1.log")));
        List<String> iops = Files.readAllLines(Path.of(each + "_iops.1.log"));
        assertTrue(!iops.isEmpty() && iops.size() <= runtimeMs / 1000 + 2, "a line a second (and the last, partial one): " + iops);
        // each line is a window's I/Os per second up to its end: summed back they are the run's I/Os,
        // and by no window's end has the bench done more than --rate_iops allows (its schedule
        // catches up after a stall, as fio's does, but never runs ahead of it)
        double done = 0;
        long windowStart = 0;
        for (String line : iops) {
            String[] f = line.split(", ");
            long end = Long.parseLong(f[0]);
            assertTrue(end > windowStart, "windows in order: " + iops);
            done += Long.parseLong(f[1]) * (end - windowStart) / 1000.0;
            windowStart = end;
            assertTrue(done <= 2000 * end / 1000.0 * 1.02 + 8, "--rate_iops 2000 caps the I/Os done by " + end + " ms: " + iops);
        }
        assertEquals(ios, done, ios * 0.02 + 8, "the IOPS log accounts for the run's " + ios + " I/Os: " + iops);
        String plot = Files.readString(svg);
        assertTrue(plot.startsWith("<svg") || plot.startsWith("<?xml"), plot.substring(0, 40));
        assertTrue(plot.contains("read IOPS") && plot.contains("read p99"), "legend of the plot");

        // averaged over windows: a line per window; and nvmeof plot draws fio logs
        TargetProcess.Run r = TargetProcess.cli(60, "bench", target.uri(NQN), "--rw", "randwrite", "--runtime", "2",
                "--write_lat_log", avg, "--write_bw_log", avg, "--log_avg_msec", "500");
        assertEquals(0, r.exit(), r.err());
        List<String> avgLat = Files.readAllLines(Path.of(avg + "_lat.1.log"));
        // a line per 500 ms window that saw I/O: the 2 s run has at most 4 full ones and a partial one
        assertTrue(!avgLat.isEmpty() && avgLat.size() <= 6, "a line per 500 ms window: " + avgLat);
        assertTrue(avgLat.get(0).matches("\\d+, \\d+, 1, 4096, 0, 0"), avgLat.get(0));
        assertEquals(avgLat.size(), Files.readAllLines(Path.of(avg + "_bw.1.log")).size(), "the same windows in both logs");
        Path svg2 = dir.resolve("logs.svg");
        TargetProcess.Run p = TargetProcess.cli(30, "plot", each + "_iops.1.log", each + "_lat.1.log", "-o", svg2.toString());
        assertEquals(0, p.exit(), p.err());
        assertTrue(Files.readString(svg2).contains("read p99"));
        TargetProcess.Run bad = TargetProcess.cli(30, "plot", svg.toString(), "-o", svg2.toString());
        assertEquals(1, bad.exit());
        assertTrue(bad.firstErrLine().contains("is not an _iops, _lat or _clat log"), bad.err());
    }

    @Test
    void aLocalFileLikeARemoteNamespaceAndItsVerify() throws Exception {
        Path file = dir.resolve("local.img");
        JsonNode j = job(TargetProcess.cli(60, "bench", file.toString(), "--size", "16M", "--rw", "randrw",
                "--direct=1", "--runtime", "1", "--iodepth", "4", "-o", "json"));
        assertEquals(16 << 20, Files.size(file), "created with --size");
        assertTrue(j.get("read").get("total_ios").asLong() > 0 && j.get("write").get("total_ios").asLong() > 0);

        TargetProcess.Run w = TargetProcess.cli(60, "bench", file.toString(), "--rw", "write", "--verify", "crc32c",
                "--direct=1", "--io_size", "16M");
        assertEquals(0, w.exit(), w.err());
        assertTrue(w.out().contains("verify (crc32c): 4096 blocks read back, 0 bad"), w.out());
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(0x5000 + 1000);
            f.write(0x55 ^ f.readByte());
        }
        TargetProcess.Run check = TargetProcess.cli(60, "bench", file.toString(), "--verify_only", "--verify", "crc32c");
        assertEquals(1, check.exit(), check.out());
        assertTrue(check.out().contains("1 bad") && check.out().contains("offset 0x5000"), check.out());

        TargetProcess.Run missing = TargetProcess.cli(30, "bench", dir.resolve("nope.img").toString(), "--runtime", "1");
        assertEquals(1, missing.exit());
        assertTrue(missing.firstErrLine().contains("does not exist; give --size to create it"), missing.err());
    }

    /** A block device, where the machine lets us make a loop device. */
    @Test
    void aLocalBlockDevice() throws Exception {
        Path backing = dir.resolve("loop.img");
        try (RandomAccessFile f = new RandomAccessFile(backing.toFile(), "rw")) {
            f.setLength(32 << 20);
        }
        Process p;
        try {
            p = new ProcessBuilder("losetup", "--find", "--show", backing.toString()).start();
        } catch (java.io.IOException e) {
            Assumptions.abort("no losetup here");
            return;
        }
        String dev = new String(p.getInputStream().readAllBytes()).trim();
        Assumptions.assumeTrue(p.waitFor() == 0 && dev.startsWith("/dev/loop"), "no loop device for this test: " + dev);
        try {
            JsonNode j = job(TargetProcess.cli(60, "bench", dev, "--rw", "randread", "--direct=1", "--runtime", "1",
                    "--iodepth", "8", "-o", "json"));
            assertTrue(j.get("read").get("total_ios").asLong() > 0, j.toString());
        } finally {
            new ProcessBuilder("losetup", "-d", dev).start().waitFor();
        }
    }
}
