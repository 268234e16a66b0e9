package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A controller's serial executor on the shared threads behaves as a thread of its own would. */
@Timeout(30)
class HostThreadsTest {
    @Test
    void tasksRunOneAtATimeInOrderAndKnowTheirThread() throws Exception {
        HostThreads.Serial s = HostThreads.serial();
        List<Integer> order = new CopyOnWriteArrayList<>();
        AtomicInteger inside = new AtomicInteger();
        AtomicBoolean overlapped = new AtomicBoolean();
        AtomicBoolean knew = new AtomicBoolean(true);
        CountDownLatch done = new CountDownLatch(200);
        for (int i = 0; i < 200; i++) {
            int n = i;
            s.execute(() -> {
                if (inside.incrementAndGet() != 1) {
                    overlapped.set(true);
                }
                knew.compareAndSet(true, s.inThread());
                order.add(n);
                inside.decrementAndGet();
                done.countDown();
            });
        }
        assertTrue(done.await(10, TimeUnit.SECONDS));
        assertFalse(overlapped.get(), "two tasks of one executor ran at once");
        assertTrue(knew.get(), "a task knows it runs on its executor's thread");
        assertFalse(s.inThread(), "the caller is not");
        for (int i = 0; i < 200; i++) {
            assertEquals(i, order.get(i));
        }
        // two executors do not wait for each other: one blocked, the other runs
        HostThreads.Serial other = HostThreads.serial();
        CountDownLatch release = new CountDownLatch(1);
        s.execute(() -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        CountDownLatch ran = new CountDownLatch(1);
        other.execute(ran::countDown);
        assertTrue(ran.await(5, TimeUnit.SECONDS), "a blocked executor held up another");
        release.countDown();
    }

    @Test
    void scheduledAndRepeatedTasksRunUntilShutdown() throws Exception {
        HostThreads.Serial s = HostThreads.serial();
        CountDownLatch later = new CountDownLatch(1);
        long start = System.nanoTime();
        s.schedule(later::countDown, 50, TimeUnit.MILLISECONDS);
        assertTrue(later.await(5, TimeUnit.SECONDS));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(50), "ran before its delay");
        AtomicInteger ticks = new AtomicInteger();
        s.scheduleWithFixedDelay(ticks::incrementAndGet, 0, 5, TimeUnit.MILLISECONDS);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (ticks.get() < 3 && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        assertTrue(ticks.get() >= 3, "a repeated task repeats");
        s.shutdownNow();
        assertTrue(s.awaitTermination(5, TimeUnit.SECONDS));
        int after = ticks.get();
        Thread.sleep(50);
        assertTrue(ticks.get() <= after + 1, "a repeated task stops with its executor");
    }

    @Test
    void shutdownNowInterruptsWhatRunsDropsWhatWaitsAndRefusesMore() throws Exception {
        HostThreads.Serial s = HostThreads.serial();
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        AtomicBoolean waitingRan = new AtomicBoolean();
        s.execute(() -> {
            started.countDown();
            try {
                Thread.sleep(30_000); // a reconnect attempt waiting for its connection
            } catch (InterruptedException e) {
                interrupted.set(true);
            }
        });
        s.execute(() -> waitingRan.set(true));
        assertTrue(started.await(5, TimeUnit.SECONDS));
        s.shutdownNow();
        assertTrue(s.awaitTermination(5, TimeUnit.SECONDS), "the running task ended");
        assertTrue(interrupted.get(), "the running task was interrupted");
        assertFalse(waitingRan.get(), "a waiting task was dropped");
        assertThrows(RejectedExecutionException.class, () -> s.execute(() -> { }));
        assertThrows(RejectedExecutionException.class, () -> s.schedule(() -> { }, 1, TimeUnit.MILLISECONDS));
        // the shared thread that ran it is not left interrupted for the next executor's task
        HostThreads.Serial next = HostThreads.serial();
        AtomicBoolean clean = new AtomicBoolean();
        CountDownLatch ran = new CountDownLatch(1);
        next.execute(() -> {
            clean.set(!Thread.currentThread().isInterrupted());
            ran.countDown();
        });
        assertTrue(ran.await(5, TimeUnit.SECONDS));
        assertTrue(clean.get());
    }
}
