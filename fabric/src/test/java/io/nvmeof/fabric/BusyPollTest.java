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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class BusyPollTest {
    @Test
    void parsesWhatTheCommandLineGives() {
        assertTrue(BusyPoll.parse("").always());
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
        Thread.sleep(40);
        assertEquals(SelectStrategy.SELECT, s.calculateStrategy(() -> 0, false), "the window has passed: sleep");
        assertEquals(0, s.calculateStrategy(() -> 0, true), "queued tasks run without sleeping");
        assertEquals(0, s.calculateStrategy(() -> 0, false), "a task counts as activity: the window opens again");
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
            long tid = loop.submit(() -> Thread.currentThread().getId()).get();
            Thread.sleep(50);
            long cpu0 = mx.getThreadCpuTime(tid);
            Thread.sleep(500);
            long cpuMs = TimeUnit.NANOSECONDS.toMillis(mx.getThreadCpuTime(tid) - cpu0);
            assertTrue(cpuMs < 100, "an idle loop with a 200 us window used " + cpuMs + " ms of CPU in 500 ms");
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }
}
