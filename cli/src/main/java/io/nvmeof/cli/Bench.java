package io.nvmeof.cli;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.IoCallback;
import io.nvmeof.initiator.IoRequest;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * A closed-loop load like fio's: {@code iodepth} commands always in flight against a block
 * device for a fixed time, each completion issuing the next from the event loop it completed on
 * (no hand-off between threads per I/O). Latency is completion minus submission, recorded in
 * nanoseconds. A ramp time runs the load first and counts none of it (fio's {@code ramp_time}):
 * the JIT compiles the path before it is measured. Each slot of the queue depth is one reusable
 * {@link IoRequest} with its buffer, so nothing is allocated per I/O when a transfer fits in
 * one command.
 */
final class Bench {
    enum Pattern {
        READ("read", false, false), WRITE("write", true, false), RANDREAD("randread", false, true),
        RANDWRITE("randwrite", true, true);

        final String fioName;
        final boolean write;
        final boolean random;

        Pattern(String fioName, boolean write, boolean random) {
            this.fioName = fioName;
            this.write = write;
            this.random = random;
        }

        static Pattern parse(String s) {
            for (Pattern p : values()) {
                if (p.fioName.equals(s)) {
                    return p;
                }
            }
            throw new IllegalArgumentException("--rw '" + s + "': expected read, write, randread or randwrite");
        }
    }

    /** What a run measured. */
    record Result(Pattern pattern, int blockSize, int iodepth, long ios, long elapsedNanos, Histogram latency) {
        double iops() {
            return ios * 1e9 / elapsedNanos;
        }

        double bytesPerSecond() {
            return iops() * blockSize;
        }
    }

    private final BlockDevice device;
    private final Pattern pattern;
    private final int blockSize;
    private final int iodepth;
    private final long span;
    private final Recorder recorder = new Recorder(3);
    private final AtomicLong sequential = new AtomicLong();
    /** Measured completions. */
    private final AtomicLong completed = new AtomicLong();
    /** Every completion, ramp included (the progress line). */
    private final AtomicLong all = new AtomicLong();
    private final AtomicReference<Throwable> error = new AtomicReference<>();
    private volatile long stopAt;
    /** I/Os submitted from this time on are measured (the ramp ends). */
    private volatile long measureFrom;

    Bench(BlockDevice device, Pattern pattern, int blockSize, int iodepth, long span) {
        if (blockSize <= 0 || blockSize % device.blockSize() != 0) {
            throw new IllegalArgumentException("--bs " + blockSize + " is not a multiple of the device's "
                    + device.blockSize() + "-byte blocks");
        }
        if (iodepth < 1 || iodepth > 4096) {
            throw new IllegalArgumentException("--iodepth must be 1..4096: " + iodepth);
        }
        this.device = device;
        this.pattern = pattern;
        this.blockSize = blockSize;
        this.iodepth = iodepth;
        this.span = Math.min(span <= 0 ? device.size() : span, device.size()) / blockSize * blockSize;
        if (this.span < blockSize) {
            throw new IllegalArgumentException("the device (or --size) is smaller than one " + blockSize + "-byte I/O");
        }
    }

    private long nextOffset() {
        long slots = span / blockSize;
        if (pattern.random) {
            return ThreadLocalRandom.current().nextLong(slots) * blockSize;
        }
        return (sequential.getAndIncrement() % slots) * blockSize;
    }

    /** Runs for {@code seconds}; prints a progress line a second to {@code progress} if not null. */
    Result run(double seconds, PrintWriter progress) throws Exception {
        return run(0, seconds, progress);
    }

    /**
     * Runs the load for {@code rampSeconds} unmeasured, then for {@code seconds} measured; prints
     * a progress line a second to {@code progress} if not null.
     */
    Result run(double rampSeconds, double seconds, PrintWriter progress) throws Exception {
        CountDownLatch drained = new CountDownLatch(iodepth);
        long begin = System.nanoTime();
        measureFrom = begin + (long) (rampSeconds * 1e9);
        stopAt = measureFrom + (long) (seconds * 1e9);
        boolean oneCommand = blockSize <= device.maxTransferSize();
        for (int i = 0; i < iodepth; i++) {
            ByteBuffer buf = ByteBuffer.allocateDirect(blockSize);
            if (pattern.write) {
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
        while (!drained.await(200, TimeUnit.MILLISECONDS)) {
            long now = System.nanoTime();
            if (progress != null && now - lastReport >= 1_000_000_000L) {
                long c = all.get();
                double iops = (c - lastCount) * 1e9 / (now - lastReport);
                progress.printf("\r[%s%s: %.0f%%] %.1fk IOPS, %.1f MiB/s   ", pattern.fioName,
                        now - start < 0 ? " ramp" : "",
                        Math.max(0.0, Math.min(100.0, 100.0 * (now - start) / (stopAt - start))), iops / 1000,
                        iops * blockSize / (1 << 20));
                progress.flush();
                lastReport = now;
                lastCount = c;
            }
            if (now - stopAt > TimeUnit.SECONDS.toNanos(60)) {
                throw new IOException("commands still outstanding 60 s after the run ended");
            }
        }
        long elapsed = Math.max(1, System.nanoTime() - start);
        if (progress != null) {
            progress.print("\r" + " ".repeat(60) + "\r");
            progress.flush();
        }
        Throwable t = error.get();
        if (t != null) {
            throw new IOException(pattern.fioName + " failed after " + completed.get() + " I/Os: "
                    + Main.describe(t), t);
        }
        return new Result(pattern, blockSize, iodepth, completed.get(), elapsed, recorder.getIntervalHistogram());
    }

    private void issue(ByteBuffer buf, CountDownLatch drained) {
        if (System.nanoTime() - stopAt >= 0 || error.get() != null) {
            drained.countDown();
            return;
        }
        buf.clear();
        long offset = nextOffset();
        long t0 = System.nanoTime();
        (pattern.write ? device.writeAsync(offset, buf) : device.readAsync(offset, buf)).whenComplete((v, t) -> {
            if (record(t0, System.nanoTime(), t, drained)) {
                issue(buf, drained);
            }
        });
    }

    /** One slot of the queue depth: a reusable request, its buffer, and when it was issued. */
    private final class Slot implements IoCallback {
        final IoRequest request = device.newRequest();
        final ByteBuffer buf;
        final CountDownLatch drained;
        long issuedAt;

        Slot(ByteBuffer buf, CountDownLatch drained) {
            this.buf = buf;
            this.drained = drained;
        }

        /** Issues the next I/O at {@code now} (one clock read per I/O: a completion's time is the next issue's). */
        void issue(long now) {
            if (now - stopAt >= 0 || error.get() != null) {
                drained.countDown();
                return;
            }
            long offset = nextOffset();
            issuedAt = now;
            try {
                if (pattern.write) {
                    request.write(offset, buf, this);
                } else {
                    request.read(offset, buf, this);
                }
            } catch (RuntimeException e) {
                error.compareAndSet(null, e);
                drained.countDown();
            }
        }

        @Override
        public void completed(IoRequest r, Throwable t) {
            long now = System.nanoTime();
            if (record(issuedAt, now, t, drained)) {
                issue(now);
            }
        }
    }

    /** Records one completion; true if the slot goes on. */
    private boolean record(long t0, long now, Throwable t, CountDownLatch drained) {
        if (t != null) {
            error.compareAndSet(null, t);
            drained.countDown();
            return false;
        }
        all.incrementAndGet();
        if (t0 - measureFrom >= 0) {
            recorder.recordValue(Math.max(1, now - t0));
            completed.incrementAndGet();
        }
        return true;
    }
}
