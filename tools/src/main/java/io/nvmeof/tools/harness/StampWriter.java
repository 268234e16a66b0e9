package io.nvmeof.tools.harness;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Multipath;
import io.nvmeof.initiator.Nvmeof;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The split-brain check's writer: one host writing through every path of a multipath URI (two
 * gateways of one subsystem), each write stamped with a sequence number from one counter, so that
 * the order of writes is known. Each of QD slots owns {@link Soak#BLOCKS_PER_SLOT} blocks of its
 * own (no two commands in flight touch one block) and remembers the stamp of the last write to
 * each that was acknowledged. Afterwards, a block whose stamp is older than that is a write that
 * landed after a newer one had been acknowledged: a gateway that had lost its role completed a
 * write it held (say, one it received before a partition or a freeze) over what the host wrote
 * through the other gateway since. {@code java -cp nvmeof.jar io.nvmeof.tools.harness.StampWriter
 * URI QD KEEP_ALIVE_MS}.
 *
 * <p>It writes from the start; commands on stdin, one per line, each answered by one line:
 * {@code status} ({@code STATUS writes=N errors=N}), {@code pause} (stops issuing, waits for
 * what is in flight; {@code PAUSED writes=N errors=N longest_stall_ms=N}, the longest time
 * without a completion since the last pause), {@code verify} (while paused: reads every block;
 * {@code VERIFY blocks=N stale=N corrupt=N}), {@code resume} ({@code RESUMED}), {@code quit}. A
 * write that failed leaves its block with either stamp, which the next verify settles.
 */
public final class StampWriter {
    static final int BS = Soak.BS;
    private static final long TAG = 0x57a3bL;

    private final BlockDevice device;
    private final AtomicLong seq = new AtomicLong();
    private final AtomicLong writes = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final List<Slot> slots = new ArrayList<>();
    private volatile boolean pausing;
    private volatile CountDownLatch idle;
    private volatile long lastCompletion = System.nanoTime();
    private final AtomicLong longestStall = new AtomicLong();
    /** What the host knows of its paths, for a pause that does not end. */
    private java.util.function.Supplier<String> paths = () -> "";

    private StampWriter(BlockDevice device, int qd) {
        this.device = device;
        for (int s = 0; s < qd; s++) {
            slots.add(new Slot((long) s * Soak.BLOCKS_PER_SLOT));
        }
    }

    /** One slot of queue depth: its blocks, the last acknowledged stamp of each, its buffer. */
    private final class Slot {
        final long firstBlock;
        final long[] acked = new long[Soak.BLOCKS_PER_SLOT];
        /** The stamp of the last write to each block that failed, or 0: the block may hold it instead. */
        final long[] failed = new long[Soak.BLOCKS_PER_SLOT];
        final ByteBuffer buf = ByteBuffer.allocateDirect(BS).order(ByteOrder.LITTLE_ENDIAN);

        Slot(long firstBlock) {
            this.firstBlock = firstBlock;
        }

        void next() {
            if (pausing) {
                idle.countDown();
                return;
            }
            int i = ThreadLocalRandom.current().nextInt(Soak.BLOCKS_PER_SLOT);
            long block = firstBlock + i;
            long stamp = seq.incrementAndGet();
            Soak.fill(buf, block, TAG, stamp);
            buf.clear();
            CompletableFuture<Void> f;
            try {
                f = device.writeAsync(block * BS, buf);
            } catch (RuntimeException e) { // the device refused at once: a failed write, and this slot goes on
                f = CompletableFuture.failedFuture(e);
            }
            f.whenComplete((v, t) -> {
                long now = System.nanoTime();
                longestStall.accumulateAndGet(now - lastCompletion, Math::max);
                lastCompletion = now;
                writes.incrementAndGet();
                if (t == null) {
                    acked[i] = stamp;
                    failed[i] = 0;
                } else {
                    failed[i] = stamp;
                    if (errors.incrementAndGet() <= 10) {
                        System.err.println("write of block " + block + " (stamp " + stamp + ") failed: " + t);
                    }
                }
                next();
            });
        }

        /** Reads its blocks back: {stale, corrupt}. */
        int[] verify() throws Exception {
            int stale = 0;
            int corrupt = 0;
            for (int i = 0; i < Soak.BLOCKS_PER_SLOT; i++) {
                long block = firstBlock + i;
                buf.clear();
                device.read(block * BS, buf);
                long stamp = buf.getLong(8);
                if (!Soak.check(buf, block, TAG, stamp)) {
                    corrupt++;
                    System.err.println("block " + block + " is not a write of ours: header " + buf.getLong(0) + "/" + stamp);
                } else if (stamp == acked[i] || (failed[i] != 0 && stamp == failed[i])) {
                    acked[i] = stamp;
                    failed[i] = 0;
                } else {
                    stale++;
                    System.err.println("block " + block + " holds stamp " + stamp + ", the last acknowledged write was "
                            + acked[i] + (failed[i] != 0 ? " (a later one, " + failed[i] + ", failed)" : "")
                            + (stamp < acked[i] ? ": an older write landed after a newer one" : ""));
                }
            }
            return new int[] {stale, corrupt};
        }
    }

    private void start() {
        pausing = false;
        lastCompletion = System.nanoTime();
        longestStall.set(0);
        for (Slot s : slots) {
            s.next();
        }
    }

    private String pause() throws InterruptedException {
        idle = new CountDownLatch(slots.size());
        pausing = true;
        if (!idle.await(120, TimeUnit.SECONDS)) {
            return "PAUSED FAILED: " + idle.getCount() + " writes still in flight after 120 s; " + paths.get();
        }
        return "PAUSED writes=" + writes.get() + " errors=" + errors.get() + " longest_stall_ms="
                + TimeUnit.NANOSECONDS.toMillis(longestStall.get());
    }

    private String verify() throws Exception {
        int stale = 0;
        int corrupt = 0;
        for (Slot s : slots) {
            int[] r = s.verify();
            stale += r[0];
            corrupt += r[1];
        }
        return "VERIFY blocks=" + slots.size() * Soak.BLOCKS_PER_SLOT + " stale=" + stale + " corrupt=" + corrupt;
    }

    /** Each path's state and namespace 1's ANA state through it, and the commands waiting for a path. */
    private static String describe(Multipath mp) {
        StringBuilder s = new StringBuilder();
        for (Multipath.Path p : mp.paths()) {
            s.append(s.length() == 0 ? "" : ", ").append(p).append(' ').append(p.anaState(1)).append(" inflight ").append(p.inflight());
        }
        return "paths [" + s + "], waiting for a path " + mp.waiting();
    }

    public static void main(String[] args) throws Exception {
        Usage.check(args, 3, "usage: StampWriter URI QD KEEP_ALIVE_MS\n  writes stamped 4 KiB blocks through every path"
                + " of URI, QD at a time; commands on stdin: status, pause, verify, resume, quit");
        int qd = Integer.parseInt(args[1]);
        ConnectOptions options = ConnectOptions.defaults().ioQueues(1).keepAlive(Duration.ofMillis(Long.parseLong(args[2])))
                .reconnectDelay(Duration.ofSeconds(1)).controllerLossTimeout(Duration.ofSeconds(3600));
        try (Multipath mp = Nvmeof.connectMultipath(args[0], options)) {
            StampWriter w = new StampWriter(mp.namespace(1), qd);
            w.paths = () -> describe(mp);
            if ((long) qd * Soak.BLOCKS_PER_SLOT * BS > w.device.size()) {
                throw new IllegalArgumentException("QD " + qd + " needs " + (long) qd * Soak.BLOCKS_PER_SLOT * BS + " bytes");
            }
            w.start();
            System.out.println("WRITING qd=" + qd + " paths=" + mp.paths().size());
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                String answer = switch (line.strip()) {
                    case "status" -> "STATUS writes=" + w.writes.get() + " errors=" + w.errors.get();
                    case "pause" -> w.pause();
                    case "verify" -> w.pausing ? w.verify() : "VERIFY FAILED: pause first";
                    case "resume" -> {
                        w.start();
                        yield "RESUMED";
                    }
                    case "paths" -> "PATHS " + describe(mp);
                    case "quit" -> null;
                    default -> "UNKNOWN " + line;
                };
                if (answer == null) {
                    break;
                }
                System.out.println(answer);
            }
            if (!w.pausing) {
                System.out.println(w.pause());
            }
        }
        System.out.println("DONE");
    }
}
