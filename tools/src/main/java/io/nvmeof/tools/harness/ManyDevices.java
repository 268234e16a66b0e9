package io.nvmeof.tools.harness;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Multipath;
import io.nvmeof.initiator.Nvmeof;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Connects SUBSYSTEMS multipath sets (NQN PREFIX-0, PREFIX-1, ..., each through ADDRESSES,
 * e.g. {@code 127.0.0.1:4420,127.0.0.1:4421}) and opens NAMESPACES devices in each, then reads
 * 4 KiB at random offsets one at a time (QD1) from the first device for WARMUP seconds
 * unmeasured and SECONDS measured, the others idle, and prints one line:
 * {@code devices=N threads=T iops=I mean_us=M p50_us=P p99_us=Q} (bench/many-devices.sh):
 * {@code java -cp cli/build/nvmeof.jar io.nvmeof.tools.harness.ManyDevices ADDRESSES PREFIX
 * SUBSYSTEMS NAMESPACES WARMUP SECONDS}.
 */
public final class ManyDevices {
    public static void main(String[] args) throws Exception {
        Usage.check(args, 6, "usage: ManyDevices ADDRESSES PREFIX SUBSYSTEMS NAMESPACES WARMUP SECONDS\n  connects"
                + " SUBSYSTEMS multipath sets (NQNs PREFIX-i) of NAMESPACES devices each, then QD1 4 KiB random reads"
                + " on the first for WARMUP s unmeasured and SECONDS s measured; prints the latency");
        String addresses = args[0];
        String prefix = args[1];
        int subsystems = Integer.parseInt(args[2]);
        int namespaces = Integer.parseInt(args[3]);
        long warmup = Long.parseLong(args[4]);
        long seconds = Long.parseLong(args[5]);
        List<Multipath> sets = new ArrayList<>();
        try {
            List<BlockDevice> devices = new ArrayList<>();
            for (int s = 0; s < subsystems; s++) {
                Multipath m = Nvmeof.connectMultipath("nvme+tcp://" + addresses + "/" + prefix + "-" + s,
                        ConnectOptions.defaults());
                sets.add(m);
                for (int n = 1; n <= namespaces; n++) {
                    devices.add(m.namespace(n));
                }
            }
            BlockDevice d = devices.get(0);
            ByteBuffer buf = ByteBuffer.allocateDirect(4096);
            long blocks = d.size() / 4096;
            run(d, buf, blocks, warmup, null);
            long[] samples = new long[(int) Math.min(Integer.MAX_VALUE - 8, seconds * 1_000_000)];
            int n = run(d, buf, blocks, seconds, samples);
            Arrays.sort(samples, 0, n);
            double sum = 0;
            for (int i = 0; i < n; i++) {
                sum += samples[i];
            }
            long threads = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("nvmeof-")).count();
            System.out.printf("devices=%d threads=%d iops=%.0f mean_us=%.2f p50_us=%.2f p99_us=%.2f%n", devices.size(),
                    threads, n / (double) seconds, sum / n / 1000, samples[n / 2] / 1000.0,
                    samples[(int) (n * 0.99)] / 1000.0);
        } finally {
            for (Multipath m : sets) {
                m.close();
            }
        }
    }

    /** QD1 reads for {@code seconds}; each one's latency into {@code samples} if given; returns how many. */
    private static int run(BlockDevice d, ByteBuffer buf, long blocks, long seconds, long[] samples) throws Exception {
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        int n = 0;
        ThreadLocalRandom r = ThreadLocalRandom.current();
        while (true) {
            long start = System.nanoTime();
            if (start - end >= 0 || samples != null && n == samples.length) {
                return n;
            }
            d.read(r.nextLong(blocks) * 4096, buf.clear());
            if (samples != null) {
                samples[n] = System.nanoTime() - start;
            }
            n++;
        }
    }
}
