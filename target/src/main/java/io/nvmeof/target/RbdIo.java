package io.nvmeof.target;

import io.netty.channel.EventLoop;
import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.epoll.Native;
import io.netty.channel.unix.FileDescriptor;
import io.netty.util.concurrent.Future;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import io.nvmeof.target.backend.Rbd;
import io.nvmeof.target.backend.RbdAio;
import io.nvmeof.target.backend.RbdBackend;
import java.io.IOException;
import java.util.concurrent.RejectedExecutionException;

/**
 * Read, Write, Write Zeroes and Flush of RBD namespaces submitted from the command's event loop to
 * librbd's asynchronous calls ({@link RbdAio}), with no thread of ours in between.
 *
 * <p>An image has one handle and one eventfd (a handle per loop would make the loops' writes
 * pass the image's exclusive lock back and forth). The first loop that submits to an image
 * watches its eventfd, polls its completions and hands each to the loop that submitted it, as
 * the I/O threads hand theirs back ({@link EventLoop#execute} with the request itself: no
 * allocation); a completion for its own loop finishes at once. A write holds its namespace's
 * shared writers' lock, taken and given back on its own loop, so a fused Compare and Write (on
 * the I/O threads) and a resize stay exclusive. Everything else (deallocate, whose ranges are
 * many, Compare, fused commands, Copy) goes to the I/O threads, whose calls block in librbd.
 */
final class RbdIo {
    private RbdIo() {
    }

    /**
     * Submits {@code r} to librbd if its namespace is on RBD and it is a command served here;
     * false when not, or when its loop cannot watch an eventfd (not native epoll), the image has
     * no room, or its data has no address: the caller offloads it.
     */
    static boolean submit(Request r) {
        Namespace ns = r.namespace;
        if (ns == null || r.partner != null || !(ns.backend() instanceof RbdBackend b)) {
            return false;
        }
        int op = r.sqe.opcode();
        boolean zeroes = op == NvmOpcode.WRITE_ZEROES.code;
        boolean write = op == NvmOpcode.WRITE.code || zeroes;
        if (!write && op != NvmOpcode.READ.code && (op != NvmOpcode.FLUSH.code || ns.readOnly())) {
            return false;
        }
        long bytes = zeroes ? (long) r.sqe.blockCount() << ns.blockShift() : r.length;
        EventLoop loop = r.queue.transport().eventLoop();
        if (!loop.inEventLoop() || !(loop instanceof IoEventLoop iel) || !iel.isCompatible(EpollIoHandle.class)) {
            return false;
        }
        RbdAio aio = b.aio();
        if (aio == null || !watched(aio, iel)) {
            return false;
        }
        boolean noData = op == NvmOpcode.FLUSH.code || zeroes;
        long address = noData ? 0 : RingIo.address(r.data, r.dataOffset, r.length);
        if (address == 0 && !noData) {
            return false;
        }
        if (write) {
            if (!ns.tryWritersSharedLock(r.byteOffset, bytes)) {
                return false;
            }
            r.ringLocked = true;
        }
        boolean queued;
        try {
            queued = op == NvmOpcode.READ.code ? aio.read(r.byteOffset, address, r.length, r)
                    : zeroes ? aio.writeZeroes(r.byteOffset, bytes, r)
                    : write ? aio.write(r.byteOffset, address, r.length, r.sqe.fua(), r) : aio.flush(r);
        } catch (IOException e) {
            queued = false; // the I/O threads meet it again and report it
        }
        if (!queued) {
            unlock(r);
            return false;
        }
        r.offloaded = true;
        return true;
    }

    /** librbd finished {@code r}: {@code result} bytes, or a negated errno. On the watching loop. */
    static void done(Request r, long result) {
        r.rbdResult = result;
        EventLoop loop = r.queue.transport().eventLoop();
        if (loop.inEventLoop()) {
            finish(r);
        } else {
            loop.execute(r.rbdFinish); // made once per request: no allocation
        }
    }

    /** On {@code r}'s own loop: its status, its lock back, and the command completes. */
    static void finish(Request r) {
        unlock(r);
        long result = r.rbdResult;
        int op = r.sqe.opcode();
        if (result < 0) {
            IoCommands.failed(r, Rbd.error(r.namespace.backend().describe(), result));
        } else {
            if (op == NvmOpcode.READ.code && result < r.length) {
                // past the end of an image that shrank: reads as zeroes
                r.data.setZero(r.dataOffset + (int) result, r.length - (int) result);
            }
            r.status = Status.SUCCESS;
        }
        r.queue.ioFinished(r);
    }

    private static void unlock(Request r) {
        if (r.ringLocked) {
            r.ringLocked = false;
            r.namespace.writersSharedLock().unlock();
        }
    }

    /** Whether {@code aio}'s eventfd is watched, by {@code loop} if by none yet. */
    private static boolean watched(RbdAio aio, IoEventLoop loop) {
        RbdAio.Watcher w = aio.watcher();
        if (w == null) {
            w = aio.watch(new Watch(aio, loop));
            if (w instanceof Watch mine && mine.loop == loop && mine.registration == null && !mine.registering) {
                mine.register();
            }
        }
        // registered: completions of what is submitted now are polled (registering on the loop itself is at once)
        return w instanceof Watch watch && !watch.failed && watch.registration != null;
    }

    /** An image's eventfd, registered with one event loop, which polls its completions. */
    private static final class Watch implements EpollIoHandle, RbdAio.Watcher {
        private final RbdAio aio;
        private final IoEventLoop loop;
        private final FileDescriptor fd;
        private volatile IoRegistration registration;
        private boolean registering;
        private volatile boolean failed;
        /** Set on the loop once the image is closing: no more polls. */
        private boolean stopped;

        Watch(RbdAio aio, IoEventLoop loop) {
            this.aio = aio;
            this.loop = loop;
            this.fd = new FileDescriptor(aio.eventFd());
        }

        /** On {@link #loop}. */
        void register() {
            registering = true;
            Future<IoRegistration> f = loop.register(this);
            if (f.isDone()) {
                registered(f);
            } else {
                f.addListener(x -> registered(f));
            }
        }

        private void registered(Future<IoRegistration> f) {
            if (!f.isSuccess()) {
                failed = true; // commands then go to the I/O threads; what is in flight is polled at close
                return;
            }
            registration = f.getNow();
            registration.submit(EpollIoOps.EPOLLIN);
        }

        @Override
        public FileDescriptor fd() {
            return fd;
        }

        /** The eventfd fired: completions wait. */
        @Override
        public void handle(IoRegistration reg, IoEvent event) {
            if (stopped) {
                return;
            }
            Native.eventFdRead(fd.intValue());
            aio.poll();
        }

        /**
         * The image is closing: on the loop (after any poll in progress), stop polling and
         * watching, then hand over to {@code then}; a loop that is ending drops its registrations
         * itself, and {@code then} runs at once.
         */
        @Override
        public void closing(Runnable then) {
            Runnable end = () -> {
                stopped = true;
                aio.stopPolling();
                IoRegistration r = registration;
                if (r != null && r.isValid()) {
                    r.cancel();
                }
                then.run();
            };
            try {
                if (loop.isShuttingDown()) {
                    stopped = true;
                    then.run();
                } else {
                    loop.execute(end); // never inline: this may be called from within a poll's delivery
                }
            } catch (RejectedExecutionException e) {
                stopped = true;
                then.run(); // it ended meanwhile
            }
        }

        /** Netty closes registered handles as the loop ends; the image closes the eventfd. */
        @Override
        public void close() {
        }
    }
}
