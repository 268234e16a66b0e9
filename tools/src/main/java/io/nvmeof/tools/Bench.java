package io.nvmeof.tools;

import io.nvmeof.fabric.Failures;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.IoCallback;
import io.nvmeof.initiator.IoRequest;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.apache.commons.rng.sampling.distribution.RejectionInversionZipfSampler;
import org.apache.commons.rng.sampling.distribution.SharedStateDiscreteSampler;
import org.apache.commons.rng.simple.RandomSource;

/**
 * A closed-loop load like fio's: {@code iodepth} commands always in flight against a block
 * device for a fixed time, each completion issuing the next from the event loop it completed on
 * (no hand-off between threads per I/O). Latency is completion minus submission, recorded in
 * nanoseconds. A ramp time runs the load first and counts none of it (fio's {@code ramp_time}):
 * the JIT compiles the path before it is measured. Each slot of the queue depth is one reusable
 * {@link IoRequest} with its buffer, so nothing is allocated per I/O when a transfer fits in
 * one command.
 */
public final class Bench {
    public enum Pattern {
        READ("read", false, false, false), WRITE("write", true, false, false), RANDREAD("randread", false, true, false),
        RANDWRITE("randwrite", true, true, false), RW("rw", false, false, true), RANDRW("randrw", false, true, true);

        public final String fioName;
        public final boolean write;
        final boolean random;
        /** Reads and writes mixed (fio's rw/readwrite and randrw, by --rwmixread). */
        public final boolean mixed;

        Pattern(String fioName, boolean write, boolean random, boolean mixed) {
            this.fioName = fioName;
            this.write = write;
            this.random = random;
            this.mixed = mixed;
        }

        public static Pattern parse(String s) {
            if (s.equals("readwrite")) {
                return RW;
            }
            for (Pattern p : values()) {
                if (p.fioName.equals(s)) {
                    return p;
                }
            }
            throw new IllegalArgumentException("--rw '" + s + "': expected read, write, randread, randwrite, rw or randrw");
        }
    }

    /**
     * What one job does, fio's names: the pattern, the share of reads in a mix ({@code rwmixread}),
     * block size, queue depth, the region ({@code offset}, {@code size}: 0 for the rest of the
     * device), and an optional bound on the bytes it moves ({@code io_size}; 0: bounded by time).
     */
    public record Job(Pattern pattern, int rwmixread, int blockSize, int iodepth, long offset, long size, long ioSize,
               long numberIos, long rateIops, double zipfTheta, BlockVerify verify, BlockSizes split) {
        Job(Pattern pattern, int blockSize, int iodepth, long size) {
            this(pattern, 50, blockSize, iodepth, 0, size, 0, 0, 0, 0, null, null);
        }

        /** The block size as reports name it: the size, or the bssplit. */
        public String bsText() {
            return split != null ? split.toString() : Integer.toString(blockSize);
        }
    }

    /** What reading back the written blocks found: blocks checked, bad ones, and the first few problems. */
    public record Verification(long checked, long bad, List<String> problems) {
    }

    /** One direction's share of a run. */
    public record Direction(long ios, long bytes, Histogram latency, BenchSamples samples) {
        double iops(long elapsedNanos) {
            return ios * 1e9 / elapsedNanos;
        }

        double bytesPerSecond(long elapsedNanos) {
            return bytes * 1e9 / elapsedNanos;
        }
    }

    /** {@link #run}'s ramp: warm up until the rate settles, at most {@link #AUTO_RAMP_MAX_NANOS}. */
    public static final double AUTO_RAMP = -1;
    static final long AUTO_RAMP_MAX_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final long RAMP_WINDOW_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    /**
     * How long the load ran unmeasured before the measured part, and whether that was decided by
     * the run ({@link #AUTO_RAMP}: until the rate settled and this JVM's JIT went quiet, or the
     * limit passed without that) or asked for.
     */
    public record Ramp(long nanos, boolean auto, boolean settled) {
        static final Ramp NONE = new Ramp(0, false, true);
    }

    /**
     * Whether a warm-up has settled, from its windows of {@link #RAMP_WINDOW_NANOS}: at least four
     * windows ran, the last four completed within 8% of one another (a JIT still compiling, here
     * or at the target, raises the rate from window to window), and this JVM's JIT compiled for
     * less than a twentieth of each of the last two.
     */
    static boolean settled(long[] completions, long[] compileMillis, int n) {
        if (n < 4) {
            return false;
        }
        long min = Long.MAX_VALUE;
        long max = 0;
        for (int i = n - 4; i < n; i++) {
            min = Math.min(min, completions[i]);
            max = Math.max(max, completions[i]);
        }
        long quiet = TimeUnit.NANOSECONDS.toMillis(RAMP_WINDOW_NANOS) / 20;
        return min > 0 && max <= min * 1.08 && compileMillis[n - 1] < quiet && compileMillis[n - 2] < quiet;
    }

    /** fio's iodepth_level buckets: I/Os submitted with this many in flight (the last, 64 and more). */
    static final int[] DEPTH_LEVELS = {1, 2, 4, 8, 16, 32, 64};

    /** Which {@link #DEPTH_LEVELS} bucket {@code depth} in flight falls into (fio counts 3 as "4"). */
    static int depthLevel(int depth) {
        int i = 0;
        while (i < DEPTH_LEVELS.length - 1 && depth > DEPTH_LEVELS[i]) {
            i++;
        }
        return i;
    }

    /**
     * What a run measured, reads and writes apart; {@code depthLevels} counts measured submissions
     * by the I/Os in flight as each was submitted, in {@link #DEPTH_LEVELS} buckets.
     */
    public record Result(Pattern pattern, String bs, int iodepth, long elapsedNanos, Direction read, Direction write,
                  long[] depthLevels, ProcessUsage usage, Ramp ramp) {
        long ios() {
            return read.ios() + write.ios();
        }

        double iops() {
            return ios() * 1e9 / elapsedNanos;
        }

        double bytesPerSecond() {
            return (read.bytes() + write.bytes()) * 1e9 / elapsedNanos;
        }

        /** Several jobs' results as one (fio's group_reporting): counts and latencies added, the longest runtime. */
        public static Result merge(List<Result> all) {
            Result first = all.get(0);
            long elapsed = 0;
            long rIos = 0;
            long rBytes = 0;
            long wIos = 0;
            long wBytes = 0;
            int depth = 0;
            long[] levels = new long[DEPTH_LEVELS.length];
            Ramp ramp = Ramp.NONE;
            Histogram rl = new Histogram(3);
            Histogram wl = new Histogram(3);
            for (Result r : all) {
                elapsed = Math.max(elapsed, r.elapsedNanos());
                ramp = r.ramp().nanos() > ramp.nanos() ? r.ramp() : ramp;
                rIos += r.read().ios();
                rBytes += r.read().bytes();
                wIos += r.write().ios();
                wBytes += r.write().bytes();
                depth += r.iodepth();
                rl.add(r.read().latency());
                wl.add(r.write().latency());
                for (int i = 0; i < levels.length; i++) {
                    levels[i] += r.depthLevels()[i];
                }
            }
            // one process ran them all: its usage is each job's
            return new Result(first.pattern(), first.bs(), depth, elapsed,
                    new Direction(rIos, rBytes, rl, BenchSamples.merge(all.stream().map(r -> r.read().samples()).toList())),
                    new Direction(wIos, wBytes, wl, BenchSamples.merge(all.stream().map(r -> r.write().samples()).toList())),
                    levels, first.usage(), ramp);
        }

        /** The latencies of both directions together. */
        Histogram latency() {
            Histogram h = read.latency().copy();
            h.add(write.latency());
            return h;
        }
    }

    private final BlockDevice device;
    private final Pattern pattern;
    /** The largest I/O (buffers are this big), and the unit offsets are aligned to (the smallest). */
    private final int blockSize;
    private final int unit;
    /** --bssplit, or null for every I/O of {@link #blockSize}. */
    private final BlockSizes split;
    private final String bsText;
    private final int iodepth;
    private final long offset;
    private final long span;
    private final int rwmixread;
    /** Bytes to move before stopping (0: stop by time). */
    private final long ioLimit;
    private final AtomicLong issuedBytes = new AtomicLong();
    /** I/Os to issue before stopping (0: no such bound), fio's number_ios. */
    private final long iosLimit;
    private final AtomicLong issuedIos = new AtomicLong();
    private final AtomicLong sequential = new AtomicLong();
    /** --rate_iops: the time between two issues, and the issue tickets handed out (0: no cap). */
    private final long issueIntervalNanos;
    private final AtomicLong tickets = new AtomicLong();
    private volatile long rateFrom;
    private final ScheduledExecutorService pacer;
    /** --random_distribution=zipf:theta: a sampler per thread (they keep state), or null for uniform. */
    private final ThreadLocal<SharedStateDiscreteSampler> zipf;
    private final long zipfMultiplier;
    /** --verify: what each written block holds, and the generation of the last write per block. */
    private final BlockVerify verify;
    private final long[] lastGeneration;
    private final AtomicLong generations = new AtomicLong();
    /** I/Os in flight now, and measured submissions by how many were in flight (fio's iodepth_level). */
    private final AtomicInteger inFlight = new AtomicInteger();
    /**
     * What completions are counted into: the measured part's tally, or the ramp's, which is
     * thrown away. Both run the same code: a completion picks its tally by index, not by a branch,
     * so the JIT compiles while ramping the very path the measured part takes (a ramp that skipped
     * the counting would leave a path the JIT had never seen, compiled away, and the measured part
     * would begin by falling back to the interpreter).
     */
    private static final class Tally {
        final Recorder readLatency = new Recorder(3);
        final Recorder writeLatency = new Recorder(3);
        final AtomicLong reads = new AtomicLong();
        final AtomicLong writes = new AtomicLong();
        final LongAdder readBytes = new LongAdder();
        final LongAdder writeBytes = new LongAdder();
        /** Submissions by how many were in flight (fio's iodepth_level). */
        final LongAdder[] depthLevels = new LongAdder[DEPTH_LEVELS.length];
        /** --write_*_log, --log_avg_msec, --plot: where the run over time goes (the ramp's: never read). */
        BenchLog[] logs = new BenchLog[0];

        Tally() {
            for (int i = 0; i < depthLevels.length; i++) {
                depthLevels[i] = new LongAdder();
            }
        }

        long ios() {
            return reads.get() + writes.get();
        }

        long bytes() {
            return readBytes.sum() + writeBytes.sum();
        }
    }

    private final Tally measured = new Tally();
    private final Tally[] tallies = {measured, new Tally()};

    /** The tally of an I/O submitted at {@code t}: the measured part's from {@link #measureFrom} on. */
    private Tally tally(long t) {
        return tallies[(int) ((t - measureFrom) >>> 63)];
    }

    /** Counts a submission: in flight, and its depth level. */
    private void submitted(long now) {
        tally(now).depthLevels[depthLevel(inFlight.incrementAndGet())].increment();
    }

    /** Records the run over time into {@code l} too (started with the measured run; closed by the caller). */
    public void logTo(BenchLog l) {
        measured.logs = Arrays.copyOf(measured.logs, measured.logs.length + 1);
        measured.logs[measured.logs.length - 1] = l;
        Tally ramp = tallies[1];
        ramp.logs = Arrays.copyOf(ramp.logs, ramp.logs.length + 1);
        ramp.logs[ramp.logs.length - 1] = l.sameKind();
    }

    /** Completions, ramp included. */
    private final AtomicLong completed = new AtomicLong();
    private final AtomicReference<Throwable> error = new AtomicReference<>();
    private volatile long stopAt;
    /** I/Os submitted from this time on are measured (the ramp ends). */
    private volatile long measureFrom;
    /** When the last I/O completed (a run bounded by --io_size ends there). */
    private volatile long lastCompletion;

    public Bench(BlockDevice device, Pattern pattern, int blockSize, int iodepth, long span) {
        this(device, new Job(pattern, blockSize, iodepth, span));
    }

    public Bench(BlockDevice device, Job job) {
        Pattern pattern = job.pattern();
        BlockSizes split = job.split();
        int blockSize = split != null ? split.max() : job.blockSize();
        int iodepth = job.iodepth();
        for (int size : split != null ? split.all() : List.of(blockSize)) {
            if (size <= 0 || size % device.blockSize() != 0) {
                throw new IllegalArgumentException((split != null ? "--bssplit " : "--bs ") + size
                        + " is not a multiple of the device's " + device.blockSize() + "-byte blocks");
            }
        }
        if (iodepth < 1 || iodepth > 4096) {
            throw new IllegalArgumentException("--iodepth must be 1..4096: " + iodepth);
        }
        if (job.rwmixread() < 0 || job.rwmixread() > 100) {
            throw new IllegalArgumentException("--rwmixread must be 0..100: " + job.rwmixread());
        }
        if (job.offset() < 0 || job.offset() % device.blockSize() != 0 || job.offset() >= device.size()) {
            throw new IllegalArgumentException("--offset " + job.offset() + " must be a multiple of the device's "
                    + device.blockSize() + "-byte blocks inside its " + device.size() + " bytes");
        }
        if (job.ioSize() < 0) {
            throw new IllegalArgumentException("--io_size must not be negative");
        }
        this.device = device;
        this.pattern = pattern;
        this.blockSize = blockSize;
        this.split = split;
        this.unit = split != null ? split.min() : blockSize;
        this.bsText = job.bsText();
        this.iodepth = iodepth;
        this.offset = job.offset();
        this.rwmixread = pattern.mixed ? job.rwmixread() : pattern.write ? 0 : 100;
        this.ioLimit = job.ioSize();
        if (job.numberIos() < 0) {
            throw new IllegalArgumentException("--number_ios must not be negative");
        }
        this.iosLimit = job.numberIos();
        if (job.rateIops() < 0) {
            throw new IllegalArgumentException("--rate_iops must not be negative");
        }
        this.issueIntervalNanos = job.rateIops() > 0 ? Math.max(1, 1_000_000_000L / job.rateIops()) : 0;
        this.pacer = job.rateIops() > 0 ? Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-pacer");
            t.setDaemon(true);
            return t;
        }) : null;
        long room = device.size() - offset;
        if (job.size() > room) {
            throw new IllegalArgumentException("--size " + job.size() + " from --offset " + offset + " goes past the end of"
                    + " the device (" + device.size() + " bytes)");
        }
        this.span = Math.min(job.size() <= 0 ? room : job.size(), room) / unit * unit;
        if (this.span < blockSize) {
            throw new IllegalArgumentException("the device (or --size past --offset) is smaller than one " + blockSize
                    + "-byte I/O");
        }
        long slots = span / unit;
        if (job.zipfTheta() != 0 && (job.zipfTheta() <= 0 || slots > Integer.MAX_VALUE)) {
            throw new IllegalArgumentException("zipf needs a positive theta and at most 2^31 blocks in the region");
        }
        double theta = job.zipfTheta();
        this.zipfMultiplier = spreading(slots);
        this.verify = job.verify();
        if (verify != null && split != null) {
            throw new IllegalArgumentException("--verify tracks blocks of one size: not with --bssplit");
        }
        if (verify != null) {
            if (slots > 1L << 27) {
                throw new IllegalArgumentException("--verify tracks at most 2^27 blocks: give a smaller --size");
            }
            if (theta != 0) {
                throw new IllegalArgumentException("--verify writes each block once per pass: not with zipf");
            }
            if (blockSize < BlockVerify.HEADER * 2) {
                throw new IllegalArgumentException("--verify needs blocks of at least 128 bytes");
            }
        }
        this.lastGeneration = verify != null ? new long[(int) slots] : null;
        this.zipf = theta == 0 ? null : ThreadLocal.withInitial(() -> RejectionInversionZipfSampler.of(
                RandomSource.XO_RO_SHI_RO_128_PP.create(), (int) slots, theta));
    }

    /**
     * A block of a zipf-distributed rank: rank 1 is the hottest. Ranks are spread over the region
     * by a fixed permutation (multiplying by an odd constant prime to the number of blocks), as fio
     * scatters its hot blocks instead of putting them all at the start.
     */
    private long zipfBlock(long slots) {
        long rank = zipf.get().sample() - 1;
        return Math.floorMod(rank * zipfMultiplier, slots);
    }

    /** A multiplier prime to the number of blocks: rank to block is a permutation. */
    private static long spreading(long slots) {
        long mult = (0x9E3779B97F4A7C15L >>> 1) % slots;
        while (mult == 0 || gcd(mult, slots) != 1) {
            mult = (mult + 1) % slots;
        }
        return mult;
    }

    private static long gcd(long a, long b) {
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return a;
    }

    /** Where the next I/O of {@code size} bytes goes: on a multiple of the smallest size, inside the region. */
    private long nextOffset(int size) {
        long slots = span / unit;
        if (pattern.random && verify != null) {
            // each block once per pass (a permutation): no two writes in flight to one block
            return offset + Math.floorMod((sequential.getAndIncrement() % slots) * zipfMultiplier, slots) * unit;
        }
        long last = (span - size) / unit; // the last slot an I/O of this size fits at
        if (pattern.random) {
            long slot = zipf != null ? Math.min(zipfBlock(slots), last) : ThreadLocalRandom.current().nextLong(last + 1);
            return offset + slot * unit;
        }
        if (split == null) {
            return offset + (sequential.getAndIncrement() % slots) * unit;
        }
        long at = sequential.getAndAdd(size) % span / unit * unit;
        return offset + Math.min(at, last * unit);
    }

    /** Whether the next I/O writes: by the pattern, or in a mix by --rwmixread. */
    private boolean nextIsWrite() {
        return rwmixread == 0 || rwmixread < 100 && ThreadLocalRandom.current().nextInt(100) >= rwmixread;
    }

    /** Whether another I/O may start: before the end of the run and, with --io_size, within its bytes. */
    private boolean mayIssue(long now, int size) {
        if (now - stopAt >= 0 || error.get() != null) {
            return false;
        }
        if (ioLimit > 0 && issuedBytes.addAndGet(size) > ioLimit) {
            return false;
        }
        return iosLimit == 0 || issuedIos.incrementAndGet() <= iosLimit;
    }

    /** The size of the next I/O in that direction. */
    private int nextSize(boolean write) {
        return split != null ? split.pick(write) : blockSize;
    }

    /**
     * Ends the run now, as its time running out would (fio on SIGINT): no new I/O is issued, what
     * is in flight completes, and {@link #run} returns what was measured until now.
     */
    public void stop() {
        stopped = true;
        stopAt = System.nanoTime();
    }

    /** {@link #stop} was called (before {@link #run} began, too). */
    private volatile boolean stopped;

    /** Runs for {@code seconds}; prints a progress line a second to {@code progress} if not null. */
    public Result run(double seconds, PrintWriter progress) throws Exception {
        return run(0, seconds, progress);
    }

    /**
     * Runs the load for {@code rampSeconds} unmeasured, then for {@code seconds} measured; prints
     * a progress line a second to {@code progress} if not null.
     */
    public Result run(double rampSeconds, double seconds, PrintWriter progress) throws Exception {
        CountDownLatch drained = new CountDownLatch(iodepth);
        long begin = System.nanoTime();
        boolean auto = rampSeconds == AUTO_RAMP;
        rateFrom = begin;
        measureFrom = begin + (auto ? AUTO_RAMP_MAX_NANOS : (long) (rampSeconds * 1e9));
        stopAt = stopped ? begin : measureFrom + (long) (seconds * 1e9);
        if (!auto) {
            for (BenchLog l : measured.logs) {
                l.start(measureFrom);
            }
        }
        // the automatic warm-up's windows: completions, and this JVM's compilation time, in each
        int windows = (int) (AUTO_RAMP_MAX_NANOS / RAMP_WINDOW_NANOS) + 1;
        long[] windowCompletions = new long[windows];
        long[] windowCompileMillis = new long[windows];
        int window = 0;
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        boolean jitTimed = jit != null && jit.isCompilationTimeMonitoringSupported();
        long windowFrom = begin;
        long windowCount = 0;
        long windowJit = jitTimed ? jit.getTotalCompilationTime() : 0;
        boolean warming = auto;
        boolean settled = true;
        boolean oneCommand = blockSize <= device.maxTransferSize() && !(device instanceof LocalDevice);
        for (int i = 0; i < iodepth; i++) {
            ByteBuffer buf = aligned(blockSize);
            if (pattern.write || pattern.mixed) {
                byte[] noise = new byte[blockSize];
                ThreadLocalRandom.current().nextBytes(noise);
                buf.put(noise).clear();
            }
            if (oneCommand) {
                new Slot(buf, drained).issue(System.nanoTime());
            } else {
                issue(buf, drained);
            }
        }
        long lastReport = begin;
        long lastCount = 0;
        long start = measureFrom;
        // fio's bandwidth and IOPS samples, a period at a time from the start of the measured part
        BenchSamples.Collector readSamples = new BenchSamples.Collector();
        BenchSamples.Collector writeSamples = new BenchSamples.Collector();
        long nextSample = measureFrom;
        long sampledAt = 0;
        ProcessUsage usageFrom = rampSeconds != 0 ? null : ProcessUsage.now();
        while (!drained.await(Math.max(1, Math.min(warming ? RAMP_WINDOW_NANOS / 5 : 200_000_000L,
                nextSample - System.nanoTime())), TimeUnit.NANOSECONDS)) {
            long now = System.nanoTime();
            if (warming) {
                if (now - measureFrom >= 0) {
                    warming = false; // the most it may take has passed
                    settled = false;
                } else if (now - windowFrom >= RAMP_WINDOW_NANOS) {
                    long c = completed.get();
                    long j = jitTimed ? jit.getTotalCompilationTime() : 0;
                    windowCompletions[window] = c - windowCount;
                    windowCompileMillis[window] = j - windowJit;
                    window++;
                    windowFrom = now;
                    windowCount = c;
                    windowJit = j;
                    if (settled(windowCompletions, windowCompileMillis, window) || window == windows) {
                        warming = false;
                        settled = window < windows;
                        measureFrom = now; // I/Os submitted from now on are measured
                        if (!stopped) {
                            stopAt = now + (long) (seconds * 1e9);
                        }
                        start = now;
                        nextSample = now;
                    }
                }
                if (!warming) {
                    for (BenchLog l : measured.logs) {
                        l.start(measureFrom);
                    }
                }
            }
            if (now - nextSample >= 0 && now - stopAt <= 0) {
                if (sampledAt == 0) {
                    readSamples.start(now, measured.reads.get(), measured.readBytes.sum());
                    writeSamples.start(now, measured.writes.get(), measured.writeBytes.sum());
                    if (usageFrom == null) {
                        usageFrom = ProcessUsage.now();
                    }
                } else {
                    readSamples.sample(now, measured.reads.get(), measured.readBytes.sum());
                    writeSamples.sample(now, measured.writes.get(), measured.writeBytes.sum());
                }
                sampledAt = now;
                nextSample += BenchSamples.PERIOD_NANOS;
                if (nextSample - now <= 0) {
                    nextSample = now + BenchSamples.PERIOD_NANOS; // a late wake-up: the next period from now
                }
            }
            if (progress != null && now - lastReport >= 1_000_000_000L) {
                long c = completed.get();
                double iops = (c - lastCount) * 1e9 / (now - lastReport);
                progress.print("\r" + progressLine(now, start, iops) + "   ");
                progress.flush();
                lastReport = now;
                lastCount = c;
            }
            if (now - stopAt > TimeUnit.SECONDS.toNanos(60)) {
                throw new IOException("commands still outstanding 60 s after the run ended");
            }
        }
        // stopped (a signal) during the automatic warm-up: what ran is the report, from the first I/O
        Tally counted = measured;
        Ramp ramp = auto ? new Ramp(start - begin, true, settled) : rampSeconds > 0 ? new Ramp(start - begin, false, true)
                : Ramp.NONE;
        if (auto && measured.ios() == 0 && tallies[1].ios() > 0) {
            counted = tallies[1];
            start = begin;
            ramp = Ramp.NONE;
        }
        long elapsed = Math.max(1, System.nanoTime() - start);
        // the run's last period, if most of it ran (fio's last sample, at the end of its runtime)
        long last = Math.min(System.nanoTime(), stopAt);
        if (sampledAt != 0 && last - sampledAt >= BenchSamples.PERIOD_NANOS / 2) {
            readSamples.sample(last, measured.reads.get(), measured.readBytes.sum());
            writeSamples.sample(last, measured.writes.get(), measured.writeBytes.sum());
        }
        if (pacer != null) {
            pacer.shutdownNow();
        }
        if ((ioLimit > 0 || iosLimit > 0) && lastCompletion - start > 0) {
            elapsed = lastCompletion - start; // bounded by bytes: the run ends with its last I/O
        }
        if (progress != null) {
            progress.print("\r" + " ".repeat(79) + "\r");
            progress.flush();
        }
        Throwable t = error.get();
        if (t != null) {
            throw new IOException(pattern.fioName + " failed after " + completed.get() + " I/Os: "
                    + Failures.describe(t), t);
        }
        long[] levels = new long[DEPTH_LEVELS.length];
        for (int i = 0; i < levels.length; i++) {
            levels[i] = counted.depthLevels[i].sum();
        }
        long readIos = counted.reads.get();
        long writeIos = counted.writes.get();
        ProcessUsage usage = usageFrom == null ? ProcessUsage.NONE : ProcessUsage.now().since(usageFrom);
        return new Result(pattern, bsText, iodepth, elapsed,
                new Direction(readIos, counted.readBytes.sum(), counted.readLatency.getIntervalHistogram(),
                        sampled(readSamples, readIos)),
                new Direction(writeIos, counted.writeBytes.sum(), counted.writeLatency.getIntervalHistogram(),
                        sampled(writeSamples, writeIos)),
                levels, usage, ramp);
    }

    /** A direction that did no I/O has no samples (fio's bw_samples 0). */
    private static BenchSamples sampled(BenchSamples.Collector c, long ios) {
        return ios == 0 ? BenchSamples.NONE : c.done();
    }

    /**
     * fio's status line: the pattern and depth, how far the run is, the last second's bandwidth
     * and IOPS, and the time left (by the clock, or for a run bounded by --io_size by its bytes at
     * the current rate).
     */
    String progressLine(long now, long start, double iops) {
        boolean ramp = now - start < 0;
        double done = Math.max(0.0, Math.min(1.0, (double) (now - start) / (stopAt - start)));
        long leftNanos = ramp ? stopAt - now : Math.max(0, stopAt - now);
        if (ioLimit > 0 && !ramp) {
            long moved = Math.min(ioLimit, measured.bytes());
            done = (double) moved / ioLimit;
            double bytesPerNano = iops * meanSize() / 1e9;
            leftNanos = bytesPerNano > 0 ? (long) ((ioLimit - moved) / bytesPerNano) : leftNanos;
        } else if (iosLimit > 0 && !ramp) {
            long n = Math.min(iosLimit, measured.ios());
            done = (double) n / iosLimit;
            leftNanos = iops > 0 ? (long) ((iosLimit - n) / iops * 1e9) : leftNanos;
        }
        long left = Math.min(leftNanos / 1_000_000_000L, 359_999);
        String dir = pattern.mixed ? "m" : pattern.write ? "w" : "r";
        return String.format(Locale.ROOT, "[%s(%d)]%s[%.1f%%][%s=%.1fMiB/s][%s=%s IOPS][eta %02dh:%02dm:%02ds]",
                dir, iodepth, ramp ? "[ramp]" : "", done * 100, dir, iops * meanSize() / (1 << 20), dir,
                BenchReport.human(iops), left / 3600, left / 60 % 60, left % 60);
    }

    /** The mean I/O size so far (the block size without --bssplit). */
    private double meanSize() {
        long n = measured.ios();
        return split == null || n == 0 ? blockSize : (double) measured.bytes() / n;
    }

    /** A direct buffer of {@code size} bytes on a 4 KiB boundary (what O_DIRECT on a local disk needs). */
    static ByteBuffer aligned(int size) {
        int page = 4096;
        int rounded = (size + page - 1) / page * page;
        return ByteBuffer.allocateDirect(rounded + page).alignedSlice(page).slice(0, size);
    }

    private void issue(ByteBuffer buf, CountDownLatch drained) {
        long now = System.nanoTime();
        boolean write = nextIsWrite();
        int size = nextSize(write);
        if (!mayIssue(now, size)) {
            drained.countDown();
            return;
        }
        if (issueIntervalNanos > 0) {
            long due = rateFrom + tickets.getAndIncrement() * issueIntervalNanos;
            if (due - now > 0) {
                pacer.schedule(() -> submitLarge(buf, drained, write, size), due - now, TimeUnit.NANOSECONDS);
                return;
            }
        }
        submitLarge(buf, drained, write, size);
    }

    private void submitLarge(ByteBuffer buf, CountDownLatch drained, boolean write, int size) {
        buf.clear().limit(size);
        long at = nextOffset(size);
        if (write && verify != null) {
            stamp(buf, at);
        }
        long t0 = System.nanoTime();
        submitted(t0);
        (write ? device.writeAsync(at, buf) : device.readAsync(at, buf)).whenComplete((v, t) -> {
            if (record(t0, System.nanoTime(), write, t, drained, at, size)) {
                issue(buf, drained);
            }
        });
    }

    /** Writes the verify header and data of the next write to {@code at} into {@code buf}. */
    private void stamp(ByteBuffer buf, long at) {
        long gen = generations.incrementAndGet();
        lastGeneration[(int) ((at - offset) / blockSize)] = gen;
        verify.fill(buf.clear(), at, gen);
    }

    /**
     * Reads back every block written and checks it against the write that last went there
     * (--verify); with {@code all}, reads every block of the region and checks only that each is
     * intact and in its place (fio's verify_only: what an earlier run wrote).
     */
    public Verification verify(boolean all) throws IOException {
        ByteBuffer b = aligned(blockSize);
        long slots = span / blockSize;
        long checked = 0;
        long bad = 0;
        List<String> problems = new ArrayList<>();
        for (long i = 0; i < slots; i++) {
            long expected = all ? -1 : lastGeneration[(int) i];
            if (expected == 0) {
                continue;
            }
            long at = offset + i * blockSize;
            b.clear();
            device.read(at, b);
            b.flip();
            checked++;
            String problem = verify.check(b, at, expected);
            if (problem != null) {
                bad++;
                if (problems.size() < 10) {
                    problems.add(String.format("offset %#x: %s", at, problem));
                }
            }
        }
        return new Verification(checked, bad, problems);
    }

    /** One slot of the queue depth: a reusable request, its buffer, and when it was issued. */
    private final class Slot implements IoCallback {
        final IoRequest request = device.newRequest();
        final ByteBuffer buf;
        final CountDownLatch drained;
        long issuedAt;
        long offsetAt;
        int length;
        boolean writing;

        Slot(ByteBuffer buf, CountDownLatch drained) {
            this.buf = buf;
            this.drained = drained;
        }

        /** Issues the next I/O at {@code now} (one clock read per I/O: a completion's time is the next issue's). */
        void issue(long now) {
            writing = nextIsWrite();
            length = nextSize(writing);
            if (!mayIssue(now, length)) {
                drained.countDown();
                return;
            }
            if (issueIntervalNanos > 0) {
                long due = rateFrom + tickets.getAndIncrement() * issueIntervalNanos;
                if (due - now > 0) {
                    // --rate_iops: not yet; off the event loop until its turn (a rate-capped run has time)
                    pacer.schedule(() -> submit(System.nanoTime()), due - now, TimeUnit.NANOSECONDS);
                    return;
                }
            }
            submit(now);
        }

        private void submit(long now) {
            long at = nextOffset(length);
            offsetAt = at;
            issuedAt = now;
            if (split != null) {
                buf.clear().limit(length);
            }
            submitted(now);
            try {
                if (writing && verify != null) {
                    stamp(buf, at);
                }
                if (writing) {
                    request.write(at, buf, this);
                } else {
                    request.read(at, buf, this);
                }
            } catch (RuntimeException e) {
                error.compareAndSet(null, e);
                drained.countDown();
            }
        }

        @Override
        public void completed(IoRequest r, Throwable t) {
            long now = System.nanoTime();
            if (record(issuedAt, now, writing, t, drained, offsetAt, length)) {
                issue(now);
            }
        }
    }

    /** Records one completion; true if the slot goes on. */
    private boolean record(long t0, long now, boolean write, Throwable t, CountDownLatch drained, long at, int size) {
        inFlight.decrementAndGet();
        if (t != null) {
            error.compareAndSet(null, t);
            drained.countDown();
            return false;
        }
        Tally c = tally(t0);
        (write ? c.writeLatency : c.readLatency).recordValue(Math.max(1, now - t0));
        (write ? c.writes : c.reads).incrementAndGet();
        (write ? c.writeBytes : c.readBytes).add(size);
        completed.incrementAndGet();
        for (BenchLog l : c.logs) {
            l.record(now, now - t0, write, size, at);
        }
        lastCompletion = now;
        return true;
    }
}
