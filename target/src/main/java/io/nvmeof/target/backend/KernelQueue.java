package io.nvmeof.target.backend;

import io.nvmeof.target.backend.LinuxIo.LibC;
import java.io.IOException;
import jnr.ffi.Runtime;

/**
 * A queue of file operations the kernel runs asynchronously, owned by one thread: it queues
 * reads, writes and fdatasyncs ({@link #read}, {@link #write}, {@link #fdatasync}), hands them to
 * the kernel with {@link #submit} and collects what completed with {@link #reap}, each completion
 * going to the {@link Completion} queued with it. Two kinds: {@link IoRing} (io_uring, any file)
 * and {@link AioRing} (Linux native AIO, whose completions the kernel posts from the device's
 * interrupt, without waking this thread first: for O_DIRECT files). This class keeps what both
 * share, the operations' slots: an operation's slot is its tag in the kernel's completion, and no
 * more are in flight than there are slots. Nothing here allocates per operation.
 */
public abstract class KernelQueue implements AutoCloseable {
    /** Where an operation's result goes: bytes moved, or a negated errno. */
    public interface Completion {
        void ringDone(int result);
    }

    public static final int EINTR = 4;
    public static final int EAGAIN = 11;
    public static final int EBUSY = 16;

    /** RWF_DSYNC: this write alone is durable when it completes, as with O_DSYNC (for FUA). */
    static final int RWF_DSYNC = 2;

    final LibC c;
    /** The most operations in flight at once. */
    final int capacity;
    /** Completions by slot; a free slot is null. */
    private final Completion[] waiting;
    private final int[] freeSlots;
    private int free;
    /** Queued and not yet taken by the kernel. */
    int unsubmitted;
    boolean closed;
    private boolean reaping;

    KernelQueue(LibC c, int capacity) {
        this.c = c;
        this.capacity = capacity;
        waiting = new Completion[capacity];
        freeSlots = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            freeSlots[i] = capacity - 1 - i;
        }
        free = capacity;
    }

    /** Operations that may still be queued now: none once the queue is full. */
    public int room() {
        return free;
    }

    /** Queued operations the kernel has not taken yet. */
    public int unsubmitted() {
        return unsubmitted;
    }

    /** Operations queued or in flight. */
    public int inFlight() {
        return capacity - free;
    }

    /**
     * Queues a read of {@code length} bytes at {@code offset} of {@code file} into the memory at
     * {@code address}. Returns false, queuing nothing, when the queue is full.
     */
    public abstract boolean read(int file, long offset, long address, int length, Completion done);

    /** Queues a write, as {@link #read}; with {@code dsync} it is durable as it completes (RWF_DSYNC). */
    public abstract boolean write(int file, long offset, long address, int length, boolean dsync, Completion done);

    /** Queues an fdatasync of {@code file}. */
    public abstract boolean fdatasync(int file, Completion done);

    /**
     * Hands what is queued to the kernel, then reaps what completed meanwhile. Returns 0, or the
     * errno that stopped the kernel from taking everything: EAGAIN and EBUSY (short of memory, or
     * completions to reap first) and EINTR mean "try again"; what was not taken stays queued for
     * the next submit.
     */
    public abstract int submit();

    /** Waits until at least one completion is there (tests, and draining at close); an errno or 0. */
    abstract int await();

    /** Hands every posted completion to its {@link Completion}; returns how many. */
    public int reap() {
        if (reaping) {
            return 0; // a completion submitted from within reap: the outer reap goes on
        }
        reaping = true;
        try {
            return reapAll();
        } finally {
            reaping = false;
        }
    }

    /** Delivers every posted completion through {@link #complete}. */
    abstract int reapAll();

    /** Takes a free slot for {@code done}; -1 when there is none (or the queue is closed). */
    final int takeSlot(Completion done) {
        if (free == 0 || closed) {
            return -1;
        }
        int slot = freeSlots[--free];
        waiting[slot] = done;
        return slot;
    }

    /** The kernel is done with {@code slot}: the slot is free again, then its completion runs (and may queue more). */
    final void complete(int slot, int result) {
        Completion done = waiting[slot];
        waiting[slot] = null;
        freeSlots[free++] = slot;
        done.ringDone(result);
    }

    /** Closes the queue; what is still in flight is not delivered. */
    @Override
    public abstract void close();

    /** A negated errno from a completion, in words. */
    public String describe(int result) {
        return c.strerror(-result) + " (errno " + -result + ")";
    }

    int lastErrno() {
        return Runtime.getRuntime(c).getLastError();
    }

    static IOException error(LibC c, String what) {
        int errno = Runtime.getRuntime(c).getLastError();
        return new IOException(what + ": " + c.strerror(errno) + " (errno " + errno + ")");
    }
}
