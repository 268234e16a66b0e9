package io.nvmeof.cli;

import io.nvmeof.daemon.Signals;
import io.nvmeof.fabric.Sizes;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Multipath;
import io.nvmeof.tools.Bench;
import io.nvmeof.tools.BenchLog;
import io.nvmeof.tools.BenchPlot;
import io.nvmeof.tools.BenchReport;
import io.nvmeof.tools.BlockSizes;
import io.nvmeof.tools.BlockVerify;
import io.nvmeof.tools.LocalDevice;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code nvmeof bench URI --rw randread --bs 4k --iodepth 32 --runtime 5}: fio-style load. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = {"Benchmark a remote namespace like fio: IOPS, bandwidth and latency percentiles.",
            "A path instead of a URI (/dev/nvme0n1, a file) benchmarks a local disk the same way (positional I/O,"
                    + " a thread per slot of --iodepth, O_DIRECT with --direct=1): one tool for a disk local and"
                    + " over the fabric."})
final class BenchCommand extends ConnectedCommand {
    @Parameters(index = "0", arity = "0..1", paramLabel = "URI|PATH", description = ConnectionOptions.URI_HELP
            + "; or a local block device or file (or give it with --filename)")
    void uri(String given) {
        uri = given;
    }

    @Option(names = "--filename", paramLabel = "PATH|URI", description = "fio's: what to measure, instead of the"
            + " positional parameter (a local block device or file, or a URI).")
    String filename;

    @Option(names = "--percentile_list", paramLabel = "P:P:...", description = "fio's: the latency percentiles to"
            + " report, separated by ':' (each 0..100, at most 20), e.g. 99:99.9:99.99.")
    String percentileList;
    private double[] percentiles;

    @Option(names = "--rw", defaultValue = "randread", completionCandidates = Completions.Patterns.class, description = "read, write, randread, randwrite, rw (readwrite)"
            + " or randrw (default: ${DEFAULT-VALUE}).")
    String rw;

    @Option(names = "--rwmixread", defaultValue = "50", description = "Percentage of reads in rw and randrw (default:"
            + " ${DEFAULT-VALUE}).")
    int rwmixread;

    @Option(names = "--offset", description = "Start of the region the job works on (default: 0).")
    String offset;

    @Option(names = {"--io_size", "--io-size"}, description = "Stop after moving this many bytes instead of after"
            + " --runtime (which then defaults to a day).")
    String ioSize;

    @Option(names = "--number_ios", description = "Stop after this many I/Os, whatever their sizes (with --io_size,"
            + " whichever comes first).")
    Long numberIos;

    @Option(names = "--rate_iops", description = "Cap each job at this many IOPS (default: no cap).")
    long rateIops;

    @Option(names = "--random_distribution", defaultValue = "random", description = "random or uniform (the default)"
            + " or zipf:THETA (a few hot blocks, as fio's zipf).")
    String distribution;

    @Option(names = "--numjobs", defaultValue = "1", description = "Jobs, each its own connection, I/O queue and"
            + " thread (default: ${DEFAULT-VALUE}).")
    int numjobs;

    @Option(names = "--group_reporting", description = "Report all jobs together, as one.")
    boolean groupReporting;

    @Option(names = "--verify", completionCandidates = Completions.Verifies.class, description = "crc32c, md5 or pattern: every block written carries a header naming"
            + " its offset and write, and is read back and checked after the run; a corrupted, misplaced or stale"
            + " block is reported by offset and fails the command.")
    String verifyKind;

    @Option(names = "--verify_pattern", description = "The pattern for --verify=pattern: 0x-prefixed hex or a string.")
    String verifyPattern;

    @Option(names = "--verify_only", description = "Do not write: read the region and check the blocks an earlier"
            + " --verify run left there (intact, in their place).")
    boolean verifyOnly;

    @Option(names = "--direct", defaultValue = "0", paramLabel = "0|1", description = "For a local disk or file:"
            + " 1 bypasses the page cache (O_DIRECT), as fio's direct=1 (default: ${DEFAULT-VALUE}, as fio's)."
            + " A remote namespace has no page cache in between.")
    int direct;

    @Option(names = "--bs", defaultValue = "4k", description = "Block size of each I/O (default: ${DEFAULT-VALUE}).")
    String bs;

    @Option(names = "--bssplit", paramLabel = "SIZE/PCT:...", description = "Mixed block sizes by weight, as fio's"
            + " bssplit: 4k/50:64k/40:1m/10 (READS,WRITES for each direction apart; a size without a weight shares"
            + " the rest). Replaces --bs.")
    String bssplit;

    @Option(names = "--iodepth", defaultValue = "32", description = "I/Os in flight (default: ${DEFAULT-VALUE}).")
    int iodepth;

    @Option(names = "--runtime", paramLabel = "TIME", converter = FioValues.Seconds.class,
            description = "How long to run: seconds, or with fio's units (500ms, 10s, 2m, 1h) (default: 5).")
    Double runtime;

    @Option(names = "--timeout", paramLabel = "TIME", converter = FioValues.Seconds.class,
            description = "fio's other name for --runtime. (The command timeout of the other commands is --io-timeout"
                    + " here too.)")
    Double timeout;

    @Option(names = {"--ramp_time", "--ramp-time"}, defaultValue = "auto", paramLabel = "TIME", converter = RampTime.class,
            description = "Run the load this long before measuring, as fio's ramp_time: nothing of it is counted"
                    + " (seconds or fio's units). Default: auto: until the rate has settled and the JIT has compiled"
                    + " the I/O path, here and at a Java target (at most 10 s; the report says how long); 0 measures"
                    + " from the first I/O, as fio's default.")
    double rampTime;

    /** A time, or {@code auto} ({@link Bench#AUTO_RAMP}). */
    static final class RampTime implements CommandLine.ITypeConverter<Double> {
        @Override
        public Double convert(String value) {
            return value.trim().equalsIgnoreCase("auto") ? Bench.AUTO_RAMP : FioValues.seconds(value);
        }
    }

    @Option(names = "--time_based", description = "fio's: run for --runtime. Every run here is, unless --io_size or"
            + " --number_ios bound it (which this then refuses).")
    boolean timeBased;

    @Option(names = "--ioengine", paramLabel = "ENGINE", description = "fio's: nvmeof (this command's own engine, the"
            + " only one; a local disk or file it reads and writes directly). Another is refused.")
    String ioengine;

    @Option(names = "--size", description = "Use only SIZE bytes of the namespace (from --offset).")
    String size;

    @Option(names = "--name", defaultValue = "nvmeof", description = "Job name in the report (default: ${DEFAULT-VALUE}).")
    String name;

    @Option(names = "--write_lat_log", paramLabel = "NAME", description = "Write fio's latency logs NAME_lat.N.log,"
            + " NAME_clat.N.log and NAME_slat.N.log (N: the job, from 1): each I/O, or with --log_avg_msec the mean of"
            + " each window; lines \"msec, nsec, direction, bs, offset, prio\".")
    String latLog;

    @Option(names = "--write_iops_log", paramLabel = "NAME", description = "Write fio's IOPS log NAME_iops.N.log, per"
            + " --log_avg_msec window (default 1000).")
    String iopsLog;

    @Option(names = "--write_bw_log", paramLabel = "NAME", description = "Write fio's bandwidth log NAME_bw.N.log"
            + " (KiB/s), per --log_avg_msec window (default 1000).")
    String bwLog;

    @Option(names = "--log_avg_msec", defaultValue = "0", paramLabel = "MSEC", description = "Average the logs over"
            + " windows of MSEC instead of one line per I/O (default: ${DEFAULT-VALUE}).")
    long logAvgMsec;

    @Option(names = "--plot", paramLabel = "FILE.svg", description = "Draw IOPS and latency percentiles (50, 99, 99.9)"
            + " over the run as an SVG, per --log_avg_msec window (default 1000).")
    Path plot;

    @Mixin
    OutputFormat output;

    private Bench.Job job;
    private double seconds;

    @Override
    void checkOptions() {
        if (filename != null && uri != null && !filename.equals(uri)) {
            throw new IllegalArgumentException("--filename " + filename + " and " + uri + ": give what to measure once");
        }
        if (filename != null) {
            uri = filename;
        }
        if (uri == null) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "Missing what to measure: a URI or a local device or file, or --filename");
        }
        percentiles = percentileList != null ? BenchReport.percentiles(percentileList) : null;
        Bench.Pattern pattern = Bench.Pattern.parse(rw);
        int blockSize = (int) Sizes.parse(bs, "--bs");
        long span = size != null ? Sizes.parse(size, "--size") : 0;
        long start = offset != null ? Sizes.parse(offset, "--offset") : 0;
        if (numberIos != null && numberIos <= 0) {
            throw new IllegalArgumentException("--number_ios must be positive");
        }
        long limit = ioSize != null ? Sizes.parse(ioSize, "--io_size") : 0;
        double theta = 0;
        if (distribution.startsWith("zipf:")) {
            try {
                theta = Double.parseDouble(distribution.substring(5));
            } catch (NumberFormatException e) {
                theta = -1;
            }
            if (!(theta > 0)) {
                throw new IllegalArgumentException("--random_distribution zipf:THETA needs a positive THETA, e.g. zipf:1.2");
            }
        } else if (!distribution.equals("random") && !distribution.equals("uniform")) {
            throw new IllegalArgumentException("--random_distribution must be random, uniform or zipf:THETA, not '"
                    + distribution + "'");
        }
        if (numjobs < 1 || numjobs > 64) {
            throw new IllegalArgumentException("--numjobs must be 1..64");
        }
        BlockVerify verify = null;
        if (verifyKind != null || verifyOnly) {
            BlockVerify.Kind kind = BlockVerify.Kind.parse(verifyKind != null ? verifyKind : "crc32c");
            verify = new BlockVerify(kind, verifyPattern != null ? BlockVerify.parsePattern(verifyPattern) : null);
            if (!pattern.write && !pattern.mixed && !verifyOnly) {
                throw new IllegalArgumentException("--verify checks what the job writes: use a write, randwrite, rw or"
                        + " randrw pattern (or --verify_only to check an earlier run)");
            }
            if (numjobs > 1) {
                throw new IllegalArgumentException("--verify with --numjobs above 1: the jobs would overwrite each"
                        + " other's blocks (give each job its own target, or run one)");
            }
        } else if (verifyPattern != null) {
            throw new IllegalArgumentException("--verify_pattern needs --verify=pattern");
        }
        BlockSizes split = bssplit != null ? BlockSizes.parse(bssplit) : null;
        job = new Bench.Job(pattern, rwmixread, blockSize, iodepth, start, span, limit, numberIos != null ? numberIos : 0,
                rateIops, theta, verify, split);
        if (timeBased && (limit > 0 || numberIos != null)) {
            throw new IllegalArgumentException("--time_based with --io_size or --number_ios: this bench does not repeat"
                    + " a bounded run until --runtime; give one or the other");
        }
        if (ioengine != null && !ioengine.equals("nvmeof")) {
            throw new IllegalArgumentException("--ioengine=" + ioengine + ": nvmeof bench runs its own engine (NVMe-oF,"
                    + " or a local disk or file read directly with --direct=1); leave --ioengine out, or use fio for "
                    + ioengine);
        }
        if (runtime != null && timeout != null && !runtime.equals(timeout)) {
            throw new IllegalArgumentException("--runtime " + runtime + " and --timeout " + timeout + ": in bench both"
                    + " are the runtime, as in fio; give one (the command timeout is --io-timeout)");
        }
        Double asked = runtime != null ? runtime : timeout;
        seconds = asked != null ? asked : limit > 0 || numberIos != null ? 86400 : 5;
        output.json();
        if (seconds <= 0 || seconds > 86400) {
            throw new IllegalArgumentException("--runtime must be between 0 and 86400 seconds");
        }
        if (direct != 0 && direct != 1) {
            throw new IllegalArgumentException("--direct must be 0 or 1");
        }
        if (logAvgMsec < 0 || logAvgMsec > 3_600_000) {
            throw new IllegalArgumentException("--log_avg_msec must be between 0 and 3600000");
        }
        if (plot != null && !plot.toString().endsWith(".svg")) {
            throw new IllegalArgumentException("--plot writes SVG: name a .svg file, not " + plot);
        }
        if (rampTime != Bench.AUTO_RAMP && (rampTime < 0 || rampTime > 86400)) {
            throw new IllegalArgumentException("--ramp_time must be between 0 and 86400 seconds");
        }
    }

    private ConnectOptions connectOptions;

    /** Prints what a verify found (to stderr with JSON output); bad blocks fail the command. */
    private void report(PrintWriter out, Bench.Verification v) throws IOException {
        PrintWriter to = output.json() ? spec.commandLine().getErr() : out;
        to.printf("verify (%s): %d blocks read back, %d bad%n", job.verify().kind().fioName, v.checked(), v.bad());
        for (String p : v.problems()) {
            to.println("  " + p);
        }
        to.flush();
        if (v.bad() > 0) {
            throw new IOException("verify failed: " + v.bad() + " of " + v.checked() + " blocks bad, first "
                    + v.problems().get(0));
        }
    }

    @Override
    ConnectOptions options(ConnectOptions fromUser) {
        // with several jobs each has a connection and a queue of its own
        connectOptions = numjobs > 1 ? fromUser.ioQueues(1) : fromUser;
        return connectOptions;
    }

    /** A local disk or file: no connection; each job opens it for itself. */
    @Override
    Integer runWithoutConnection(PrintWriter out) throws Exception {
        if (!LocalDevice.isLocal(uri)) {
            return null;
        }
        List<LocalDevice> devices = new ArrayList<>();
        try {
            boolean writes = !verifyOnly && (job.pattern().write || job.pattern().mixed);
            long create = size != null ? Sizes.parse(size, "--size") : 0;
            for (int i = 0; i < (verifyOnly ? 1 : numjobs); i++) {
                devices.add(LocalDevice.open(Path.of(uri), create, direct == 1, writes, iodepth));
            }
            runJobs(new ArrayList<>(devices), out);
        } finally {
            for (LocalDevice d : devices) {
                d.close();
            }
        }
        return 0;
    }

    @Override
    void run(Controller c, PrintWriter out) throws Exception {
        List<Controller> extra = new ArrayList<>();
        try {
            List<BlockDevice> devices = new ArrayList<>();
            devices.add(Devices.open(c));
            for (int i = 1; i < (verifyOnly ? 1 : numjobs); i++) {
                Controller more = Controller.connect(Devices.parse(uri), connectOptions);
                extra.add(more);
                devices.add(Devices.open(more));
            }
            runJobs(devices, out);
        } finally {
            for (Controller x : extra) {
                x.close();
            }
        }
    }

    /** Through several paths: every job on the one multipath device; the report says what each path did. */
    @Override
    void run(Multipath m, PrintWriter out) throws Exception {
        BlockDevice d = Devices.open(m);
        List<BlockDevice> devices = new ArrayList<>();
        for (int i = 0; i < (verifyOnly ? 1 : numjobs); i++) {
            devices.add(d);
        }
        runJobs(devices, out);
        if (!output.json()) {
            out.println(ListSubsysCommand.text(m, d.nsid()));
        }
        out.flush();
    }

    /** The run was ended by a signal after its report: the command exits 130, as a shell's Ctrl-C does. */
    static final class Interrupted extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Interrupted() {
            super("interrupted", null, false, false);
        }
    }

    /** One job per device (each its own connection or file handle, and thread), then the report. */
    private void runJobs(List<BlockDevice> devices, PrintWriter out) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(numjobs);
        try {
            if (verifyOnly) {
                Bench.Verification v = new Bench(devices.get(0), job).verify(true);
                report(out, v);
                return;
            }
            List<Bench> benches = new ArrayList<>();
            for (BlockDevice d : devices) {
                benches.add(new Bench(d, job));
            }
            PrintWriter progress = numjobs == 1 && !output.json() && System.console() != null
                    ? spec.commandLine().getErr() : null;
            long window = logAvgMsec > 0 ? logAvgMsec : 1000;
            int logBs = job.split() != null ? 0 : job.blockSize(); // a window of mixed sizes has no one size
            List<BenchLog> jobLogs = new ArrayList<>();
            if (latLog != null || iopsLog != null || bwLog != null) {
                for (Bench b : benches) {
                    BenchLog l = new BenchLog(window, latLog != null && logAvgMsec == 0, logBs);
                    b.logTo(l);
                    jobLogs.add(l);
                }
            }
            BenchLog plotLog = plot != null ? new BenchLog(window, false, logBs) : null;
            if (plotLog != null) {
                benches.forEach(b -> b.logTo(plotLog));
            }
            // Ctrl-C (or SIGTERM) ends the run as its time would: the report of what ran, marked, then exit 130
            AtomicBoolean interrupted = new AtomicBoolean();
            Signals.onTermination(() -> {
                if (interrupted.compareAndSet(false, true)) {
                    spec.commandLine().getErr().println("bench: terminating on signal (the report of what ran follows)");
                    spec.commandLine().getErr().flush();
                }
                benches.forEach(Bench::stop);
            });
            // a run bounded by bytes or I/Os, or one that verifies, counts from its first I/O unless told otherwise
            double ramp = rampTime == Bench.AUTO_RAMP && (ioSize != null || numberIos != null || job.verify() != null)
                    ? 0 : rampTime;
            List<Future<Bench.Result>> running = new ArrayList<>();
            for (Bench b : benches) {
                running.add(threads.submit(() -> b.run(ramp, seconds, progress)));
            }
            List<Bench.Result> results = new ArrayList<>();
            for (Future<Bench.Result> f : running) {
                try {
                    results.add(f.get());
                } catch (ExecutionException e) {
                    throw e.getCause() instanceof Exception x ? x : e;
                }
            }
            for (int i = 0; i < jobLogs.size(); i++) {
                jobLogs.get(i).close();
                jobLogs.get(i).writeFio(latLog, iopsLog, bwLog, i + 1);
                if (jobLogs.get(i).dropped() > 0) {
                    spec.commandLine().getErr().printf("bench: the latency log of job %d kept its first %d I/Os only;"
                            + " --log_avg_msec keeps averages of all%n", i + 1, BenchLog.MAX_IOS);
                }
            }
            if (plotLog != null) {
                plotLog.close();
                BenchPlot.svg(plot, name + ": " + job.pattern().fioName + ", bs=" + job.bsText() + ", iodepth="
                        + job.iodepth() + (numjobs > 1 ? ", " + numjobs + " jobs" : ""), plotLog.windows());
            }
            List<Bench.Result> eachJob = results;
            if (groupReporting && results.size() > 1) {
                results = List.of(Bench.Result.merge(results));
            }
            if (output.json()) {
                BenchReport.json(out, name, results, uri, job.rwmixread(), output.jsonPlus(), interrupted.get(),
                        percentiles != null ? percentiles : BenchReport.PERCENTILES);
            } else {
                for (Bench.Result r : results) {
                    BenchReport.text(out, name, r, percentiles);
                }
                BenchReport.groupStatus(out, eachJob);
                if (interrupted.get()) {
                    out.printf(java.util.Locale.ROOT, "interrupted: %.1f s of the %.0f s asked for ran%n",
                            results.get(0).elapsedNanos() / 1e9, seconds);
                }
            }
            out.flush();
            if (interrupted.get()) {
                throw new Interrupted();
            }
            if (job.verify() != null) {
                long checked = 0;
                long bad = 0;
                List<String> problems = new ArrayList<>();
                for (Bench b : benches) {
                    Bench.Verification v = b.verify(false);
                    checked += v.checked();
                    bad += v.bad();
                    problems.addAll(v.problems());
                }
                report(out, new Bench.Verification(checked, bad, problems));
            }
        } finally {
            threads.shutdownNow();
        }
    }
}
