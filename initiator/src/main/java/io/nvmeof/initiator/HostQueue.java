package io.nvmeof.initiator;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.nvmeof.fabric.BusyPoll;
import io.nvmeof.protocol.Status;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;

/**
 * What every host queue does whatever the transport: command slots and CIDs, commands waiting
 * for a slot, fused pairs kept together, command timeouts (Abort first, then a reset of the
 * association), and handing the commands of a dead connection to the controller. A transport
 * subclass moves capsules and data. Confined to the queue's event loop, except {@link #submit}.
 *
 * <p>SQ flow control holds by construction: at most queue size - 1 commands are outstanding,
 * every outstanding command occupies at most one SQ entry (the controller frees it when it
 * fetches the command, SQHD), so the SQ can never be full when a command is sent.
 */
abstract class HostQueue implements Queue {
    /** CID bits 11:0 index the slot, so at most 4096 commands are outstanding per queue. */
    static final int MAX_DEPTH = 4096;
    static final int SLOT_MASK = 0xfff;

    protected final int qid;
    protected final int depth;
    protected final long commandTimeoutNanos;
    protected final int connectTimeoutMillis;
    private final Command[] slots;
    /** Free slots, first in first out, so a slot rests as long as possible before reuse. */
    private final int[] freeSlots;
    private int freeHead;
    private int freeCount;
    /** Per-slot generation in CID bits 15:12, as the Linux host does, to catch stale completions. */
    private final byte[] generation;
    private final ArrayDeque<Command> waiting = new ArrayDeque<>();
    /** Completes when the connection is ready for commands (Connect is the caller's next step). */
    protected final CompletableFuture<HostQueue> ready = new CompletableFuture<>();
    /** Completes when the connection has ended, for whatever reason. */
    protected final CompletableFuture<Void> ended = new CompletableFuture<>();
    protected volatile int inCapsuleLimit;
    protected volatile Throwable failure;
    /** Where commands of a dead connection go: the controller, to resubmit them. Null: they fail. */
    private volatile BiConsumer<Command, Throwable> orphans;
    /** Asks the controller to abort a command (qid, cid) that passed its timeout. */
    private volatile BiConsumer<Integer, Integer> aborter;
    private ScheduledFuture<?> timeoutCheck;
    /** Whether a command is in flight (read on the queue's loop, by its busy-poll strategy). */
    private final BooleanSupplier busy;
    /** How the queue was authenticated (DH-HMAC-CHAP), or null if the controller asked for none. */
    volatile Authenticated authenticated;

    protected HostQueue(int qid, int depth, int inCapsuleLimit, long commandTimeoutNanos, int connectTimeoutMillis) {
        if (depth < 1 || depth > MAX_DEPTH) {
            throw new IllegalArgumentException("queue depth must be 1.." + MAX_DEPTH + ": " + depth);
        }
        this.qid = qid;
        this.depth = depth;
        this.inCapsuleLimit = inCapsuleLimit;
        this.commandTimeoutNanos = commandTimeoutNanos;
        this.connectTimeoutMillis = connectTimeoutMillis;
        // depth is what may be outstanding: one less than the queue size, so the SQ is never full
        this.slots = new Command[depth];
        this.freeSlots = new int[depth];
        this.generation = new byte[depth];
        for (int i = 0; i < depth; i++) {
            freeSlots[i] = i;
        }
        this.freeCount = depth;
        this.busy = () -> freeCount < depth;
    }

    // ---- what a transport provides ----

    /** Sends the capsule of {@code c}, which holds CID {@code c.cid} (a slot is taken). */
    protected abstract void transmit(Command c);

    /** Ends the connection (a command timed out and could not be aborted). */
    protected abstract void resetConnection();

    @Override
    public abstract EventLoop eventLoop();

    // ---- wiring ----

    @Override
    public int qid() {
        return qid;
    }

    /** Hands commands of a dead connection to {@code handler} instead of failing them. */
    void onOrphans(BiConsumer<Command, Throwable> handler) {
        this.orphans = handler;
    }

    void onTimeout(BiConsumer<Integer, Integer> abort) {
        this.aborter = abort;
    }

    /** Sets the in-capsule data limit learned from Identify Controller (IOCCSZ). */
    public void inCapsuleLimit(int bytes) {
        this.inCapsuleLimit = bytes;
    }

    /** Completes when the connection has ended. */
    CompletableFuture<Void> closeFuture() {
        return ended;
    }

    /**
     * Ends the connection and says whether the controller was seen to end it: the {@link
     * System#nanoTime} at which its end came, or 0 if this side ended it first or the
     * controller did not answer within {@code boundMillis}. A controller that reports a
     * Command Quiesce Time has stopped the connection's commands by that moment plus CQT.
     * This transport cannot tell (0), as over NVMe/RDMA, where either side's disconnect
     * reaches both.
     */
    CompletableFuture<Long> closeConfirmed(long boundMillis) {
        return close().thenApply(v -> 0L);
    }

    /** Starts the periodic timeout check (on the queue's loop, once it is known). */
    protected void startTimeoutChecks(EventLoop loop) {
        long period = Math.max(TimeUnit.NANOSECONDS.toMillis(commandTimeoutNanos) / 10, 20);
        timeoutCheck = loop.scheduleAtFixedRate(this::checkTimeouts, period, period, TimeUnit.MILLISECONDS);
        // an adaptive loop polls for this queue only while it has commands in flight
        loop.execute(() -> BusyPoll.pollWhile(busy));
    }

    /** The connection is gone: stop checking, fail or hand over what is left. */
    protected void connectionEnded(Throwable cause) {
        if (timeoutCheck != null) {
            timeoutCheck.cancel(false);
            EventLoop loop = eventLoop();
            try {
                if (loop != null) {
                    loop.execute(() -> BusyPoll.stopPollingFor(busy));
                }
            } catch (RejectedExecutionException e) {
                // the loop is gone, and its strategy with it
            }
        }
        Throwable first = failure;
        fail(first != null ? first : cause);
        ended.complete(null);
    }

    // ---- submission ----

    @Override
    public void submit(Command c) {
        c.deadlineNanos = deadline(c);
        EventLoop loop = eventLoop();
        if (loop.inEventLoop()) {
            issue(c);
        } else {
            c.queue = this;
            try {
                loop.execute(c);
            } catch (RejectedExecutionException e) {
                c.completeExceptionally(new IOException("queue " + qid + " is closed"));
            }
        }
    }

    /**
     * The timeout runs from submission (time waiting for a free slot counts), and never past
     * the command's expiry, so the queue gives up before the caller does.
     */
    private long deadline(Command c) {
        long d = System.nanoTime() + (c.timeoutNanos > 0 ? c.timeoutNanos : commandTimeoutNanos);
        return c.expiresAtNanos != 0 && c.expiresAtNanos - d < 0 ? c.expiresAtNanos : d;
    }

    /**
     * Submits a fused pair: both in one task on the loop, so nothing comes between them on the
     * wire (commands waiting for a slot keep their order, so a waiting pair stays together too).
     */
    public void submitFused(Command first, Command second) {
        if (depth < 2) {
            throw new IllegalStateException("a fused pair needs a queue that holds two commands");
        }
        first.deadlineNanos = deadline(first);
        second.deadlineNanos = deadline(second);
        eventLoop().execute(() -> {
            issue(first);
            issue(second);
        });
    }

    void issueOnLoop(Command c) {
        issue(c);
    }

    private void issue(Command c) {
        Throwable f = failure;
        if (f != null) {
            orphan(c, new IOException("queue " + qid + " is closed: " + f.getMessage(), f));
            return;
        }
        c.received = 0;
        c.dataCorrupt = false;
        if (freeCount == 0 || !waiting.isEmpty() || c.fuse() == 1 && freeCount < 2) {
            waiting.addLast(c); // in order; a fused first waits until its second can follow it
            return;
        }
        send(c);
    }

    /** Takes a slot, gives the command its CID and transmits it. */
    private void send(Command c) {
        int slot = freeSlots[freeHead];
        freeHead = freeHead + 1 == depth ? 0 : freeHead + 1;
        freeCount--;
        int gen = (generation[slot] + 1) & 0xf;
        generation[slot] = (byte) gen;
        slots[slot] = c;
        c.cid = gen << 12 | slot;
        transmit(c);
    }

    /**
     * The transport could not send {@code c} (its buffer could not be read, say): this command
     * alone fails and its slot is free again.
     */
    protected void unsent(Command c, Throwable cause) {
        int slot = c.cid & SLOT_MASK;
        slots[slot] = null;
        retireSlotOnly(slot);
        c.completeExceptionally(cause instanceof IOException ? cause : new IOException(c.name() + ": " + cause, cause));
    }

    /** Frees a slot without issuing waiting commands (the caller is in the middle of issuing). */
    private void retireSlotOnly(int slot) {
        int tail = freeHead + freeCount;
        freeSlots[tail >= depth ? tail - depth : tail] = slot;
        freeCount++;
    }

    // ---- completion ----

    /** The command in flight with {@code cid}, or null if there is none (a stale or bogus CID). */
    protected Command inFlight(int cid) {
        int slot = cid & SLOT_MASK;
        Command c = slot < depth ? slots[slot] : null;
        return c == null || c.cid != cid ? null : c;
    }

    /**
     * A response capsule for {@code c} (in flight with {@code cid}): frees its slot, then
     * completes it. The status and result must have been read already, since freeing the slot
     * may send the next command through the transport's scratch space.
     */
    protected void responded(Command c, Status status, long result) {
        retire(c.cid);
        if (c.timedOut && status.equals(Status.ABORT_REQUESTED)) {
            NvmeTimeoutException e = new NvmeTimeoutException(c.name() + " timed out after "
                    + TimeUnit.NANOSECONDS.toMillis(commandTimeoutNanos) + " ms and was aborted");
            if (c.multipath != null) {
                c.multipath.completed(c, null, e); // a path error: another path may serve it
            } else {
                c.completeExceptionally(e);
            }
            return;
        }
        if (status.isSuccess() && c.direction == Command.FROM_CONTROLLER && c.received != c.length) {
            c.completeExceptionally(new IOException(c.name() + " completed with " + c.received + " of "
                    + c.length + " bytes transferred"));
            return;
        }
        c.finish(status, result);
    }

    /** Frees {@code cid}'s slot and sends commands that were waiting for one. */
    protected void retire(int cid) {
        int slot = cid & SLOT_MASK;
        slots[slot] = null;
        retireSlotOnly(slot);
        while (!waiting.isEmpty() && freeCount > 0) {
            Command next = waiting.peekFirst();
            if (next.fuse() == 1 && freeCount < 2) {
                return;
            }
            waiting.pollFirst();
            if (failure != null) {
                orphan(next, failure);
            } else {
                send(next);
            }
        }
    }

    private void checkTimeouts() {
        long now = System.nanoTime();
        for (Command c : slots) {
            if (c == null || c.exemptFromTimeout || now - c.deadlineNanos <= 0) {
                continue;
            }
            if (!c.timedOut) {
                // First ask the controller to abort it; give that a tenth of the timeout.
                c.timedOut = true;
                c.deadlineNanos = now + Math.max(commandTimeoutNanos / 10, TimeUnit.MILLISECONDS.toNanos(200));
                BiConsumer<Integer, Integer> a = aborter;
                if (a != null && qid != 0) {
                    a.accept(qid, c.cid);
                    continue;
                }
            }
            // Not aborted: reset the association. Only the end of the connection guarantees
            // nothing touches the command's buffer any more (over RDMA the controller writes
            // it directly), so the commands in flight fail, or go back to the controller to be
            // resubmitted, once the transport reports the connection gone; new ones fail now.
            if (failure == null) {
                failure = new IOException("queue " + qid + " reset after a command timed out");
            }
            resetConnection();
            return;
        }
        while (!waiting.isEmpty() && now - waiting.peekFirst().deadlineNanos > 0) {
            Command w = waiting.pollFirst();
            w.completeExceptionally(new IOException(w.name() + " timed out after "
                    + TimeUnit.NANOSECONDS.toMillis(commandTimeoutNanos) + " ms waiting for a free slot on queue " + qid));
        }
    }

    /** Fails every command in flight or waiting; the queue accepts no more. */
    protected void fail(Throwable cause) {
        if (failure == null) {
            failure = cause;
        }
        ready.completeExceptionally(cause);
        for (int i = 0; i < depth; i++) {
            Command c = slots[i];
            if (c != null) {
                slots[i] = null;
                orphan(c, cause);
            }
        }
        Command w;
        while ((w = waiting.pollFirst()) != null) {
            orphan(w, cause);
        }
    }

    /** A command the connection could not finish: the controller retries it, or it fails. */
    private void orphan(Command c, Throwable cause) {
        BiConsumer<Command, Throwable> o = orphans;
        if (c.timedOut && c.multipath == null) {
            c.completeExceptionally(new NvmeTimeoutException(c.name() + " timed out after "
                    + TimeUnit.NANOSECONDS.toMillis(commandTimeoutNanos) + " ms on queue " + qid));
        } else if (o != null && qid != 0 && c.fuse() == 0) {
            // (a fused half alone means nothing to a target: it fails instead of coming back)
            o.accept(c, cause);
        } else {
            c.completeExceptionally(cause);
        }
    }
}
