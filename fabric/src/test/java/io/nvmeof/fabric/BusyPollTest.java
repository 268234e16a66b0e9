package io.nvmeof.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SelectStrategy;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

class BusyPollTest {
    @Test
    void parsesWhatTheCommandLineGives() {
        assertTrue(BusyPoll.parse("").always());
        for (String word : BusyPoll.MODES) {
            assertEquals(word, BusyPoll.parse(word).text(), "a word completion offers is one parse takes");
        }
        assertTrue(BusyPoll.parse("always").always());
        assertTrue(BusyPoll.parse("off").off());
        assertTrue(BusyPoll.parse("0").off());
        assertEquals(50_000, BusyPoll.parse("50").windowNanos());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BusyPoll.parse("fast"));
        assertTrue(e.getMessage().contains("'fast'"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> BusyPoll.parse("-5"));
    }

    @Test
    void aWindowPollsAfterAnEventThenSleeps() throws Exception {
        SelectStrategy s = BusyPoll.window(20_000).newStrategy();
        assertEquals(3, s.calculateStrategy(() -> 3, false), "events are handled");
        assertEquals(0, s.calculateStrategy(() -> 0, false), "right after an event: poll again, do not sleep");
        // idle polls do not reopen the window: once its 20 us have passed, the loop sleeps
        Awaitility.await("the window has passed: sleep").atMost(Duration.ofSeconds(10)).pollInSameThread()
                .pollInterval(Duration.ofMillis(1)).until(() -> s.calculateStrategy(() -> 0, false) == SelectStrategy.SELECT);
        assertEquals(0, s.calculateStrategy(() -> 0, true), "queued tasks run without sleeping");
        assertEquals(0, s.calculateStrategy(() -> 0, false), "a task counts as activity: the window opens again");
    }

    @Test
    void adaptiveParsesAndPrints() {
        assertEquals(BusyPoll.ADAPTIVE, BusyPoll.parse("adaptive"));
        assertEquals("adaptive", BusyPoll.ADAPTIVE.text());
        assertEquals(BusyPoll.adaptive(250), BusyPoll.parse(BusyPoll.adaptive(250).text()));
        assertEquals(250_000, BusyPoll.parse("adaptive:250").windowNanos());
        assertTrue(BusyPoll.parse("adaptive:250").adaptive() && !BusyPoll.parse("250").adaptive());
        assertThrows(IllegalArgumentException.class, () -> BusyPoll.parse("adaptive:0"));
        assertThrows(IllegalArgumentException.class, () -> BusyPoll.parse("adaptive:x"));
    }

    /** A clock of our own; each step of the loop: ask, then the time passes. */
    static final class Clock {
        long now;
    }

    static final long US = 1000;

    /** The loop sleeps, then wakes {@code gap} after its last event: the window it has after. */
    static long sleepAndWake(BusyPoll.Window w, Clock c, long gap) throws Exception {
        long last = c.now;
        // polling until the window closes, then to sleep
        while (w.calculateStrategy(() -> 0, false) == 0) {
            c.now += US;
        }
        c.now = last + gap;
        int after = w.calculateStrategy(() -> 0, false);
        assertEquals(w.window() > 0 ? 0 : SelectStrategy.SELECT, after, "the wake-up opens the window it has, if any");
        return w.window();
    }

    @Test
    void anAdaptiveWindowGrowsWhenWakeUpsComeSoonAndShrinksWhenTheyComeLate() throws Exception {
        Clock c = new Clock();
        BusyPoll.Window w = new BusyPoll.Window(100 * US, true, () -> c.now);
        assertEquals(0, w.window(), "it starts sleeping as off does");
        assertEquals(SelectStrategy.SELECT, w.calculateStrategy(() -> 0, false));
        c.now += 15 * US;
        // a host answering 15 us after each answer: the window grows until it covers the gap
        assertEquals(0, w.calculateStrategy(() -> 0, false));
        assertEquals(10 * US, w.window(), "first try: 10 us");
        assertEquals(20 * US, sleepAndWake(w, c, 15 * US), "10 us was short: doubled");
        assertEquals(20 * US, sleepAndWake(w, c, 15 * US), "a gap inside the window changes nothing");
        assertEquals(40 * US, sleepAndWake(w, c, 90 * US), "a longer gap under the limit: doubled again");
        assertEquals(80 * US, sleepAndWake(w, c, 90 * US));
        assertEquals(100 * US, sleepAndWake(w, c, 90 * US), "to the limit at most");
        assertEquals(100 * US, sleepAndWake(w, c, 95 * US));
        // events a millisecond apart: polling cannot pay, the window halves down to none
        assertEquals(50 * US, sleepAndWake(w, c, 1000 * US));
        assertEquals(25 * US, sleepAndWake(w, c, 1000 * US));
        assertEquals(12_500, sleepAndWake(w, c, 1000 * US));
        assertEquals(0, sleepAndWake(w, c, 1000 * US), "below 10 us: none");
        assertEquals(0, sleepAndWake(w, c, 1000 * US));
    }

    @Test
    void theDefaultWindowGrowsToCatchAHostThatAnswersIn150Microseconds() throws Exception {
        // a host answering a batch of completions with a batch of 4 KiB writes: 100-200 us on a VM
        long gap = 150 * US;
        Clock c = new Clock();
        BusyPoll.Window w = new BusyPoll.Window(BusyPoll.ADAPTIVE.windowNanos(), true, () -> c.now);
        assertEquals(SelectStrategy.SELECT, w.calculateStrategy(() -> 0, false));
        c.now += gap;
        assertEquals(0, w.calculateStrategy(() -> 0, false));
        long window = w.window();
        for (int i = 0; i < 10 && window < gap; i++) {
            window = sleepAndWake(w, c, gap);
        }
        assertEquals(160 * US, window, "10, 20, 40, 80, 160 us");
        // now the loop is still polling when the host's next commands come: no sleep, no wake-up
        long last = c.now;
        while (c.now - last < gap) {
            assertEquals(0, w.calculateStrategy(() -> 0, false), (c.now - last) / US + " us after the last event");
            c.now += 10 * US;
        }
        assertEquals(1, w.calculateStrategy(() -> 1, false), "caught by polling");
        assertEquals(160 * US, w.window());

        // with a limit of 100 us the same host makes the window shrink to none: it sleeps every gap
        Clock c2 = new Clock();
        BusyPoll.Window narrow = new BusyPoll.Window(100 * US, true, () -> c2.now);
        assertEquals(SelectStrategy.SELECT, narrow.calculateStrategy(() -> 0, false));
        c2.now += gap;
        assertEquals(SelectStrategy.SELECT, narrow.calculateStrategy(() -> 0, false), "150 us is past its limit");
        for (int i = 0; i < 10; i++) {
            sleepAndWake(narrow, c2, gap);
        }
        assertEquals(0, narrow.window());
    }

    @Test
    void aLoopThatKnowsWhatItWaitsForPollsOnlyWhileItWaits() throws Exception {
        Clock c = new Clock();
        BusyPoll.Window w = new BusyPoll.Window(100 * US, true, () -> c.now);
        assertEquals(SelectStrategy.SELECT, w.calculateStrategy(() -> 0, false)); // binds this thread as its loop
        boolean[] inFlight = {true};
        java.util.function.BooleanSupplier q = () -> inFlight[0];
        BusyPoll.pollWhile(q);
        // answers 30 us after each command: the window grows while a command is in flight
        c.now += 30 * US;
        assertEquals(0, w.calculateStrategy(() -> 0, false));
        assertEquals(20 * US, sleepAndWake(w, c, 30 * US));
        assertEquals(40 * US, sleepAndWake(w, c, 30 * US));
        // the answer came: nothing in flight, so it sleeps at once, window or not
        inFlight[0] = false;
        assertEquals(SelectStrategy.SELECT, w.calculateStrategy(() -> 0, false));
        // and a long idle gap after that is no reason to poll less next time
        c.now += 5000 * US;
        inFlight[0] = true;
        assertEquals(0, w.calculateStrategy(() -> 0, false), "woken with a command in flight: it polls");
        assertEquals(40 * US, w.window());
        BusyPoll.stopPollingFor(q);
        inFlight[0] = false;
        c.now += 1 * US;
        assertEquals(0, w.calculateStrategy(() -> 0, false), "without sources the window alone decides");
    }

    @Test
    void whileADeviceHasOperationsInFlightAnAdaptiveLoopPollsUpToAMillisecond() throws Exception {
        Clock c = new Clock();
        BusyPoll.Window w = new BusyPoll.Window(100 * US, true, () -> c.now);
        assertEquals(SelectStrategy.SELECT, w.calculateStrategy(() -> 0, false)); // binds this thread as its loop
        assertEquals(0, w.window(), "no window yet");
        boolean[] disk = {true};
        java.util.function.BooleanSupplier d = () -> disk[0];
        BusyPoll.holdWhile(d);
        try {
            c.now += 5000 * US;
            assertEquals(2, w.calculateStrategy(() -> 2, false), "a completion");
            long last = c.now;
            // the disk's next completions come in clumps: the loop polls across the gap, window or not
            while (c.now - last < BusyPoll.HOLD_NANOS) {
                assertEquals(0, w.calculateStrategy(() -> 0, false), (c.now - last) / US + " us after the last event");
                c.now += 50 * US;
            }
            assertEquals(SelectStrategy.SELECT, w.calculateStrategy(() -> 0, false), "a millisecond without events: sleep");
            c.now += 10 * US;
            assertEquals(1, w.calculateStrategy(() -> 1, false));
            disk[0] = false;
            c.now += 1 * US;
            assertEquals(SelectStrategy.SELECT, w.calculateStrategy(() -> 0, false),
                    "nothing in flight: the window alone decides, and it is none");
        } finally {
            BusyPoll.stopPollingFor(d);
        }
        disk[0] = true;
        c.now += 1 * US;
        assertEquals(1, w.calculateStrategy(() -> 1, false));
        c.now += 50 * US; // past the window the last wake-up gave it (10 us), inside what a hold would poll
        assertTrue(w.window() < 50 * US, w.window() + " ns");
        assertEquals(SelectStrategy.SELECT, w.calculateStrategy(() -> 0, false), "a hold that was stopped holds nothing");
    }

    @Test
    void aFixedWindowOpensAfterTheWakeUpToo() throws Exception {
        Clock c = new Clock();
        BusyPoll.Window w = new BusyPoll.Window(20 * US, false, () -> c.now);
        c.now += 30 * US;
        assertEquals(SelectStrategy.SELECT, w.calculateStrategy(() -> 0, false));
        c.now += 500 * US;
        assertEquals(0, w.calculateStrategy(() -> 0, false), "woken: poll for the answer to what it handled");
        c.now += 19 * US;
        assertEquals(0, w.calculateStrategy(() -> 0, false));
        c.now += 2 * US;
        assertEquals(SelectStrategy.SELECT, w.calculateStrategy(() -> 0, false));
        assertEquals(20 * US, w.window(), "a fixed window stays as given");
    }

    @Test
    void aPollThatFindsNothingGivesWayToThreadsWaitingForTheCore() throws Exception {
        Clock c = new Clock();
        int[] pauses = {0};
        BusyPoll.Window w = new BusyPoll.Window(20 * US, false, () -> c.now, () -> pauses[0]++);
        assertEquals(3, w.calculateStrategy(() -> 3, false), "events: handled at once");
        assertEquals(0, w.calculateStrategy(() -> 0, true), "tasks: run at once");
        assertEquals(0, pauses[0], "no pause while there is work");
        c.now += 5 * US;
        assertEquals(0, w.calculateStrategy(() -> 0, false), "nothing: poll again");
        assertEquals(1, pauses[0], "after yielding the core once");
        c.now += 30 * US;
        assertEquals(SelectStrategy.SELECT, w.calculateStrategy(() -> 0, false));
        assertEquals(1, pauses[0], "going to sleep: no pause");
        // the real one yields the thread; with no other thread it costs a system call
        BusyPoll.Window real = (BusyPoll.Window) BusyPoll.window(1_000_000).newStrategy();
        assertEquals(0, real.calculateStrategy(() -> 0, false));
    }

    @Test
    void alwaysNeverSleeps() throws Exception {
        SelectStrategy s = BusyPoll.ALWAYS.newStrategy();
        Thread.sleep(5);
        assertEquals(SelectStrategy.BUSY_WAIT, s.calculateStrategy(() -> 0, false));
        assertEquals(0, s.calculateStrategy(() -> 0, true), "queued tasks run first");
    }

    /** Keep-alive and command timeouts are timers: an idle busy-polling loop must still run them on time. */
    @Test
    void anIdleBusyPollingLoopRunsItsTimersOnTime() throws Exception {
        assumeTrue(EventLoops.nativeEpoll(), "busy polling needs native epoll");
        EventLoopGroup group = EventLoops.newGroup(1, "busy-poll-test", BusyPoll.ALWAYS);
        try {
            EventLoop loop = group.next();
            loop.submit(() -> { }).sync(); // started, and idle from now on
            CompletableFuture<Long> fired = new CompletableFuture<>();
            long t0 = System.nanoTime();
            loop.schedule(() -> fired.complete(System.nanoTime() - t0), 50, TimeUnit.MILLISECONDS);
            long late = TimeUnit.NANOSECONDS.toMillis(fired.get(5, TimeUnit.SECONDS));
            assertTrue(late < 1000, "a 50 ms timer fired after " + late + " ms");
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void anIdleLoopWithAWindowSleeps() throws Exception {
        assumeTrue(EventLoops.nativeEpoll(), "busy polling needs native epoll");
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        EventLoopGroup group = EventLoops.newGroup(1, "busy-poll-window-test", BusyPoll.window(200));
        try {
            EventLoop loop = group.next();
            long tid = loop.submit(() -> Thread.currentThread().getId()).get(); // the last event: 200 us of polling, then rest
            long cpu0 = mx.getThreadCpuTime(tid);
            Thread.sleep(500);
            long cpuMs = TimeUnit.NANOSECONDS.toMillis(mx.getThreadCpuTime(tid) - cpu0);
            assertTrue(cpuMs < 100, "an idle loop with a 200 us window used " + cpuMs + " ms of CPU in 500 ms");
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }
}
