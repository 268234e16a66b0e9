package io.nvmeof.cli;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.Controller;
import io.nvmeof.target.backend.BackendSpec;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code nvmeof bench URI --rw randread --bs 4k --iodepth 32 --runtime 5}: fio-style load. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Benchmark a remote namespace like fio: IOPS, bandwidth and latency percentiles.")
final class BenchCommand extends ConnectedCommand {
    @Option(names = "--rw", defaultValue = "randread", description = "read, write, randread or randwrite (default: ${DEFAULT-VALUE}).")
    String rw;

    @Option(names = "--bs", defaultValue = "4k", description = "Block size of each I/O (default: ${DEFAULT-VALUE}).")
    String bs;

    @Option(names = "--iodepth", defaultValue = "32", description = "I/Os in flight (default: ${DEFAULT-VALUE}).")
    int iodepth;

    @Option(names = "--runtime", defaultValue = "5", description = "Seconds to run (default: ${DEFAULT-VALUE}).")
    double runtime;

    @Option(names = {"--ramp_time", "--ramp-time"}, defaultValue = "0", paramLabel = "SECONDS",
            description = "Run the load this long before measuring, as fio's ramp_time: nothing of it is counted,"
                    + " and the JIT has compiled the I/O path when measuring starts (default: ${DEFAULT-VALUE}).")
    double rampTime;

    @Option(names = "--size", description = "Use only the first SIZE bytes of the namespace.")
    String size;

    @Option(names = "--name", defaultValue = "nvmeof", description = "Job name in the report (default: ${DEFAULT-VALUE}).")
    String name;

    @Mixin
    OutputFormat output;

    private Bench.Pattern pattern;
    private int blockSize;
    private long span;

    @Override
    void checkOptions() {
        pattern = Bench.Pattern.parse(rw);
        blockSize = (int) BackendSpec.parseSize(bs, "--bs");
        span = size != null ? BackendSpec.parseSize(size, "--size") : 0;
        output.json();
        if (runtime <= 0 || runtime > 86400) {
            throw new IllegalArgumentException("--runtime must be between 0 and 86400 seconds");
        }
        if (rampTime < 0 || rampTime > 86400) {
            throw new IllegalArgumentException("--ramp_time must be between 0 and 86400 seconds");
        }
    }

    @Override
    void run(Controller c, PrintWriter out) throws Exception {
        BlockDevice dev = Devices.open(c);
        Bench bench = new Bench(dev, pattern, blockSize, iodepth, span);
        PrintWriter progress = !output.json() && System.console() != null ? spec.commandLine().getErr() : null;
        Bench.Result r = bench.run(rampTime, runtime, progress);
        if (output.json()) {
            BenchReport.json(out, name, r, uri);
        } else {
            BenchReport.text(out, name, r);
        }
    }
}
