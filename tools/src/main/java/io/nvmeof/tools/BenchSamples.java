package io.nvmeof.tools;

import java.util.Arrays;
import java.util.List;

/**
 * A direction's bandwidth and IOPS as fio samples them (bw_avg_time and iops_avg_time, 500 ms
 * by default): one value per period of the measured run, KiB/s and I/Os per second.
 */
public record BenchSamples(double[] kibPerSecond, double[] iops) {
    /** fio's default averaging period. */
    static final long PERIOD_NANOS = 500_000_000L;
    static final BenchSamples NONE = new BenchSamples(new double[0], new double[0]);

    /** Jobs that ran side by side: each period's values added, over the periods all of them have (fio's group_reporting). */
    static BenchSamples merge(List<BenchSamples> all) {
        int n = Integer.MAX_VALUE;
        for (BenchSamples s : all) {
            n = Math.min(n, s.kibPerSecond.length);
        }
        if (all.isEmpty() || n == 0) {
            return NONE;
        }
        double[] kib = new double[n];
        double[] iops = new double[n];
        for (BenchSamples s : all) {
            for (int i = 0; i < n; i++) {
                kib[i] += s.kibPerSecond[i];
                iops[i] += s.iops[i];
            }
        }
        return new BenchSamples(kib, iops);
    }

    int count() {
        return kibPerSecond.length;
    }

    static double min(double[] v) {
        return v.length == 0 ? 0 : Arrays.stream(v).min().getAsDouble();
    }

    static double max(double[] v) {
        return v.length == 0 ? 0 : Arrays.stream(v).max().getAsDouble();
    }

    static double mean(double[] v) {
        return v.length == 0 ? 0 : Arrays.stream(v).average().getAsDouble();
    }

    /** The samples' standard deviation (n - 1, as fio's running variance), 0 for fewer than two. */
    static double stddev(double[] v) {
        if (v.length < 2) {
            return 0;
        }
        double m = mean(v);
        double s = 0;
        for (double x : v) {
            s += (x - m) * (x - m);
        }
        return Math.sqrt(s / (v.length - 1));
    }

    /** Collects one direction's samples while a run goes: called with the running totals at each period's end. */
    static final class Collector {
        private double[] kib = new double[16];
        private double[] iops = new double[16];
        private int n;
        private long lastIos;
        private long lastBytes;
        private long lastNanos;

        void start(long nanos, long ios, long bytes) {
            lastNanos = nanos;
            lastIos = ios;
            lastBytes = bytes;
        }

        void sample(long nanos, long ios, long bytes) {
            double seconds = (nanos - lastNanos) / 1e9;
            if (seconds <= 0) {
                return;
            }
            if (n == kib.length) {
                kib = Arrays.copyOf(kib, n * 2);
                iops = Arrays.copyOf(iops, n * 2);
            }
            kib[n] = (bytes - lastBytes) / 1024.0 / seconds;
            iops[n] = (ios - lastIos) / seconds;
            n++;
            start(nanos, ios, bytes);
        }

        BenchSamples done() {
            return new BenchSamples(Arrays.copyOf(kib, n), Arrays.copyOf(iops, n));
        }
    }
}
