package io.nvmeof.cli;

import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.target.backend.BackendSpec;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code nvmeof bench URI --rw randread --bs 4k --iodepth 32 --runtime 5}: fio-style load. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Benchmark a remote namespace like fio: IOPS, bandwidth and latency percentiles.")
final class BenchCommand extends ConnectedCommand {
    @Option(names = "--rw", defaultValue = "randread", description = "read, write, randread, randwrite, rw (readwrite)"
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

    @Option(names = "--number_ios", description = "Stop after this many I/Os (--io_size in I/Os).")
    Long numberIos;

    @Option(names = "--rate_iops", description = "Cap each job at this many IOPS (default: no cap).")
    long rateIops;

    @Option(names = "--random_distribution", defaultValue = "random", description = "random (uniform, the default)"
            + " or zipf:THETA (a few hot blocks, as fio's zipf).")
    String distribution;

    @Option(names = "--numjobs", defaultValue = "1", description = "Jobs, each its own connection, I/O queue and"
            + " thread (default: ${DEFAULT-VALUE}).")
    int numjobs;

    @Option(names = "--group_reporting", description = "Report all jobs together, as one.")
    boolean groupReporting;

    @Option(names = "--bs", defaultValue = "4k", description = "Block size of each I/O (default: ${DEFAULT-VALUE}).")
    String bs;

    @Option(names = "--iodepth", defaultValue = "32", description = "I/Os in flight (default: ${DEFAULT-VALUE}).")
    int iodepth;

    @Option(names = "--runtime", description = "Seconds to run (default: 5).")
    Double runtime;

    @Option(names = {"--ramp_time", "--ramp-time"}, defaultValue = "0", paramLabel = "SECONDS",
            description = "Run the load this long before measuring, as fio's ramp_time: nothing of it is counted,"
                    + " and the JIT has compiled the I/O path when measuring starts (default: ${DEFAULT-VALUE}).")
    double rampTime;

    @Option(names = "--size", description = "Use only SIZE bytes of the namespace (from --offset).")
    String size;

    @Option(names = "--name", defaultValue = "nvmeof", description = "Job name in the report (default: ${DEFAULT-VALUE}).")
    String name;

    @Mixin
    OutputFormat output;

    private Bench.Job job;
    private double seconds;

    @Override
    void checkOptions() {
        Bench.Pattern pattern = Bench.Pattern.parse(rw);
        int blockSize = (int) BackendSpec.parseSize(bs, "--bs");
        long span = size != null ? BackendSpec.parseSize(size, "--size") : 0;
        long start = offset != null ? BackendSpec.parseSize(offset, "--offset") : 0;
        if (ioSize != null && numberIos != null) {
            throw new IllegalArgumentException("give --io_size or --number_ios, not both");
        }
        if (numberIos != null && numberIos <= 0) {
            throw new IllegalArgumentException("--number_ios must be positive");
        }
        long limit = ioSize != null ? BackendSpec.parseSize(ioSize, "--io_size") : numberIos != null ? numberIos * blockSize : 0;
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
        } else if (!distribution.equals("random")) {
            throw new IllegalArgumentException("--random_distribution must be random or zipf:THETA, not '" + distribution + "'");
        }
        if (numjobs < 1 || numjobs > 64) {
            throw new IllegalArgumentException("--numjobs must be 1..64");
        }
        job = new Bench.Job(pattern, rwmixread, blockSize, iodepth, start, span, limit, rateIops, theta);
        seconds = runtime != null ? runtime : limit > 0 ? 86400 : 5;
        output.json();
        if (seconds <= 0 || seconds > 86400) {
            throw new IllegalArgumentException("--runtime must be between 0 and 86400 seconds");
        }
        if (rampTime < 0 || rampTime > 86400) {
            throw new IllegalArgumentException("--ramp_time must be between 0 and 86400 seconds");
        }
    }

    private ConnectOptions connectOptions;

    @Override
    ConnectOptions options(ConnectOptions fromUser) {
        // with several jobs each has a connection and a queue of its own
        connectOptions = numjobs > 1 ? fromUser.ioQueues(1) : fromUser;
        return connectOptions;
    }

    @Override
    void run(Controller c, PrintWriter out) throws Exception {
        List<Controller> extra = new ArrayList<>();
        ExecutorService threads = Executors.newFixedThreadPool(numjobs);
        try {
            List<Bench> benches = new ArrayList<>();
            benches.add(new Bench(Devices.open(c), job));
            for (int i = 1; i < numjobs; i++) {
                Controller more = Controller.connect(Devices.parse(uri), connectOptions);
                extra.add(more);
                benches.add(new Bench(Devices.open(more), job));
            }
            PrintWriter progress = numjobs == 1 && !output.json() && System.console() != null
                    ? spec.commandLine().getErr() : null;
            List<Future<Bench.Result>> running = new ArrayList<>();
            for (Bench b : benches) {
                running.add(threads.submit(() -> b.run(rampTime, seconds, progress)));
            }
            List<Bench.Result> results = new ArrayList<>();
            for (Future<Bench.Result> f : running) {
                try {
                    results.add(f.get());
                } catch (ExecutionException e) {
                    throw e.getCause() instanceof Exception x ? x : e;
                }
            }
            if (groupReporting && results.size() > 1) {
                results = List.of(Bench.Result.merge(results));
            }
            if (output.json()) {
                BenchReport.json(out, name, results, uri, job.rwmixread());
            } else {
                for (Bench.Result r : results) {
                    BenchReport.text(out, name, r);
                }
            }
        } finally {
            threads.shutdownNow();
            for (Controller x : extra) {
                x.close();
            }
        }
    }
}
