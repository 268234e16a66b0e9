package io.nvmeof.target;

import io.netty.channel.EventLoop;
import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.SingleThreadEventLoop;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.epoll.Native;
import io.netty.channel.unix.FileDescriptor;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.Future;
import io.nvmeof.target.backend.IoRing;
import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An event loop's own io_uring: file and block I/O submitted on the loop, completed on it, with
 * no thread in between. Made on first use, on the loop's thread; the ring's eventfd is
 * registered with the loop like a socket, so completions that come later (a disk's, an
 * fdatasync's) wake the loop. A command goes to the kernel as it is queued; the responses of a
 * batch of completions leave in one flush per connection. The loop closes its ring as it ends.
 *
 * <p>Native epoll loops only. Where the kernel or a seccomp filter refuses io_uring, this says
 * so once in the log and {@link #of} answers null: the I/O threads do the work.
 */
final class LoopRing implements EpollIoHandle {
    private static final System.Logger LOG = System.getLogger(LoopRing.class.getName());
    /** Submission entries per ring; as many operations may be in flight per loop. */
    static final int ENTRIES = 256;
    /** Why rings are not used: logged once per process. */
    private static final AtomicBoolean REFUSAL_LOGGED = new AtomicBoolean();
    /** A loop where io_uring was refused (or is not for its engine): no ring, and not asked again. */
    private static final Object NONE = new Object();
    private static final FastThreadLocal<Object> RINGS = new FastThreadLocal<>();
    private static volatile boolean refuseForTesting;

    final IoRing ring;
    private final FileDescriptor eventFd;
    private final EventLoop loop;
    private final Runnable submitTask = this::submitNow;
    private boolean submitScheduled;
    private IoRegistration registration;
    /** Written on the loop; read by tests after it ended. */
    private volatile boolean closed;

    private LoopRing(IoRing ring, FileDescriptor eventFd, EventLoop loop) {
        this.ring = ring;
        this.eventFd = eventFd;
        this.loop = loop;
    }

    /** The ring of {@code loop}, made now if it has none; null where there can be none. On the loop only. */
    static LoopRing of(EventLoop loop) {
        if (!loop.inEventLoop()) {
            return null; // a transport that runs commands off its loop: the I/O threads serve it
        }
        Object r = RINGS.get();
        if (r instanceof LoopRing) {
            LoopRing lr = (LoopRing) r;
            return lr.closed ? null : lr;
        }
        if (r == NONE) {
            return null;
        }
        LoopRing made = make(loop);
        RINGS.set(made != null ? made : NONE);
        return made;
    }

    private static LoopRing make(EventLoop loop) {
        if (!(loop instanceof IoEventLoop) || !((IoEventLoop) loop).isCompatible(EpollIoHandle.class)
                || !(loop instanceof SingleThreadEventLoop)) {
            return null; // not native epoll: the I/O threads serve files
        }
        IoRing ring = null;
        FileDescriptor efd = null;
        try {
            if (refuseForTesting) {
                throw new IOException("io_uring_setup: Operation not permitted (errno 1, refused for a test)");
            }
            ring = IoRing.open(ENTRIES);
            efd = Native.newEventFd();
            ring.registerEventFd(efd.intValue());
            LoopRing lr = new LoopRing(ring, efd, loop);
            // Netty closes registered handles as the loop shuts down, but not when the shutdown
            // request lands late in the loop's last pass: then the ring closes once the loop is gone.
            loop.terminationFuture().addListener(x -> lr.close(false));
            Future<IoRegistration> f = ((IoEventLoop) loop).register(lr);
            if (!f.isDone()) {
                f.addListener(x -> lr.registered(f));
            } else {
                lr.registered(f);
            }
            return lr.closed ? null : lr;
        } catch (IOException | RuntimeException | LinkageError e) {
            if (ring != null) {
                ring.close();
            }
            closeQuietly(efd);
            if (REFUSAL_LOGGED.compareAndSet(false, true)) {
                LOG.log(System.Logger.Level.WARNING, "file I/O uses the I/O threads: no io_uring here ({0})",
                        e.getMessage());
            }
            return null;
        }
    }

    private void registered(Future<IoRegistration> f) {
        if (!f.isSuccess()) {
            close();
            return;
        }
        registration = f.getNow();
        registration.submit(EpollIoOps.EPOLLIN);
    }

    /** For tests: loops that have no ring yet will get none, as where io_uring is refused. */
    static void refuseForTesting(boolean refuse) {
        refuseForTesting = refuse;
    }

    /**
     * Something was queued: it goes to the kernel now, or, when queued by a completion, as the batch
     * of completions ends. Submitting each command as it comes measured faster than gathering a
     * loop pass's commands into one submission (90k against 80k 4 KiB reads a second at QD32 on a
     * virtio disk): the device starts on the first sooner, and each submission collects what
     * completed meanwhile.
     */
    void queued() {
        if (!inBatch) {
            submitNow();
        }
    }

    /** What could not be submitted goes on the next pass of the loop. */
    private void retryLater() {
        if (!submitScheduled) {
            submitScheduled = true;
            ((SingleThreadEventLoop) loop).executeAfterEventLoopIteration(submitTask);
        }
    }

    /** What runs once the current batch of completions is delivered (queues' held flushes). */
    private Runnable[] afterBatch = new Runnable[16];
    private int afterBatchCount;
    private boolean inBatch;

    /** Runs {@code task} once the batch of completions being delivered is over; at once if none is. */
    void afterBatch(Runnable task) {
        if (!inBatch) {
            task.run();
            return;
        }
        if (afterBatchCount == afterBatch.length) {
            afterBatch = Arrays.copyOf(afterBatch, afterBatchCount * 2);
        }
        afterBatch[afterBatchCount++] = task;
    }

    /** Submits what is queued (if {@code submit}) and delivers what completed, as one batch. */
    private int batch(boolean submit) {
        inBatch = true;
        int errno = 0;
        try {
            if (submit) {
                errno = ring.submit();
            } else {
                ring.reap();
            }
            while (errno == 0 && ring.unsubmitted() > 0) {
                errno = ring.submit(); // what the completions queued
            }
        } finally {
            inBatch = false;
            endBatch();
        }
        return errno;
    }

    /** The batch is over: what waited for it runs. */
    private void endBatch() {
        for (int i = 0; i < afterBatchCount; i++) {
            Runnable t = afterBatch[i];
            afterBatch[i] = null;
            t.run();
        }
        afterBatchCount = 0;
    }

    private void submitNow() {
        submitScheduled = false;
        if (closed) {
            return;
        }
        int errno = batch(true);
        if (ring.unsubmitted() > 0) {
            if (errno != IoRing.EAGAIN && errno != IoRing.EBUSY && errno != IoRing.EINTR) {
                LOG.log(System.Logger.Level.WARNING, "io_uring_enter: {0}; trying again", ring.describe(-errno));
            }
            retryLater(); // the rest on the next pass (completions reaped meanwhile make room)
        }
    }

    boolean closed() {
        return closed;
    }

    @Override
    public FileDescriptor fd() {
        return eventFd;
    }

    /** The eventfd fired: completions are posted. */
    @Override
    public void handle(IoRegistration reg, IoEvent event) {
        if (closed) {
            return;
        }
        Native.eventFdRead(eventFd.intValue());
        batch(false);
    }

    /** How long a closing ring waits for what is in flight: the kernel may still be moving data into those buffers. */
    static final long CLOSE_WAIT_NANOS = 5_000_000_000L;

    /**
     * The loop is ending (or the registration was cancelled): what is in flight completes first,
     * for a bounded time, so each command's buffers go back only once the kernel is done with
     * them; then the ring goes.
     */
    @Override
    public void close() {
        close(true);
    }

    /** Closes the ring; {@code onLoop}: on its loop, which may still take the cancelling of its registration. */
    private synchronized void close(boolean onLoop) {
        if (closed) {
            return;
        }
        long deadline = System.nanoTime() + CLOSE_WAIT_NANOS;
        // Off the loop (it ended without closing its handles) completions cannot run: what is in
        // flight keeps its buffers, never returned to the pool, and the kernel cancels it.
        while (onLoop && ring.inFlight() > 0 && System.nanoTime() - deadline < 0) {
            ring.submit();
            if (ring.inFlight() > 0) {
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        if (ring.inFlight() > 0) {
            LOG.log(System.Logger.Level.WARNING, "closing an io_uring with {0} operations still in flight", ring.inFlight());
        }
        closed = true;
        if (registration != null && onLoop) {
            registration.cancel();
        }
        ring.close();
        closeQuietly(eventFd);
    }

    private static void closeQuietly(FileDescriptor fd) {
        if (fd != null) {
            try {
                fd.close();
            } catch (IOException ignored) {
                // nothing more to do with it
            }
        }
    }
}
