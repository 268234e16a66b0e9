package io.nvmeof.cli;

import io.nvmeof.tools.BenchReport;
import io.nvmeof.tools.Bench;
import io.nvmeof.fabric.Sizes;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.NvmeofUri;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.ProductVersion;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.RamBackend;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.logging.Level;
import java.util.logging.Logger;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code nvmeof demo}: the whole product in one command. Starts a target with a RAM
 * namespace on loopback, connects the initiator over real NVMe/TCP, writes random data at
 * random offsets, reads it back and compares, runs short benchmarks, shuts down.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Start a target with a RAM namespace on 127.0.0.1, verify a write/read-back and benchmark it.")
final class DemoCommand implements Callable<Integer> {
    static final String NQN = "nqn.2026-11.io.nvmeof:demo";

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--runtime", defaultValue = "3", description = "Seconds per benchmark (default: ${DEFAULT-VALUE}).")
    double runtime;

    @Option(names = "--size", defaultValue = "256M", description = "RAM namespace size (default: ${DEFAULT-VALUE}).")
    String size;

    /** Held so the level sticks: the demo prints its own story, the target's INFO lines would clutter it. */
    private static final Logger QUIET = Logger.getLogger("io.nvmeof");

    @Override
    public Integer call() throws Exception {
        QUIET.setLevel(Level.WARNING);
        PrintWriter out = spec.commandLine().getOut();
        long bytes = Sizes.parse(size, "--size");
        try (Target target = new Target()) {
            Subsystem s = new Subsystem(NQN, "DEMO0001", "nvmeof-java demo", ProductVersion.FIRMWARE_REVISION);
            s.addNamespace(new Namespace(NQN, 1, new RamBackend(bytes, 4096), false, null));
            target.addSubsystem(s);
            InetSocketAddress a = target.listenTcp(new InetSocketAddress("127.0.0.1", 0));
            String uri = "nvme+tcp://127.0.0.1:" + a.getPort() + "/" + NQN;
            out.println("target: " + uri + " (RAM namespace, " + bytes / (1 << 20) + " MiB, "
                    + Runtime.getRuntime().availableProcessors() + " cores)");
            ConnectOptions options = ConnectOptions.defaults().ioQueues(2);
            try (Controller c = Controller.connect(NvmeofUri.parse(uri), options)) {
                BlockDevice dev = c.namespace(1);
                out.println("initiator: connected, controller " + c.cntlid() + ", " + c.ioQueueCount()
                        + " I/O queues, model '" + c.identify().modelNumber() + "'");
                verify(out, dev);
                for (String rw : new String[] {"randwrite", "randread"}) {
                    for (int depth : new int[] {1, 32}) {
                        Bench.Result r = new Bench(dev, Bench.Pattern.parse(rw), 4096, depth, 0).run(runtime, null);
                        BenchReport.text(out, rw + "-qd" + depth, r);
                    }
                }
            }
        }
        out.println("demo: done, target shut down cleanly");
        return 0;
    }

    /** Writes 16 MiB of random data in 64 KiB pieces at random offsets, reads back, compares. */
    private static void verify(PrintWriter out, BlockDevice dev) throws Exception {
        int piece = 64 * 1024;
        int pieces = 256;
        long slots = dev.size() / piece;
        Random rnd = new Random(42);
        List<Long> offsets = new ArrayList<>();
        Set<Long> used = new HashSet<>();
        while (offsets.size() < Math.min(pieces, slots)) {
            long o = (long) (rnd.nextDouble() * slots) * piece;
            if (used.add(o)) {
                offsets.add(o);
            }
        }
        ByteBuffer data = ByteBuffer.allocateDirect(piece * offsets.size());
        byte[] noise = new byte[data.capacity()];
        rnd.nextBytes(noise);
        data.put(noise).clear();
        long t0 = System.nanoTime();
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        for (int i = 0; i < offsets.size(); i++) {
            writes.add(dev.writeAsync(offsets.get(i), data.duplicate().position(i * piece).limit((i + 1) * piece)));
        }
        CompletableFuture.allOf(writes.toArray(new CompletableFuture[0])).get();
        dev.flush();
        ByteBuffer back = ByteBuffer.allocateDirect(data.capacity());
        List<CompletableFuture<Void>> reads = new ArrayList<>();
        for (int i = 0; i < offsets.size(); i++) {
            reads.add(dev.readAsync(offsets.get(i), back.duplicate().position(i * piece).limit((i + 1) * piece)));
        }
        CompletableFuture.allOf(reads.toArray(new CompletableFuture[0])).get();
        long ms = (System.nanoTime() - t0) / 1_000_000;
        if (!back.clear().equals(data.clear())) {
            throw new IllegalStateException("read-back differs from what was written");
        }
        out.printf("verify: wrote, flushed and read back %d MiB at %d random offsets in %d ms: all bytes match%n",
                data.capacity() >> 20, offsets.size(), ms);
    }
}
