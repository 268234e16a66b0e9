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
final class CompletionChannel extends FdWatcher {
    final VerbsDevice device;
    final long channel;
    /** Connections by slot; copy-on-write under {@code this}, read without locking. */
    private volatile VerbsConnection[] slots = new VerbsConnection[8];

    CompletionChannel(Native.Libs libs, VerbsDevice device, String threadName) throws IOException {
        super(libs, threadName);
        this.device = device;
        this.channel = libs.ib.ibv_create_comp_channel(device.context);
        if (channel == 0) {
            throw new IOException(libs.error("ibv_create_comp_channel(" + device.name + ")"));
        }
        start();
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
    int fd() {
        return MEM.getInt(channel + Abi.COMP_CHANNEL_FD);
    }

    @Override
    int scratchSize() {
        return 16;                                          // cq* at 0, cq_context at 8
    }

    @Override
    void readable(long scratch) {
        if (libs.ib.ibv_get_cq_event(channel, scratch, scratch + 8) != 0) {
            return;
        }
        long cq = MEM.getAddress(scratch);
        int slot = (int) MEM.getAddress(scratch + 8);
        libs.ib.ibv_ack_cq_events(cq, 1);                  // ibv_destroy_cq waits for this ack
        VerbsConnection[] s = slots;
        VerbsConnection c = slot >= 0 && slot < s.length ? s[slot] : null;
        if (c != null) {
            c.onCompletionEvent();
        }
    }

    /** Stops the thread and destroys the channel (every CQ on it must be gone). */
    void close() {
        if (stopAndJoin()) {
            libs.ib.ibv_destroy_comp_channel(channel);
        }
    }
}
