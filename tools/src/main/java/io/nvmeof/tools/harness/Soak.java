package io.nvmeof.tools.harness;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.Nvmeof;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * One host process of bench/soak.sh: HOSTS host NQNs, each with CONTROLLERS controllers of
 * QUEUES I/O queues, QD commands in flight per queue, mixed random 4 KiB reads and writes for
 * SECONDS, every block checked (bench/faults.sh runs it too): {@code java -cp cli/build/nvmeof.jar
 * io.nvmeof.tools.harness.Soak URI PROCESS HOSTS CONTROLLERS QUEUES QD SECONDS}.
 *
 * <p>Each slot of queue depth owns {@link #BLOCKS_PER_SLOT} blocks of its own (process, host,
 * controller, slot), so no two commands in flight touch one block, and it remembers the
 * generation of each write it made. A write stamps the block with its address and a new
 * generation and fills it from both; a read checks the block holds the last generation written
 * (zeroes if none): a lost, misplaced, stale or damaged block counts as corrupt. Every 10 s a line
 * of progress; at the end one line: {@code SOAK ios=N errors=N corrupt=N p50_us= p99_us= p999_us= max_us=}.
 */
public final class Soak {
    static final int BS = 4096;
    static final int BLOCKS_PER_SLOT = 4;

    final AtomicLong ios = new AtomicLong();
    final AtomicLong errors = new AtomicLong();
    final AtomicLong corrupt = new AtomicLong();
    final Recorder latency = new Recorder(3);
    volatile boolean stopping;
    /** Every latency of the run, in microseconds. */
    final Histogram total = new Histogram(3);
    CountDownLatch idle;

    /** One slot of queue depth: its blocks, their generations, its buffer. */
    final class Slot {
        final BlockDevice device;
        final long firstBlock;
        final long tag;
        final long[] generation = new long[BLOCKS_PER_SLOT];
        /** A write that failed leaves its block holding either generation: the next read settles which. */
        final boolean[] uncertain = new boolean[BLOCKS_PER_SLOT];
        final ByteBuffer buf = ByteBuffer.allocateDirect(BS).order(ByteOrder.LITTLE_ENDIAN);
        long started;

        Slot(BlockDevice device, long firstBlock, long tag) {
            this.device = device;
            this.firstBlock = firstBlock;
            this.tag = tag;
        }

        void next() {
            if (stopping) {
                idle.countDown();
                return;
            }
            ThreadLocalRandom r = ThreadLocalRandom.current();
            int i = r.nextInt(BLOCKS_PER_SLOT);
            long block = firstBlock + i;
            started = System.nanoTime();
            if (r.nextBoolean()) {
                long gen = ++generation[i];
                fill(buf, block, tag, gen);
                buf.clear();
                device.writeAsync(block * BS, buf).whenComplete((v, t) -> {
                    if (t != null) {
                        uncertain[i] = true;
                    }
                    done(t, -1, block);
                });
            } else {
                buf.clear();
                device.readAsync(block * BS, buf).whenComplete((v, t) -> done(t, i, block));
            }
        }

        void done(Throwable t, int readIndex, long block) {
            latency.recordValue(Math.max(1, (System.nanoTime() - started) / 1000));
            ios.incrementAndGet();
            if (t != null) {
                if (errors.incrementAndGet() <= 10) {
                    System.err.println("error at block " + block + ": " + t);
                }
            } else if (readIndex >= 0 && uncertain[readIndex]) {
                uncertain[readIndex] = false;
                if (!check(buf, block, tag, generation[readIndex])) {
                    generation[readIndex]--; // the failed write did not land
                    if (!check(buf, block, tag, generation[readIndex]) && corrupt.incrementAndGet() <= 10) {
                        System.err.println("corrupt block " + block + " after a failed write");
                    }
                }
            } else if (readIndex >= 0 && !check(buf, block, tag, generation[readIndex])) {
                if (corrupt.incrementAndGet() <= 10) {
                    System.err.println("corrupt block " + block + ": expected generation " + generation[readIndex]
                            + ", header " + buf.getLong(0) + "/" + buf.getLong(8) + "/" + buf.getLong(16));
                }
            }
            next();
        }
    }

    /** The contents of {@code block}'s write number {@code gen}: a header, then words derived from it. */
    static void fill(ByteBuffer b, long block, long tag, long gen) {
        b.clear();
        b.putLong(0, block).putLong(8, gen).putLong(16, tag);
        long x = block * 0x9E3779B97F4A7C15L ^ gen ^ (tag << 32);
        for (int at = 24; at < BS; at += 8) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            b.putLong(at, x);
        }
    }

    static boolean check(ByteBuffer b, long block, long tag, long gen) {
        if (gen == 0) {
            for (int at = 0; at < BS; at += 8) {
                if (b.getLong(at) != 0) {
                    return false; // never written: zeroes
                }
            }
            return true;
        }
        ByteBuffer want = ByteBuffer.allocate(BS).order(ByteOrder.LITTLE_ENDIAN);
        fill(want, block, tag, gen);
        return want.clear().equals(b.clear());
    }

    public static void main(String[] args) throws Exception {
        Usage.check(args, 7, "usage: Soak URI PROCESS HOSTS CONTROLLERS QUEUES QD SECONDS\n  HOSTS host NQNs x"
                + " CONTROLLERS controllers x QUEUES I/O queues x QD commands of mixed random 4 KiB reads and writes,"
                + " every block checked, for SECONDS; PROCESS (0, 1, ...) picks this process's blocks and host NQNs;"
                + " ends with one line: SOAK ios=N errors=N corrupt=N p50_us= p99_us= p999_us= max_us=");
        String uri = args[0];
        int process = Integer.parseInt(args[1]);
        int hosts = Integer.parseInt(args[2]);
        int controllers = Integer.parseInt(args[3]);
        int queues = Integer.parseInt(args[4]);
        int qd = Integer.parseInt(args[5]);
        long seconds = Long.parseLong(args[6]);
        new Soak().run(uri, process, hosts, controllers, queues, qd, seconds);
    }

    void run(String uri, int process, int hosts, int controllers, int queues, int qd, long seconds) throws Exception {
        List<Controller> connected = new ArrayList<>();
        List<Slot> slots = new ArrayList<>();
        long slotsPerProcess = (long) hosts * controllers * queues * qd;
        long block = process * slotsPerProcess * BLOCKS_PER_SLOT;
        try {
            for (int h = 0; h < hosts; h++) {
                UUID id = new UUID(0x50a4L, process * 1000L + h);
                HostIdentity who = HostIdentity.of("nqn.2014-08.org.nvmexpress:uuid:" + id, id);
                for (int c = 0; c < controllers; c++) {
                    Controller ctl = Nvmeof.connect(uri, ConnectOptions.defaults().identity(who).ioQueues(queues)
                            .queueSize(qd + 1));
                    connected.add(ctl);
                    BlockDevice d = ctl.namespace(1);
                    for (int s = 0; s < queues * qd; s++) {
                        slots.add(new Slot(d, block, slots.size() + process * slotsPerProcess));
                        block += BLOCKS_PER_SLOT;
                    }
                }
            }
            if (block * BS > slots.get(0).device.size()) {
                throw new IllegalArgumentException("the namespace needs " + block * BS + " bytes for these slots");
            }
            System.out.printf("process %d: %d host NQNs x %d controllers x %d queues x QD%d = %d commands in flight%n",
                    process, hosts, controllers, queues, qd, slots.size());
            idle = new CountDownLatch(slots.size());
            long start = System.nanoTime();
            for (Slot s : slots) {
                s.next();
            }
            Histogram interval = null;
            long lastIos = 0;
            while (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(seconds)) {
                Thread.sleep(Math.min(10_000, Math.max(1, TimeUnit.SECONDS.toMillis(seconds)
                        - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))));
                interval = latency.getIntervalHistogram(interval);
                total.add(interval);
                long now = ios.get();
                System.out.printf("t=%ds iops=%d errors=%d corrupt=%d p99.9_us=%d%n",
                        TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start), (now - lastIos) / 10,
                        errors.get(), corrupt.get(), interval.getValueAtPercentile(99.9));
                lastIos = now;
            }
            stopping = true;
            if (!idle.await(60, TimeUnit.SECONDS)) {
                System.out.println("commands still in flight 60 s after the end: " + idle.getCount());
                errors.addAndGet(idle.getCount());
            }
        } finally {
            for (Controller c : connected) {
                c.close();
            }
        }
        Histogram all = total;
        all.add(latency.getIntervalHistogram());
        System.out.printf("SOAK process=%d ios=%d errors=%d corrupt=%d p50_us=%d p99_us=%d p999_us=%d max_us=%d%n",
                process, ios.get(), errors.get(), corrupt.get(), all.getValueAtPercentile(50),
                all.getValueAtPercentile(99), all.getValueAtPercentile(99.9), all.getMaxValue());
    }
}
