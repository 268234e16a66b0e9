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
import io.nvmeof.fabric.BusyPoll;
import io.nvmeof.target.backend.AioRing;
import io.nvmeof.target.backend.IoRing;
import io.nvmeof.target.backend.KernelQueue;
import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * An event loop's own kernel queues: file and block I/O submitted on the loop, completed on it,
 * with no thread in between. An io_uring ({@link IoRing}) for any file, and a Linux AIO context
 * ({@link AioRing}) for O_DIRECT files and block devices, whose completions reach a polling
 * loop sooner. Made on first use, on the loop's thread; both signal one eventfd, registered with
 * the loop like a socket, so completions that come later (a disk's, an fdatasync's) wake the
 * loop. A command goes to the kernel as it is queued; the responses of a batch of completions
 * leave in one flush per connection. The loop closes its queues as it ends.
 *
 * <p>Native epoll loops only. Where the kernel or a seccomp filter refuses one of the two, the
 * other serves (AIO only O_DIRECT); where it refuses both, this says so once in the log and
 * {@link #of} answers null: the I/O threads do the work.
 */
final class LoopRing implements EpollIoHandle {
    private static final System.Logger LOG = System.getLogger(LoopRing.class.getName());
    /** Submission entries per ring; as many operations may be in flight per loop. */
    static final int ENTRIES = 256;
    /** Why rings are not used: logged once per process. */
    private static final AtomicBoolean REFUSAL_LOGGED = new AtomicBoolean();
    private static final AtomicBoolean AIO_REFUSAL_LOGGED = new AtomicBoolean();
    /** A loop where io_uring was refused (or is not for its engine): no ring, and not asked again. */
    private static final Object NONE = new Object();
    private static final FastThreadLocal<Object> RINGS = new FastThreadLocal<>();
    private static volatile boolean refuseUringForTesting;
    private static volatile boolean refuseAioForTesting;

    /** The io_uring, null where refused; the AIO context, null where refused. */
    private final IoRing uring;
    private final AioRing aio;
    private final KernelQueue[] queues;
    private final FileDescriptor eventFd;
    private final EventLoop loop;
    private final Runnable submitTask = this::submitNow;
    /** The loop polls on while the disk has our operations ({@link BusyPoll#holdWhile}). */
    private final BooleanSupplier holding = () -> inFlight() > 0;
    private boolean submitScheduled;
    private IoRegistration registration;
    /** Written on the loop; read by tests after it ended. */
    private volatile boolean closed;

    private LoopRing(IoRing uring, AioRing aio, FileDescriptor eventFd, EventLoop loop) {
        this.uring = uring;
        this.aio = aio;
        this.queues = uring == null ? new KernelQueue[] {aio} : aio == null ? new KernelQueue[] {uring}
                : new KernelQueue[] {aio, uring};
        this.eventFd = eventFd;
        this.loop = loop;
    }

    /**
     * The queue for a file opened with O_DIRECT ({@code direct}) or not: AIO for direct I/O when
     * {@code aio} allows it and the kernel gave a context, else the io_uring; null if none can take it.
     */
    KernelQueue queue(boolean direct, boolean aioAllowed) {
        if (direct && aioAllowed && aio != null) {
            return aio;
        }
        return uring;
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
        AioRing aio = null;
        FileDescriptor efd = null;
        try {
            efd = Native.newEventFd();
            IOException uringRefused = null;
            try {
                if (refuseUringForTesting) {
                    throw new IOException("io_uring_setup: Operation not permitted (errno 1, refused for a test)");
                }
                ring = IoRing.open(ENTRIES);
                ring.registerEventFd(efd.intValue());
            } catch (IOException | RuntimeException | LinkageError e) {
                if (ring != null) {
                    ring.close();
                    ring = null;
                }
                uringRefused = e instanceof IOException ? (IOException) e : new IOException(e.toString(), e);
            }
            try {
                if (refuseAioForTesting) {
                    throw new IOException("io_setup: Operation not permitted (errno 1, refused for a test)");
                }
                aio = AioRing.open(ENTRIES, efd.intValue());
            } catch (IOException | RuntimeException | LinkageError e) {
                if (ring == null) {
                    throw uringRefused; // neither: the I/O threads serve files
                }
                if (AIO_REFUSAL_LOGGED.compareAndSet(false, true)) {
                    LOG.log(System.Logger.Level.INFO, "O_DIRECT files use io_uring: no Linux AIO here ({0})", e.getMessage());
                }
            }
            if (ring == null && REFUSAL_LOGGED.compareAndSet(false, true)) {
                LOG.log(System.Logger.Level.WARNING, "files without O_DIRECT use the I/O threads: no io_uring here ({0});"
                        + " O_DIRECT files use Linux AIO", uringRefused.getMessage());
            }
            LoopRing lr = new LoopRing(ring, aio, efd, loop);
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
            if (aio != null) {
                aio.close();
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
        BusyPoll.holdWhile(holding); // on the loop: registered from it
    }

    /**
     * Closes the current loop's queues, if it made any, delivering on it what is in flight (for at
     * most {@link #CLOSE_WAIT_NANOS}): a stopping target runs this on each of its loops before it
     * shuts them down, so no queue is left to close off its loop with buffers still in the kernel.
     */
    static void closeOnThisLoop() {
        Object r = RINGS.getIfExists();
        if (r instanceof LoopRing) {
            ((LoopRing) r).close(true);
        }
    }

    /** For tests: loops that have no queues yet will get no io_uring, or no AIO context, as where the kernel refuses them. */
    static void refuseForTesting(boolean uring, boolean aio) {
        refuseUringForTesting = uring;
        refuseAioForTesting = aio;
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
            for (KernelQueue q : queues) {
                if (submit) {
                    errno = q.submit();
                } else {
                    q.reap();
                }
            }
            for (boolean more = true; more && errno == 0; ) {
                more = false;
                for (KernelQueue q : queues) {
                    if (errno == 0 && q.unsubmitted() > 0) {
                        errno = q.submit(); // what the completions queued
                        more = true;
                    }
                }
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
        if (unsubmitted() > 0) {
            if (errno != KernelQueue.EAGAIN && errno != KernelQueue.EBUSY && errno != KernelQueue.EINTR) {
                LOG.log(System.Logger.Level.WARNING, "submitting file I/O: {0}; trying again", queues[0].describe(-errno));
            }
            retryLater(); // the rest on the next pass (completions reaped meanwhile make room)
        }
    }

    boolean closed() {
        return closed;
    }

    private int unsubmitted() {
        int n = 0;
        for (KernelQueue q : queues) {
            n += q.unsubmitted();
        }
        return n;
    }

    /** Operations queued or in flight, in all of this loop's queues. */
    int inFlight() {
        int n = 0;
        for (KernelQueue q : queues) {
            n += q.inFlight();
        }
        return n;
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
        while (onLoop && inFlight() > 0 && System.nanoTime() - deadline < 0) {
            for (KernelQueue q : queues) {
                q.submit();
            }
            if (inFlight() > 0) {
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        if (inFlight() > 0) {
            LOG.log(System.Logger.Level.WARNING, "closing file I/O queues with {0} operations still in flight", inFlight());
        }
        closed = true;
        if (onLoop) {
            BusyPoll.stopPollingFor(holding);
        }
        if (registration != null && onLoop) {
            registration.cancel();
        }
        for (KernelQueue q : queues) {
            q.close();
        }
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
