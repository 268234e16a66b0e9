package io.nvmeof.target;

import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.nvmeof.fabric.EventLoops;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The target's threads: the event loops that serve the ports, the I/O threads for blocking backend
 * calls (or the embedder's executor), and the few authentication threads for DH-HMAC-CHAP's
 * Diffie-Hellman work. Made with the first port, ended by {@link #close}.
 */
final class TargetThreads {
    private static final System.Logger LOG = System.getLogger(Target.class.getName());
    /** Jobs waiting for an authentication thread at most; more are refused. */
    static final int AUTH_BACKLOG = 256;
    /** Commands waiting for an I/O thread at most: ample room for every queue's depth at once. */
    private static final int IO_BACKLOG = 65536;

    private final ExecutorService embedderIo;
    private EventLoopGroup group;
    private ExecutorService io;
    private ThreadPoolExecutor auth;

    /** {@code embedderIo}: the embedder's executor for backend calls, which stays theirs to shut down; null for ours. */
    TargetThreads(ExecutorService embedderIo) {
        this.embedderIo = embedderIo;
        this.io = embedderIo;
    }

    /** Starts what is not running yet, as {@code options} say. */
    synchronized void start(Target.Options options) {
        if (group == null) {
            EventLoops.use(options.get(Settings.IO_ENGINE));
            int threads = options.get(Settings.EVENT_LOOP_THREADS);
            group = EventLoops.newGroup(threads, "nvmeof-target", options.get(Settings.BUSY_POLL));
            LOG.log(System.Logger.Level.INFO, "{0,number,#} event loops on {1}, busy polling {2}",
                    threads > 0 ? threads : Runtime.getRuntime().availableProcessors(), EventLoops.engine(),
                    EventLoops.nativeEpoll() ? options.get(Settings.BUSY_POLL) : "off (epoll only)");
        }
        if (auth == null) {
            int threads = options.get(Settings.AUTH_THREADS) > 0 ? options.get(Settings.AUTH_THREADS)
                    : Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
            // bounded: each queue has at most one job here, and a full pool refuses (the host may retry)
            auth = pool(threads, AUTH_BACKLOG, "nvmeof-auth-");
        }
        if (io == null) {
            // a bounded array queue: no allocation per queued command
            io = pool(options.get(Settings.IO_THREADS), IO_BACKLOG, "nvmeof-io-");
        }
    }

    private static ThreadPoolExecutor pool(int threads, int backlog, String prefix) {
        AtomicInteger n = new AtomicInteger();
        return new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new ArrayBlockingQueue<>(backlog), r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    synchronized EventLoopGroup group() {
        return group;
    }

    /** The event loops (none before the first port). */
    synchronized List<EventExecutor> eventLoops() {
        List<EventExecutor> l = new ArrayList<>();
        if (group != null && !group.isShuttingDown()) {
            group.forEach(l::add);
        }
        return l;
    }

    /** Where blocking backend calls run. */
    ExecutorService io() {
        return io;
    }

    /** Where DH-HMAC-CHAP's Diffie-Hellman work runs: its own few threads, never the I/O executor's. */
    ThreadPoolExecutor auth() {
        return auth;
    }

    /** Stops the authentication threads at once: a host mid-handshake is being dropped anyway. */
    void stopAuthentication() {
        if (auth != null) {
            auth.shutdownNow();
        }
    }

    /**
     * Ends the I/O threads (ours, never the embedder's) after what runs there, then the event
     * loops, each closing its own file I/O queues first.
     */
    synchronized void close() {
        if (io != null && io != embedderIo) {
            // backend calls still running hand their requests back to the event loops, which
            // release them; so the executor drains before the loops stop
            io.shutdown();
            try {
                if (!io.awaitTermination(10, TimeUnit.SECONDS)) {
                    LOG.log(System.Logger.Level.WARNING, "backend I/O still running after 10 s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (group != null) {
            closeLoopRings();
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /**
     * Each loop closes its own file I/O queues, delivering what is still in flight there, before
     * the loops stop: completions run only on their loop, and a queue closed after it would keep
     * the buffers of what was in flight.
     */
    private void closeLoopRings() {
        List<Future<?>> closing = new ArrayList<>();
        for (EventExecutor l : group) {
            try {
                closing.add(l.submit(LoopRing::closeOnThisLoop));
            } catch (RejectedExecutionException e) {
                // already stopping: it closes its handles itself
            }
        }
        long deadline = System.nanoTime() + LoopRing.CLOSE_WAIT_NANOS + TimeUnit.SECONDS.toNanos(1);
        for (Future<?> f : closing) {
            if (!f.awaitUninterruptibly(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                LOG.log(System.Logger.Level.WARNING, "an event loop did not close its file I/O queues in time");
            }
        }
    }
}
