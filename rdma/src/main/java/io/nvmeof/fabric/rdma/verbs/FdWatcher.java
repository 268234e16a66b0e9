package io.nvmeof.fabric.rdma.verbs;

import static io.nvmeof.fabric.rdma.verbs.Native.MEM;

/**
 * A daemon thread that waits on one file descriptor of rdma-core (a completion channel, a
 * device's async-event fd): {@code poll} bounded by {@value #POLL_MS} ms so that closing is
 * noticed, then {@link #readable} handles one event. Subclasses call {@link #start()} once
 * they are fully built.
 */
abstract class FdWatcher implements Runnable {
    static final int POLL_MS = 250;

    final Native.Libs libs;
    private final Thread thread;
    private volatile boolean closed;

    FdWatcher(Native.Libs libs, String threadName) {
        this.libs = libs;
        this.thread = new Thread(this, threadName);
        thread.setDaemon(true);
    }

    /** The descriptor to wait on. */
    abstract int fd();

    /** Bytes of native scratch {@link #readable} gets (zeroed, freed when the thread ends). */
    abstract int scratchSize();

    /** The descriptor is readable: read and handle one event, using {@code scratch}. */
    abstract void readable(long scratch);

    final void start() {
        thread.start();
    }

    final boolean closed() {
        return closed;
    }

    @Override
    public final void run() {
        long block = Native.calloc(16 + scratchSize());     // struct pollfd at 0, the subclass's scratch at 16
        try {
            MEM.putInt(block, fd());
            MEM.putShort(block + 4, (short) Abi.POLLIN);
            while (!closed) {
                MEM.putShort(block + 6, (short) 0);
                if (libs.c.poll(block, 1, POLL_MS) <= 0 || closed) {
                    continue;                               // timeout or EINTR
                }
                readable(block + 16);
            }
        } finally {
            Native.free(block);
        }
    }

    /** Tells the thread to stop (within {@value #POLL_MS} ms). */
    final void stop() {
        closed = true;
    }

    /** Stops the thread and waits for it (bounded); whether it has ended. */
    final boolean stopAndJoin() {
        closed = true;
        if (Thread.currentThread() != thread) {
            try {
                thread.join(4 * POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return !thread.isAlive();
    }
}
