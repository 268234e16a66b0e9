package io.nvmeof.cli;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.Controller;
import io.nvmeof.target.backend.BackendSpec;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code nvmeof bench URI --rw randread --bs 4k --iodepth 32 --runtime 5}: fio-style load. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Benchmark a remote namespace like fio: IOPS, bandwidth and latency percentiles.")
final class BenchCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "URI", description = ConnectionOptions.URI_HELP)
    String uri;

    @Option(names = "--rw", defaultValue = "randread", description = "read, write, randread or randwrite (default: ${DEFAULT-VALUE}).")
    String rw;

    @Option(names = "--bs", defaultValue = "4k", description = "Block size of each I/O (default: ${DEFAULT-VALUE}).")
    String bs;

    @Option(names = "--iodepth", defaultValue = "32", description = "I/Os in flight (default: ${DEFAULT-VALUE}).")
    int iodepth;

    @Option(names = "--runtime", defaultValue = "5", description = "Seconds to run (default: ${DEFAULT-VALUE}).")
    double runtime;

    @Option(names = "--size", description = "Use only the first SIZE bytes of the namespace.")
    String size;

    @Option(names = "--name", defaultValue = "nvmeof", description = "Job name in the report (default: ${DEFAULT-VALUE}).")
    String name;

    @Option(names = "--output-format", defaultValue = "normal", description = "normal or json (fio's layout).")
    String format;

    @Mixin
    ConnectionOptions connection;

    @Override
    public Integer call() throws Exception {
        Bench.Pattern pattern = Bench.Pattern.parse(rw);
        int blockSize = (int) BackendSpec.parseSize(bs, "--bs");
        long span = size != null ? BackendSpec.parseSize(size, "--size") : 0;
        if (!format.equals("normal") && !format.equals("json")) {
            throw new IllegalArgumentException("--output-format '" + format + "': expected normal or json");
        }
        if (runtime <= 0 || runtime > 86400) {
            throw new IllegalArgumentException("--runtime must be between 0 and 86400 seconds");
        }
        PrintWriter out = spec.commandLine().getOut();
        try (Controller c = Controller.connect(Devices.parse(uri), connection.toOptions())) {
            BlockDevice dev = Devices.open(c);
            Bench bench = new Bench(dev, pattern, blockSize, iodepth, span);
            PrintWriter progress = format.equals("normal") && System.console() != null ? spec.commandLine().getErr() : null;
            Bench.Result r = bench.run(runtime, progress);
            if (format.equals("json")) {
                BenchReport.json(out, name, r, uri);
            } else {
                BenchReport.text(out, name, r);
            }
        }
        return 0;
    }
}
