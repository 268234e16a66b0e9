package io.nvmeof.fabric;

import io.netty.channel.SelectStrategy;
import io.netty.util.IntSupplier;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * How an event loop waits for I/O. {@link #OFF}: it sleeps in epoll as soon as nothing is ready
 * (a wake-up per burst of events). {@link #ALWAYS}: it never sleeps, asking epoll again and again
 * as SPDK's reactors poll, which saves the wake-up of a sleeping thread on every event and costs a
 * whole core per loop. In between, a window: after an event the loop keeps asking for the given
 * time before it sleeps (the idea of Linux's {@code net.core.busy_poll}), so the answers to what it
 * just sent are picked up without a wake-up while traffic flows, and an idle loop costs nothing.
 * {@link #ADAPTIVE} (the default) sizes that window itself, per loop, from what sleeping cost it:
 * see {@link #adaptive(long)}.
 *
 * <p>Keep-alive, command timeouts and deadlines are timers of the loop; they fire on time however
 * it polls ({@code BusyPollTest}).
 */
public final class BusyPoll {
    public static final BusyPoll OFF = new BusyPoll(0, false);
    public static final BusyPoll ALWAYS = new BusyPoll(Long.MAX_VALUE, false);
    /**
     * The largest window {@link #ADAPTIVE} grows to: 200 us, KVM's default halt_poll_ns on x86. A
     * host that answers a batch of completions with a batch of 4 KiB writes takes 100-200 us over
     * loopback on a VM (it copies the data, and the kernel runs our socket's receive side on its
     * core); a limit of 100 us let the target's loop sleep through every such gap.
     */
    public static final long ADAPTIVE_MAX_MICROS = 200;
    /** The default: a window that adapts, up to {@value #ADAPTIVE_MAX_MICROS} us. */
    public static final BusyPoll ADAPTIVE = new BusyPoll(TimeUnit.MICROSECONDS.toNanos(ADAPTIVE_MAX_MICROS), true);
    /** The first window an adaptive loop tries: 10 us (as Linux's halt_poll_ns_grow_start). */
    static final long ADAPTIVE_START_NANOS = 10_000;

    private final long windowNanos;
    private final boolean adaptive;

    private BusyPoll(long windowNanos, boolean adaptive) {
        this.windowNanos = windowNanos;
        this.adaptive = adaptive;
    }

    /**
     * A window each loop sizes for itself, between none and {@code maxMicros}, in the manner of
     * Linux's KVM halt polling: when a loop slept and the next event came sooner after the last
     * than {@code maxMicros}, polling a little longer would have saved the wake-up, so its window
     * doubles (from 10 us); when the event came later than that, polling could not have paid, so
     * the window halves (to none). A loop serving a stream of requests and answers polls across
     * the gaps; a loop whose events are far apart (light load, idle, timers) sleeps as {@link #OFF}.
     */
    public static BusyPoll adaptive(long maxMicros) {
        if (maxMicros < 1 || maxMicros > 1_000_000) {
            throw new IllegalArgumentException("adaptive busy-poll limit must be 1..1000000 microseconds: " + maxMicros);
        }
        return maxMicros == ADAPTIVE_MAX_MICROS ? ADAPTIVE : new BusyPoll(TimeUnit.MICROSECONDS.toNanos(maxMicros), true);
    }

    /** Polls for {@code micros} after the last event before sleeping; 0 is {@link #OFF}. */
    public static BusyPoll window(long micros) {
        if (micros < 0 || micros > 1_000_000) {
            throw new IllegalArgumentException("busy-poll window must be 0..1000000 microseconds: " + micros);
        }
        return micros == 0 ? OFF : new BusyPoll(TimeUnit.MICROSECONDS.toNanos(micros), false);
    }

    /** The words {@link #parse} knows besides numbers of microseconds (and adaptive:MAX). */
    public static final java.util.List<String> MODES = java.util.List.of("adaptive", "always", "off");

    /**
     * The form a command line gives: empty or {@code always} for {@link #ALWAYS}, {@code off} or
     * {@code 0} for {@link #OFF}, {@code adaptive} or {@code adaptive:MAX} (microseconds) for
     * {@link #adaptive}, otherwise a fixed window in microseconds.
     */
    public static BusyPoll parse(String s) {
        String v = s == null ? "" : s.trim();
        if (v.isEmpty() || v.equals("always")) {
            return ALWAYS;
        }
        if (v.equals("off")) {
            return OFF;
        }
        try {
            if (v.equals("adaptive")) {
                return ADAPTIVE;
            }
            if (v.startsWith("adaptive:")) {
                return adaptive(Long.parseLong(v.substring("adaptive:".length())));
            }
            return window(Long.parseLong(v));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("busy-poll: expected adaptive[:MAX], always, off or a window in microseconds: '"
                    + s + "'");
        }
    }

    public boolean off() {
        return windowNanos == 0;
    }

    public boolean always() {
        return windowNanos == Long.MAX_VALUE;
    }

    public boolean adaptive() {
        return adaptive;
    }

    /** The window in nanoseconds (Long.MAX_VALUE: always; adaptive: the largest it grows to). */
    public long windowNanos() {
        return windowNanos;
    }

    private static final ThreadLocal<Window> LOOP = new ThreadLocal<>();

    /**
     * On an event loop's thread: {@code busy} tells whether something on this loop waits for an
     * answer (a host queue with commands in flight). An adaptive loop with such sources polls only
     * while one of them is busy, and sleeps at once when none is: what would wake it then is new
     * work from elsewhere, which no window predicts. No effect on other modes.
     */
    public static void pollWhile(BooleanSupplier busy) {
        Window w = LOOP.get();
        if (w != null) {
            w.sources = Arrays.copyOf(w.sources, w.sources.length + 1);
            w.sources[w.sources.length - 1] = busy;
        }
    }

    /** On the same loop's thread: {@code busy} is gone (its connection ended, its queue closed). */
    public static void stopPollingFor(BooleanSupplier busy) {
        Window w = LOOP.get();
        if (w != null) {
            w.sources = Arrays.stream(w.sources).filter(b -> b != busy)
                    .toArray(BooleanSupplier[]::new);
            w.holds = Arrays.stream(w.holds).filter(b -> b != busy)
                    .toArray(BooleanSupplier[]::new);
        }
    }

    /** How long after its last event an adaptive loop keeps polling while a {@link #holdWhile} source is busy: 1 ms. */
    public static final long HOLD_NANOS = 1_000_000;

    /**
     * On an event loop's thread: while {@code busy} (a disk's operations in flight), an adaptive
     * loop keeps polling up to {@link #HOLD_NANOS} after its last event, whatever its window: a
     * device's completions come in clumps with gaps a short window would sleep through, and each
     * sleep costs a wake-up when the next clump comes (on a VM, an interrupt to the loop's core).
     * A device slower than that still lets the loop sleep. No effect on other modes.
     */
    public static void holdWhile(BooleanSupplier busy) {
        Window w = LOOP.get();
        if (w != null) {
            w.holds = Arrays.copyOf(w.holds, w.holds.length + 1);
            w.holds[w.holds.length - 1] = busy;
        }
    }


    /** A strategy for one loop (it keeps the time of that loop's last event). */
    SelectStrategy newStrategy() {
        if (always()) {
            // Netty's busy wait spins in native code (epoll_wait with no timeout), timers included
            return (selectNow, hasTasks) -> hasTasks ? selectNow.get() : SelectStrategy.BUSY_WAIT;
        }
        return new Window(windowNanos, adaptive, System::nanoTime, Thread::yield);
    }

    /**
     * A window: non-blocking epoll_wait, the loop's tasks, and again, until the window since the
     * last event closes; then the loop sleeps. Between two polls the loop yields its core to any
     * thread waiting for it: where loops and hosts outnumber the cores, an unyielding poll kept
     * the thread that would have sent the answer off the core (measured: 4 KiB randread QD32
     * with two target and two host loops on two cores lost 4% to sleeping loops without the
     * yield and gained 8% with it). Waking counts as an event (the loop handled what
     * woke it before it asks again), so the window opens after it too. Adaptive, the window is
     * resized at each wake-up from how long after the last event it came.
     */
    static final class Window implements SelectStrategy {
        private final long max;
        private final boolean adaptive;
        private final LongSupplier clock;
        private long window;
        private long lastEvent;
        private boolean slept;
        /** The sleep began with nothing in flight: its length says nothing about polling. */
        private boolean idleSleep;
        private boolean bound;
        BooleanSupplier[] sources = new BooleanSupplier[0];
        BooleanSupplier[] holds = new BooleanSupplier[0];

        /** What a poll that found nothing does before the next: {@link Thread#yield()}. */
        private final Runnable pause;

        Window(long max, boolean adaptive, LongSupplier clock) {
            this(max, adaptive, clock, () -> { });
        }

        Window(long max, boolean adaptive, LongSupplier clock, Runnable pause) {
            this.max = max;
            this.adaptive = adaptive;
            this.clock = clock;
            this.pause = pause;
            this.window = adaptive ? 0 : max;
            this.lastEvent = clock.getAsLong();
        }

        /** The window now, in nanoseconds. */
        long window() {
            return window;
        }

        @Override
        public int calculateStrategy(IntSupplier selectNow, boolean hasTasks) throws Exception {
            if (!bound) {
                bound = true; // the first call is on the loop's own thread
                LOOP.set(this);
            }
            int ready = selectNow.get();
            long now = clock.getAsLong();
            if (slept) {
                slept = false;
                if (adaptive && !idleSleep) {
                    adapt(now - lastEvent);
                }
                lastEvent = now;
            }
            if (ready > 0 || hasTasks) {
                lastEvent = now;
                return ready;
            }
            boolean waiting = !adaptive || waiting();
            if (waiting && now - lastEvent < window || adaptive && now - lastEvent < HOLD_NANOS && holding()) {
                // a polite poll: a thread waiting for this core (the host on a shared machine,
                // another loop, the JIT) runs first, so polling for an answer never delays it
                pause.run();
                return 0;
            }
            slept = true;
            idleSleep = !waiting;
            return SelectStrategy.SELECT;
        }

        /** Whether a device's operations are in flight on this loop ({@link #holdWhile}). */
        private boolean holding() {
            for (BooleanSupplier b : holds) {
                if (b.getAsBoolean()) {
                    return true;
                }
            }
            return false;
        }

        /** Whether something on this loop waits for an answer (always, when nothing said). */
        private boolean waiting() {
            BooleanSupplier[] s = sources;
            if (s.length == 0) {
                return true;
            }
            for (BooleanSupplier b : s) {
                if (b.getAsBoolean()) {
                    return true;
                }
            }
            return false;
        }

        /** {@code gap}: from the last event before a sleep to the wake-up that ended it. */
        private void adapt(long gap) {
            if (gap > max) {
                // polling could not have caught it: poll less
                window = window / 2 < ADAPTIVE_START_NANOS ? 0 : window / 2;
            } else if (gap > window) {
                // a longer window would have caught it without a wake-up
                window = Math.min(max, Math.max(ADAPTIVE_START_NANOS, window * 2));
            }
        }
    }

    /** The form {@link #parse} reads: off, always, or the window in microseconds. */
    public String text() {
        if (adaptive) {
            return windowNanos == ADAPTIVE.windowNanos ? "adaptive"
                    : "adaptive:" + TimeUnit.NANOSECONDS.toMicros(windowNanos);
        }
        return off() ? "off" : always() ? "always" : Long.toString(TimeUnit.NANOSECONDS.toMicros(windowNanos));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BusyPoll b && b.windowNanos == windowNanos && b.adaptive == adaptive;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(windowNanos) * 31 + (adaptive ? 1 : 0);
    }

    @Override
    public String toString() {
        if (adaptive) {
            return "adaptive, up to " + TimeUnit.NANOSECONDS.toMicros(windowNanos) + " us";
        }
        return off() ? "off" : always() ? "always" : TimeUnit.NANOSECONDS.toMicros(windowNanos) + " us";
    }
}
