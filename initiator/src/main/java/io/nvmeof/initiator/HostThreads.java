package io.nvmeof.initiator;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The host's threads for what is not I/O (teardown, reconnect attempts, asynchronous events,
 * path checks), shared by every controller and path in the process: one timer thread for what
 * waits, and a pool whose threads come while tasks run (a reconnect attempt blocks on its
 * connection, so a gateway lost under a hundred controllers takes a thread each for a moment)
 * and go after 10 s idle. Each controller or path gets a {@link Serial}: its tasks run one at a
 * time, in order, as on a thread of its own. An idle process with any number of devices has
 * the timer's thread alone.
 */
final class HostThreads {
    private static final AtomicInteger NEXT = new AtomicInteger();
    private static final ThreadPoolExecutor POOL = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 10, TimeUnit.SECONDS,
            new SynchronousQueue<>(), r -> {
                Thread t = new Thread(r, "nvmeof-ctrl-" + NEXT.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
    private static final ScheduledThreadPoolExecutor TIMER = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "nvmeof-timer");
        t.setDaemon(true);
        return t;
    });

    static {
        TIMER.setRemoveOnCancelPolicy(true);
    }

    private HostThreads() {
    }

    /** A new serial executor on the shared threads. */
    static Serial serial() {
        return new Serial();
    }

    /**
     * Tasks one at a time in order, on the shared pool; delayed ones through the shared timer.
     * Shut down, it takes no more, drops what waits, and interrupts what runs (as
     * {@code shutdownNow} on a thread of its own would).
     */
    static final class Serial {
        private final ArrayDeque<Runnable> queue = new ArrayDeque<>();
        private final ArrayDeque<ScheduledFuture<?>> timers = new ArrayDeque<>();
        private Thread running;
        private boolean scheduled;
        private boolean shutdown;

        private Serial() {
        }

        /** Runs {@code task} after those before it; throws RejectedExecutionException once shut down. */
        void execute(Runnable task) {
            synchronized (this) {
                if (shutdown) {
                    throw new RejectedExecutionException("shut down");
                }
                queue.addLast(task);
                if (scheduled) {
                    return;
                }
                scheduled = true;
            }
            POOL.execute(this::drain);
        }

        private void drain() {
            while (true) {
                Runnable task;
                synchronized (this) {
                    task = shutdown ? null : queue.pollFirst();
                    if (task == null) {
                        scheduled = false;
                        running = null;
                        notifyAll();
                        return;
                    }
                    running = Thread.currentThread();
                }
                try {
                    task.run();
                } catch (RuntimeException | Error e) {
                    System.getLogger(HostThreads.class.getName()).log(System.Logger.Level.WARNING, "host task failed", e);
                } finally {
                    synchronized (this) {
                        running = null;
                    }
                    Thread.interrupted(); // an interrupt meant for this task ends with it
                }
            }
        }

        /** Runs {@code task} here after {@code delay}. */
        ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
            synchronized (this) {
                if (shutdown) {
                    throw new RejectedExecutionException("shut down");
                }
                prune();
                ScheduledFuture<?> f = TIMER.schedule(() -> submitQuietly(task), delay, unit);
                timers.addLast(f);
                return f;
            }
        }

        /** Runs {@code task} here every {@code delay}, after each run, until shut down. */
        void scheduleWithFixedDelay(Runnable task, long initial, long delay, TimeUnit unit) {
            schedule(new Runnable() {
                @Override
                public void run() {
                    task.run();
                    try {
                        schedule(this, delay, unit);
                    } catch (RejectedExecutionException e) {
                        // shut down
                    }
                }
            }, initial, unit);
        }

        private void submitQuietly(Runnable task) {
            try {
                execute(task);
            } catch (RejectedExecutionException e) {
                // shut down meanwhile
            }
        }

        private void prune() {
            for (Iterator<ScheduledFuture<?>> i = timers.iterator(); i.hasNext(); ) {
                if (i.next().isDone()) {
                    i.remove();
                }
            }
        }

        /** Takes nothing more, drops what waits, cancels what is timed, interrupts what runs. */
        void shutdownNow() {
            synchronized (this) {
                shutdown = true;
                queue.clear();
                for (ScheduledFuture<?> f : timers) {
                    f.cancel(false);
                }
                timers.clear();
                if (running != null && running != Thread.currentThread()) {
                    running.interrupt();
                }
            }
        }

        /** Waits, at most {@code timeout}, until no task of this executor runs (after {@link #shutdownNow}). */
        synchronized boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
            long deadline = System.nanoTime() + unit.toNanos(timeout);
            while (running != null || scheduled && !shutdown) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return true;
        }

        /** Whether the calling thread is running one of this executor's tasks. */
        synchronized boolean inThread() {
            return running == Thread.currentThread();
        }
    }
}
