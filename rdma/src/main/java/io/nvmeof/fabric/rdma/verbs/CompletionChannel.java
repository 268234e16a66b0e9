package io.nvmeof.fabric.rdma.verbs;

import static io.nvmeof.fabric.rdma.verbs.Native.MEM;

import java.io.IOException;
import java.util.Arrays;

/**
 * One {@code ibv_comp_channel} of a device, shared by the connections of one event loop, and
 * the daemon thread that waits on it: {@code poll} (bounded, so that closing is noticed), then
 * {@code ibv_get_cq_event}, acknowledge at once, and hand the drain to the connection's event
 * loop. A CQ's {@code cq_context} is the connection's slot here, so finding it allocates nothing.
 */
final class CompletionChannel implements Runnable {
    private static final int POLL_MS = 250;

    private final Native.Libs libs;
    final VerbsDevice device;
    final long channel;
    private final Thread thread;
    private volatile boolean closed;
    /** Connections by slot; copy-on-write under {@code this}, read without locking. */
    private volatile VerbsConnection[] slots = new VerbsConnection[8];

    CompletionChannel(Native.Libs libs, VerbsDevice device, String threadName) throws IOException {
        this.libs = libs;
        this.device = device;
        this.channel = libs.ib.ibv_create_comp_channel(device.context);
        if (channel == 0) {
            throw new IOException(libs.error("ibv_create_comp_channel(" + device.name + ")"));
        }
        this.thread = new Thread(this, threadName);
        thread.setDaemon(true);
        thread.start();
    }

    /** Takes a free slot for {@code c}: the value to pass as the CQ's {@code cq_context}. */
    synchronized int register(VerbsConnection c) {
        VerbsConnection[] s = slots;
        for (int i = 0; i < s.length; i++) {
            if (s[i] == null) {
                VerbsConnection[] n = s.clone();
                n[i] = c;
                slots = n;
                return i;
            }
        }
        VerbsConnection[] n = Arrays.copyOf(s, s.length * 2);
        n[s.length] = c;
        slots = n;
        return s.length;
    }

    /** Frees {@code slot}; call after the CQ is destroyed (no event for it can come any more). */
    synchronized void unregister(int slot, VerbsConnection c) {
        VerbsConnection[] s = slots;
        if (slot < s.length && s[slot] == c) {
            VerbsConnection[] n = s.clone();
            n[slot] = null;
            slots = n;
        }
    }

    @Override
    public void run() {
        long fd = MEM.getInt(channel + Abi.COMP_CHANNEL_FD);
        long scratch = Native.calloc(32);                  // struct pollfd at 0, cq* at 8, cq_context at 16
        try {
            MEM.putInt(scratch, (int) fd);
            MEM.putShort(scratch + 4, (short) Abi.POLLIN);
            while (!closed) {
                MEM.putShort(scratch + 6, (short) 0);
                int n = libs.c.poll(scratch, 1, POLL_MS);
                if (n <= 0 || closed) {
                    continue;                               // timeout or EINTR
                }
                if (libs.ib.ibv_get_cq_event(channel, scratch + 8, scratch + 16) != 0) {
                    continue;
                }
                long cq = MEM.getAddress(scratch + 8);
                int slot = (int) MEM.getAddress(scratch + 16);
                libs.ib.ibv_ack_cq_events(cq, 1);          // ibv_destroy_cq waits for this ack
                VerbsConnection[] s = slots;
                VerbsConnection c = slot >= 0 && slot < s.length ? s[slot] : null;
                if (c != null) {
                    c.onCompletionEvent();
                }
            }
        } finally {
            Native.free(scratch);
        }
    }

    /** Tells the thread to stop (within {@value #POLL_MS} ms). */
    void stop() {
        closed = true;
    }

    /** Stops the thread and destroys the channel (every CQ on it must be gone). */
    void close() {
        closed = true;
        if (Thread.currentThread() != thread) {
            try {
                thread.join(4 * POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (!thread.isAlive()) {
            libs.ib.ibv_destroy_comp_channel(channel);
        }
    }
}
