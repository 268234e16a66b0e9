package io.nvmeof.initiator;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Which I/O queue of the live association a command goes to: the queue on the caller's own
 * event loop when the caller runs on one (a completion submitting the next command, say), so
 * the command needs no hand-off between threads; otherwise the next queue in turn. Holds the
 * live association's I/O queues, replaced whole on reconnect. Allocates nothing.
 */
final class IoRouter {
    private volatile HostQueue[] queues = new HostQueue[0];
    private final AtomicInteger next = new AtomicInteger();

    HostQueue[] queues() {
        return queues;
    }

    void queues(HostQueue[] qs) {
        this.queues = qs;
    }

    /** The queue for the caller's next command among {@code qs} (a snapshot of {@link #queues()}), or null if none. */
    HostQueue pick(HostQueue[] qs) {
        if (qs.length == 0) {
            return null;
        }
        for (HostQueue q : qs) {
            if (q.eventLoop().inEventLoop()) {
                return q;
            }
        }
        return qs[(next.getAndIncrement() & Integer.MAX_VALUE) % qs.length];
    }
}
