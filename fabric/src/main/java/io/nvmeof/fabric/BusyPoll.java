package io.nvmeof.fabric;

import io.netty.channel.SelectStrategy;
import java.util.concurrent.TimeUnit;

/**
 * How an event loop waits for I/O. {@link #OFF}: it sleeps in epoll as soon as nothing is ready
 * (a wake-up per burst of events). {@link #ALWAYS}: it never sleeps, asking epoll again and again
 * as SPDK's reactors poll, which saves the wake-up of a sleeping thread on every event and costs a
 * whole core per loop. In between, a window: after an event the loop keeps asking for the given
 * time before it sleeps (the idea of Linux's {@code net.core.busy_poll}), so the answers to what it
 * just sent are picked up without a wake-up while traffic flows, and an idle loop costs nothing.
 *
 * <p>Keep-alive, command timeouts and deadlines are timers of the loop; they fire on time however
 * it polls ({@code BusyPollTest}).
 */
public final class BusyPoll {
    public static final BusyPoll OFF = new BusyPoll(0);
    public static final BusyPoll ALWAYS = new BusyPoll(Long.MAX_VALUE);

    private final long windowNanos;

    private BusyPoll(long windowNanos) {
        this.windowNanos = windowNanos;
    }

    /** Polls for {@code micros} after the last event before sleeping; 0 is {@link #OFF}. */
    public static BusyPoll window(long micros) {
        if (micros < 0 || micros > 1_000_000) {
            throw new IllegalArgumentException("busy-poll window must be 0..1000000 microseconds: " + micros);
        }
        return micros == 0 ? OFF : new BusyPoll(TimeUnit.MICROSECONDS.toNanos(micros));
    }

    /**
     * The form a command line gives: empty or {@code always} for {@link #ALWAYS}, {@code off} or
     * {@code 0} for {@link #OFF}, otherwise a window in microseconds.
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
            return window(Long.parseLong(v));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("busy-poll: expected always, off or a window in microseconds: '" + s + "'");
        }
    }

    public boolean off() {
        return windowNanos == 0;
    }

    public boolean always() {
        return windowNanos == Long.MAX_VALUE;
    }

    /** The window in nanoseconds (Long.MAX_VALUE: always). */
    public long windowNanos() {
        return windowNanos;
    }

    /** A strategy for one loop (it keeps the time of that loop's last event). */
    SelectStrategy newStrategy() {
        if (always()) {
            // Netty's busy wait spins in native code (epoll_wait with no timeout), timers included
            return (selectNow, hasTasks) -> hasTasks ? selectNow.get() : SelectStrategy.BUSY_WAIT;
        }
        // A window: non-blocking epoll_wait, the loop's tasks, and again, until the window closes
        return new SelectStrategy() {
            private long lastEvent = System.nanoTime();

            @Override
            public int calculateStrategy(io.netty.util.IntSupplier selectNow, boolean hasTasks) throws Exception {
                int ready = selectNow.get();
                long now = System.nanoTime();
                if (ready > 0 || hasTasks) {
                    lastEvent = now;
                    return ready;
                }
                return now - lastEvent < windowNanos ? 0 : SelectStrategy.SELECT;
            }
        };
    }

    /** The form {@link #parse} reads: off, always, or the window in microseconds. */
    public String text() {
        return off() ? "off" : always() ? "always" : Long.toString(TimeUnit.NANOSECONDS.toMicros(windowNanos));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BusyPoll b && b.windowNanos == windowNanos;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(windowNanos);
    }

    @Override
    public String toString() {
        return off() ? "off" : always() ? "always" : TimeUnit.NANOSECONDS.toMicros(windowNanos) + " us";
    }
}
