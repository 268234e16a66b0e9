package io.nvmeof.target;

import java.util.ArrayDeque;

/**
 * The Copy bytes one controller has running at once, at most {@link Settings#MAX_COPY_IN_FLIGHT}.
 * A Copy costs its host 32 bytes a range and the backend up to 64 MiB of reads and writes: without
 * a bound, one host's copies at queue depth fill every I/O thread and other hosts' commands queue
 * behind them. A Copy over the bound waits, first come first served, holding nothing but its place
 * (its descriptors are given back already), and goes on on its own event loop when earlier ones
 * finish; one Copy alone always runs, however large, so none waits for ever. Shared by the
 * controller's queues, whose loops differ: every field is guarded by the budget's lock.
 */
final class CopyBudget {
    private long used;
    private final ArrayDeque<Request> waiting = new ArrayDeque<>();

    /**
     * Reserves {@code r}'s bytes within {@code limit}, or queues it (false): then
     * {@link Request#copyReady} runs on its event loop once they are reserved for it.
     */
    synchronized boolean reserve(Request r, long limit) {
        if (waiting.isEmpty() && fits(r.copyBytes, limit)) {
            used += r.copyBytes;
            r.copyHeld = r.copyBytes;
            return true;
        }
        r.copyWaiting = true;
        waiting.addLast(r);
        return false;
    }

    /** {@code r} gives back what it holds, or stops waiting (its connection ended); waiters that now fit go on. */
    synchronized void release(Request r, long limit) {
        if (r.copyWaiting) {
            r.copyWaiting = false;
            waiting.remove(r);
            return;
        }
        used -= r.copyHeld;
        r.copyHeld = 0;
        while (!waiting.isEmpty() && fits(waiting.peekFirst().copyBytes, limit)) {
            Request w = waiting.pollFirst();
            w.copyWaiting = false;
            used += w.copyBytes;
            w.copyHeld = w.copyBytes;
            w.queue.transport().eventLoop().execute(w.copyReady);
        }
    }

    /** Bytes of Copy running now. */
    synchronized long used() {
        return used;
    }

    private boolean fits(long bytes, long limit) {
        return used == 0 || used + bytes <= limit;
    }
}
