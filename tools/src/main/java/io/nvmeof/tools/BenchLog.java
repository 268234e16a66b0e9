package io.nvmeof.tools;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * A job's measurements over time, for fio's log files ({@code --write_lat_log},
 * {@code --write_iops_log}, {@code --write_bw_log}) and the plot: every {@code windowMillis}
 * the latencies and I/Os of each direction are summed up into a {@link Window}; without
 * {@code --log_avg_msec} each I/O is also kept, as fio logs them one per line. Recording is
 * wait-free (HdrHistogram's {@link Recorder}, adders, preallocated arrays).
 */
public final class BenchLog implements AutoCloseable {
    /** At most this many I/Os are kept one by one (about 30 MB); past it only windows are kept. */
    public static final int MAX_IOS = 1 << 20;

    /** One window of one direction: when it ended (ms from the start), its I/Os, bytes and latency. */
    public record Window(long endMillis, boolean write, long ios, long bytes, double meanNanos, long p50, long p99, long p999,
                  long windowMillis) {
        double iops() {
            return ios * 1000.0 / windowMillis;
        }
    }

    private final long windowMillis;
    private final Recorder[] latency = {new Recorder(3), new Recorder(3)};
    private final LongAdder[] bytes = {new LongAdder(), new LongAdder()};
    private final List<Window> windows = new ArrayList<>();
    private ScheduledExecutorService sampler;
    private volatile long startNanos;
    private boolean closed;
    private final int bs;
    /** One by one (null when windows only): time (ms), latency (ns), offset, direction. */
    private final long[] ioTime;
    private final long[] ioLatency;
    private final long[] ioOffset;
    private final int[] ioLength;
    private final boolean[] ioWrite;
    private final AtomicInteger ios = new AtomicInteger();

    /**
     * A log in windows of {@code windowMillis}; {@code eachIo} keeps every I/O as well. Jobs may
     * share one (the plot of several jobs); it starts with the first.
     */
    public BenchLog(long windowMillis, boolean eachIo, int bs) {
        if (windowMillis < 1) {
            throw new IllegalArgumentException("--log_avg_msec must be at least 1");
        }
        this.windowMillis = windowMillis;
        this.bs = bs;
        ioTime = eachIo ? new long[MAX_IOS] : null;
        ioLatency = eachIo ? new long[MAX_IOS] : null;
        ioOffset = eachIo ? new long[MAX_IOS] : null;
        ioLength = eachIo ? new int[MAX_IOS] : null;
        ioWrite = eachIo ? new boolean[MAX_IOS] : null;
    }

    /** A log of the same windows, never started or read: a ramp's, to record into as the measured part will. */
    BenchLog sameKind() {
        return new BenchLog(windowMillis, false, bs);
    }

    /** Starts sampling from {@code start} (System.nanoTime of the measured start); later calls do nothing. */
    synchronized void start(long start) {
        if (sampler != null || closed) {
            return;
        }
        startNanos = start;
        sampler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-log");
            t.setDaemon(true);
            return t;
        });
        long firstDelay = Math.max(0, startNanos + windowMillis * 1_000_000 - System.nanoTime());
        sampler.scheduleAtFixedRate(this::sample, firstDelay, windowMillis * 1_000_000, TimeUnit.NANOSECONDS);
    }

    /** One measured I/O completed at {@code now} after {@code nanos}. */
    void record(long now, long nanos, boolean write, int length, long offset) {
        int d = write ? 1 : 0;
        latency[d].recordValue(Math.max(1, nanos));
        bytes[d].add(length);
        if (ioTime != null) {
            int i = ios.getAndIncrement();
            if (i < MAX_IOS) {
                ioTime[i] = (now - startNanos) / 1_000_000;
                ioLatency[i] = nanos;
                ioOffset[i] = offset;
                ioLength[i] = length;
                ioWrite[i] = write;
            }
        }
    }

    /** When the window before the next one ended (ms from the start). */
    private long lastEnd;

    private synchronized void sample() {
        long end = Math.max(0, (System.nanoTime() - startNanos) / 1_000_000);
        long length = Math.max(1, end - lastEnd); // the last window of a run is shorter
        lastEnd = end;
        for (int d = 0; d < 2; d++) {
            Histogram h = latency[d].getIntervalHistogram();
            long b = bytes[d].sumThenReset();
            if (h.getTotalCount() > 0) {
                windows.add(new Window(end, d == 1, h.getTotalCount(), b, h.getMean(), h.getValueAtPercentile(50),
                        h.getValueAtPercentile(99), h.getValueAtPercentile(99.9), length));
            }
        }
    }

    /** Stops sampling; the last, partial window is kept if it saw I/O. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (sampler != null) {
            sampler.shutdownNow();
            sample();
        }
    }

    public synchronized List<Window> windows() {
        return new ArrayList<>(windows);
    }

    /** I/Os recorded one by one that did not fit ({@link #MAX_IOS}). */
    public int dropped() {
        return Math.max(0, ios.get() - MAX_IOS);
    }

    /**
     * Writes fio's log files for job {@code job} (1-based): {@code PREFIX_lat.N.log},
     * {@code _clat} and {@code _slat} (latency in ns), {@code PREFIX_iops.N.log},
     * {@code PREFIX_bw.N.log} (KiB/s); each line "time (ms), value, direction (0 read, 1 write),
     * block size, offset, priority". Averaged windows carry offset 0, as fio's do, and the job's
     * block size (0 with --bssplit, where a window holds several).
     */
    public void writeFio(String latPrefix, String iopsPrefix, String bwPrefix, int job) throws IOException {
        List<Window> ws = windows();
        if (latPrefix != null) {
            Path lat = Path.of(latPrefix + "_lat." + job + ".log");
            try (BufferedWriter w = Files.newBufferedWriter(lat)) {
                if (ioTime != null) {
                    int n = Math.min(ios.get(), MAX_IOS);
                    for (int i = 0; i < n; i++) {
                        line(w, ioTime[i], ioLatency[i], ioWrite[i], ioLength[i], ioOffset[i]);
                    }
                } else {
                    for (Window x : ws) {
                        line(w, x.endMillis(), (long) x.meanNanos(), x.write(), bs, 0);
                    }
                }
            }
            // completion latency is the whole latency here (no submission latency to take off)
            Files.copy(lat, Path.of(latPrefix + "_clat." + job + ".log"), StandardCopyOption.REPLACE_EXISTING);
            // submission latency: the initiator queues a command without waiting, so there is none to log
            try (BufferedWriter w = Files.newBufferedWriter(Path.of(latPrefix + "_slat." + job + ".log"))) {
                for (Window x : ws) {
                    line(w, x.endMillis(), 0, x.write(), bs, 0);
                }
            }
        }
        if (iopsPrefix != null) {
            try (BufferedWriter w = Files.newBufferedWriter(Path.of(iopsPrefix + "_iops." + job + ".log"))) {
                for (Window x : ws) {
                    line(w, x.endMillis(), Math.round(x.iops()), x.write(), bs, 0);
                }
            }
        }
        if (bwPrefix != null) {
            try (BufferedWriter w = Files.newBufferedWriter(Path.of(bwPrefix + "_bw." + job + ".log"))) {
                for (Window x : ws) {
                    line(w, x.endMillis(), Math.round(x.bytes() * 1000.0 / x.windowMillis() / 1024), x.write(), bs, 0);
                }
            }
        }
    }

    private static void line(BufferedWriter w, long millis, long value, boolean write, int bs, long offset)
            throws IOException {
        w.write(String.format(Locale.ROOT, "%d, %d, %d, %d, %d, 0%n", millis, value, write ? 1 : 0, bs, offset));
    }
}
