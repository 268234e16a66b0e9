package io.nvmeof.target;

import java.util.ArrayDeque;

/**
 * The target's one budget for command data buffers: bytes of data held by requests (a write's
 * data waiting for its R2T bursts, a read's data filled by the backend), over every port,
 * connection and host. A command that needs a buffer when the budget is spent does not fail:
 * it waits in the NEED_BUFFER state (SPDK's {@code pending_buf_queue}), first come first
 * served, and goes on on its own event loop when enough has come back. One command alone
 * always gets its buffer, however large, so nothing waits for ever.
 *
 * <p>In-capsule data (already on the wire) and admin pages (4 KiB) are not counted; data on its
 * way out to a host is bounded per connection by the socket's write watermark instead.
 */
public final class BufferBudget {
    private volatile long limit;
    private long used;
    private long waits;
    private final ArrayDeque<Request> waiting = new ArrayDeque<>();

    BufferBudget(long limit) {
        setLimit(limit);
    }

    /** Changes the limit (a reload); waiters that now fit go on. */
    void setLimit(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("the buffer budget must be positive: " + bytes);
        }
        synchronized (this) {
            limit = bytes;
            wakeFitting();
        }
    }

    public long limit() {
        return limit;
    }

    /** Bytes reserved now. */
    public synchronized long used() {
        return used;
    }

    /** Commands that have had to wait for a buffer since the start. */
    public synchronized long waits() {
        return waits;
    }

    /** Commands waiting now. */
    public synchronized int waiting() {
        return waiting.size();
    }

    /**
     * Reserves {@code bytes} for {@code r}, or queues it (false): then {@link Request#bufferReady}
     * runs on the request's event loop once the bytes are reserved for it.
     */
    synchronized boolean reserve(Request r, int bytes) {
        if (waiting.isEmpty() && fits(bytes)) {
            used += bytes;
            r.reserved += bytes;
            return true;
        }
        r.wanted = bytes;
        waiting.addLast(r);
        waits++;
        return false;
    }

    /** Gives back what {@code r} holds; waiters that now fit go on. */
    void release(Request r) {
        if (r.reserved == 0) {
            return;
        }
        synchronized (this) {
            used -= r.reserved;
            r.reserved = 0;
            wakeFitting();
        }
    }

    /** {@code r} no longer waits (its connection ended). */
    synchronized void cancel(Request r) {
        waiting.remove(r);
    }

    private boolean fits(long bytes) {
        return used == 0 || used + bytes <= limit;
    }

    private void wakeFitting() {
        while (!waiting.isEmpty() && fits(waiting.peekFirst().wanted)) {
            Request w = waiting.pollFirst();
            used += w.wanted;
            w.reserved += w.wanted;
            w.queue.transport().eventLoop().execute(w.bufferReady);
        }
    }
}
