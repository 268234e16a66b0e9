package io.nvmeof.target.backend;

import io.netty.util.internal.PlatformDependent;
import java.io.IOException;

/**
 * Asynchronous I/O on an RBD image through librbd's C API, with no librbd thread calling into
 * the JVM: each operation's completion carries the number of its slot and no callback; librbd
 * posts finished completions to the image and writes {@link #eventFd()} (an eventfd, as {@code
 * rbd_set_image_notification} takes it), and whoever watches that descriptor calls {@link
 * #poll}, which hands each result to the {@link Done} of its slot. Submitting is safe from any
 * thread; polling from one at a time. Nothing here allocates on the Java heap per operation
 * (librbd's completions are native; the slots and the arrays librbd writes into are made once).
 */
public final class RbdAio {
    /** Where an operation's result goes: bytes moved (0 for a flush), or a negated errno. */
    public interface Done {
        void rbdDone(long result);
    }

    /** Operations in flight at once per image; past it, the caller serves the command another way. */
    public static final int SLOTS = 1024;
    /** Completions taken per rbd_poll_io_events. */
    private static final int POLL = 64;

    private final Rbd.LibRbd lib;
    private final long image;
    private final int eventFd;
    private final Done[] waiting = new Done[SLOTS];
    private final int[] freeSlots = new int[SLOTS];
    private int free;
    /** rbd_aio_create_completion writes each slot's completion here (8 bytes a slot). */
    private final long created;
    /** rbd_poll_io_events writes polled completions here; their results and owners, one batch at a time. */
    private final long polled;
    private final long[] results = new long[POLL];
    private final Done[] delivered = new Done[POLL];
    private boolean closed;
    /** Whoever watches the eventfd: told when the image closes, and closes the descriptor (null: nobody yet). */
    private volatile Watcher watcher;

    /** Whoever watches {@link #eventFd()} and calls {@link #poll}. */
    public interface Watcher {
        /**
         * The image is closing (nothing in flight): stop watching and polling, then run {@code
         * then} (the image's native close, which closes the eventfd), never inline: a poll that
         * is delivering may be what closed it, and must end first.
         */
        void closing(Runnable then);
    }

    /**
     * Makes {@code w} the watcher if there is none yet; returns the watcher in place (the one
     * given, or the one before it).
     */
    public synchronized Watcher watch(Watcher w) {
        if (watcher == null && !closed) {
            watcher = w;
        }
        return watcher;
    }

    /** The watcher, or null. */
    public Watcher watcher() {
        return watcher;
    }

    RbdAio(Rbd.LibRbd lib, long image, int eventFd) throws IOException {
        this.lib = lib;
        this.image = image;
        this.eventFd = eventFd;
        for (int i = 0; i < SLOTS; i++) {
            freeSlots[i] = SLOTS - 1 - i;
        }
        free = SLOTS;
        created = PlatformDependent.allocateMemory(8L * SLOTS);
        polled = PlatformDependent.allocateMemory(8L * POLL);
        int rc = lib.rbd_set_image_notification(image, eventFd, Rbd.EVENT_TYPE_EVENTFD);
        if (rc < 0) {
            PlatformDependent.freeMemory(created);
            PlatformDependent.freeMemory(polled);
            throw Rbd.error("rbd_set_image_notification", rc);
        }
    }

    /** The eventfd librbd writes when completions wait for {@link #poll}. */
    public int eventFd() {
        return eventFd;
    }

    /** Operations submitted and not yet delivered. */
    public synchronized int inFlight() {
        return SLOTS - free;
    }

    /** Reads {@code length} bytes at {@code offset} into the memory at {@code address}; false (nothing queued) when full. */
    public boolean read(long offset, long address, int length, Done done) throws IOException {
        int slot = take(done);
        if (slot < 0) {
            return false;
        }
        long c = completion(slot);
        return submitted(slot, c, lib.rbd_aio_read2(image, offset, length, address, c, 0));
    }

    /** Writes, as {@link #read}; with {@code fua}, durable before it completes (RADOS writes are). */
    public boolean write(long offset, long address, int length, boolean fua, Done done) throws IOException {
        int slot = take(done);
        if (slot < 0) {
            return false;
        }
        long c = completion(slot);
        return submitted(slot, c, lib.rbd_aio_write2(image, offset, length, address, c,
                fua ? Rbd.OP_FLAG_FADVISE_FUA : 0));
    }

    /** Flushes what librbd's cache holds, as {@link #read}. */
    public boolean flush(Done done) throws IOException {
        int slot = take(done);
        if (slot < 0) {
            return false;
        }
        long c = completion(slot);
        return submitted(slot, c, lib.rbd_aio_flush(image, c));
    }

    /** Zeroes a range, as {@link #read}. */
    public boolean writeZeroes(long offset, long length, Done done) throws IOException {
        int slot = take(done);
        if (slot < 0) {
            return false;
        }
        long c = completion(slot);
        return submitted(slot, c, lib.rbd_aio_write_zeroes(image, offset, length, c, 0, 0));
    }

    /** Discards a range, as {@link #read}. */
    public boolean discard(long offset, long length, Done done) throws IOException {
        int slot = take(done);
        if (slot < 0) {
            return false;
        }
        long c = completion(slot);
        return submitted(slot, c, lib.rbd_aio_discard(image, offset, length, c));
    }

    private synchronized int take(Done done) {
        if (free == 0 || closed) {
            return -1;
        }
        int slot = freeSlots[--free];
        waiting[slot] = done;
        return slot;
    }

    private synchronized Done give(int slot) {
        Done d = waiting[slot];
        waiting[slot] = null;
        freeSlots[free++] = slot;
        return d;
    }

    /** A completion for {@code slot}: its argument is the slot's number. */
    private long completion(int slot) throws IOException {
        long out = created + 8L * slot;
        int rc = lib.rbd_aio_create_completion(slot, 0, out);
        if (rc < 0) {
            give(slot);
            throw Rbd.error("rbd_aio_create_completion", rc);
        }
        return PlatformDependent.getLong(out);
    }

    /** A submission's return: on a refusal the completion never comes, so it is released and the slot freed. */
    private boolean submitted(int slot, long completion, int rc) throws IOException {
        if (rc < 0) {
            lib.rbd_aio_release(completion);
            give(slot);
            throw Rbd.error("submitting to librbd", rc);
        }
        return true;
    }

    /**
     * Hands every posted completion to its {@link Done}; returns how many. The caller has read
     * the eventfd (or polls without it). One thread at a time.
     */
    public int poll() {
        int all = 0;
        for (;;) {
            int n = lib.rbd_poll_io_events(image, polled, POLL);
            if (n <= 0) {
                return all;
            }
            // every completion taken is released and its slot freed before any is delivered: a
            // delivery that throws, or that closes the image, leaves none behind
            for (int i = 0; i < n; i++) {
                long c = PlatformDependent.getLong(polled + 8L * i);
                int slot = (int) lib.rbd_aio_get_arg(c);
                results[i] = lib.rbd_aio_get_return_value(c);
                lib.rbd_aio_release(c);
                delivered[i] = give(slot);
            }
            for (int i = 0; i < n; i++) {
                Done d = delivered[i];
                delivered[i] = null;
                try {
                    d.rbdDone(results[i]);
                } catch (RuntimeException e) {
                    System.getLogger(RbdAio.class.getName()).log(System.Logger.Level.ERROR,
                            "delivering an RBD completion failed", e);
                }
            }
            all += n;
            if (closing) {
                return all; // the image is going: it is not polled again
            }
        }
    }

    /** Set on the watching thread once the image is closing: {@link #poll} stops. */
    private volatile boolean closing;

    /** The image is closing: {@link #poll} polls no more (on the watching thread, or where none watches). */
    public void stopPolling() {
        closing = true;
    }

    /** Called once the image is closed (librbd writes nothing more): frees what was made, and the eventfd. */
    void close() throws IOException {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            PlatformDependent.freeMemory(created);
            PlatformDependent.freeMemory(polled);
        }
        LinuxIo.libc().close(eventFd);
    }
}
