package io.nvmeof.fabric.rdma.disni;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCReqNotify;
import java.io.IOException;
import java.util.Arrays;

/**
 * A completion queue shared by connections of one device, its completion channel and the daemon
 * thread that waits on it. DiSNI's {@code getCqEvent} does not say which queue an event is for,
 * so one channel serves exactly one queue, and the queue is shared: the thread waits (bounded,
 * so that closing is noticed), acknowledges, re-arms, then polls with one prepared {@code
 * SVCPollCq} over preallocated {@code IbvWC}s and hands each completion to its connection's
 * ring by the connection tag in the {@code wr_id} (see {@link WrIds}), waking the connection's
 * event loop once per batch. Nothing on this path allocates.
 *
 * <p>Connections reserve room for every work request they can have outstanding ({@link
 * #reserved}), so the queue cannot overrun.
 */
final class CompletionQueue implements Runnable {
    private static final System.Logger LOG = System.getLogger(CompletionQueue.class.getName());
    private static final int POLL_MS = 200;
    private static final int BATCH = 32;
    private static final int ACK_EVERY = 64;

    final DisniDevice device;
    final int capacity;
    final IbvCompChannel channel;
    final IbvCQ cq;
    /** Entries promised to connections; CM thread only. */
    int reserved;

    private final Thread thread;
    private volatile boolean closed;
    /** Connections by slot: copy-on-write under {@code this}, read by the thread without locking. */
    private volatile DisniConnection[] slots = new DisniConnection[16];
    private int[] generations = new int[16];
    private int occupied;

    CompletionQueue(DisniDevice device, int capacity, String threadName) throws IOException {
        this.device = device;
        this.capacity = capacity;
        this.channel = device.context.createCompChannel();
        IbvCQ q;
        try {
            q = device.context.createCQ(channel, capacity, 0);
        } catch (IOException e) {
            destroyChannel(channel);
            throw new IOException("cannot create a completion queue of " + capacity + " entries on " + device.name
                    + ": " + e.getMessage().trim(), e);
        }
        this.cq = q;
        this.thread = new Thread(this, threadName);
        thread.setDaemon(true);
        thread.start();
    }

    synchronized boolean hasFreeSlot() {
        return occupied < WrIds.MAX_CQ_SLOTS;
    }

    /** Gives {@code c} a slot; returns its tag (slot and generation, see {@link WrIds#tag}). */
    synchronized int register(DisniConnection c) {
        DisniConnection[] s = slots;
        int slot = -1;
        for (int i = 0; i < s.length; i++) {
            if (s[i] == null) {
                slot = i;
                break;
            }
        }
        if (slot < 0) {
            if (s.length >= WrIds.MAX_CQ_SLOTS) {
                throw new IllegalStateException("completion queue full of connections");
            }
            slot = s.length;
            s = Arrays.copyOf(s, Math.min(WrIds.MAX_CQ_SLOTS, s.length * 2));
            generations = Arrays.copyOf(generations, s.length);
        } else {
            s = s.clone();
        }
        int gen = ++generations[slot] & 0xff;
        int tag = WrIds.tag(slot, gen);
        c.bind(this, tag);
        s[slot] = c;
        slots = s;
        occupied++;
        return tag;
    }

    /** Frees the slot of {@code c}; completions still queued for it are dropped by their generation. */
    synchronized void unregister(DisniConnection c) {
        DisniConnection[] s = slots;
        int slot = c.tag() >>> 8;
        if (slot < s.length && s[slot] == c) {
            DisniConnection[] n = s.clone();
            n[slot] = null;
            slots = n;
            occupied--;
        }
    }

    @Override
    public void run() {
        IbvWC[] wcs = new IbvWC[BATCH];
        for (int i = 0; i < BATCH; i++) {
            wcs[i] = new IbvWC();
        }
        DisniConnection[] touched = new DisniConnection[BATCH];
        SVCPollCq poll = null;
        SVCReqNotify notify = null;
        int unacked = 0;
        try {
            poll = cq.poll(wcs, BATCH);
            notify = cq.reqNotification(false);
            notify.execute();
            drain(poll, wcs, touched);
            while (!closed) {
                if (channel.getCqEvent(cq, POLL_MS)) {
                    if (++unacked >= ACK_EVERY) {
                        cq.ackEvents(unacked);
                        unacked = 0;
                    }
                    notify.execute();
                }
                drain(poll, wcs, touched);
            }
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                LOG.log(System.Logger.Level.ERROR, "completion queue of " + device.name + " failed; its connections stall", e);
            }
        } finally {
            try {
                if (unacked > 0) {
                    cq.ackEvents(unacked);
                }
            } catch (IOException e) {
                LOG.log(System.Logger.Level.DEBUG, "acknowledging completion events: {0}", e.getMessage());
            }
            if (poll != null) {
                poll.free();
            }
            if (notify != null) {
                notify.free();
            }
        }
    }

    private void drain(SVCPollCq poll, IbvWC[] wcs, DisniConnection[] touched) throws IOException {
        while (true) {
            int n = poll.execute().getPolls();
            int nt = 0;
            DisniConnection[] s = slots;
            for (int i = 0; i < n; i++) {
                IbvWC wc = wcs[i];
                long id = wc.getWr_id();
                int slot = WrIds.cqSlotOf(id);
                DisniConnection c = slot < s.length ? s[slot] : null;
                if (c == null || c.tag() != WrIds.tagOf(id)) {
                    continue; // a connection that is gone
                }
                int status = wc.getStatus();
                boolean ok = status == 0;
                c.completed(id, status, ok ? wc.getByte_len() : 0, ok ? wc.getWc_flags() : 0, ok ? wc.getImm_data() : 0);
                if (!c.inBatch) {
                    c.inBatch = true;
                    touched[nt++] = c;
                }
            }
            for (int i = 0; i < nt; i++) {
                touched[i].inBatch = false;
                touched[i].wake();
                touched[i] = null;
            }
            if (n < BATCH) {
                return;
            }
        }
    }

    /** Stops the thread and destroys the queue and its channel; every queue pair on it must be gone. */
    void close() {
        closed = true;
        if (Thread.currentThread() != thread) {
            try {
                thread.join(POLL_MS * 5L);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (thread.isAlive()) {
            LOG.log(System.Logger.Level.WARNING, "completion thread of {0} did not stop; its queue is left", device.name);
            return;
        }
        try {
            cq.destroyCQ();
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "destroying the completion queue: {0}", e.getMessage());
        }
        destroyChannel(channel);
    }

    private static void destroyChannel(IbvCompChannel ch) {
        try {
            ch.destroyCompChannel();
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "destroying the completion channel: {0}", e.getMessage());
        }
    }
}
