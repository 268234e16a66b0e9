package io.nvmeof.fabric.rdma;


/**
 * The send-queue work requests of one connection that have not completed yet: the caller's id,
 * the opcode to report (a failed completion's own opcode is undefined in verbs) and, for an RDMA
 * READ, its length. A WRITE+SEND chain takes one slot: its unsignaled WRITE produces a
 * completion only when it fails, and that status is what the chain's one completion reports.
 * Event-loop confined; allocates nothing after construction.
 */
final class SendSlots {
    private final long[] wrId;
    private final int[] opcode;
    private final int[] length;
    private final int[] writeStatus;
    private final boolean[] used;
    private final int[] free;
    private int freeTop;

    SendSlots(int capacity) {
        wrId = new long[capacity];
        opcode = new int[capacity];
        length = new int[capacity];
        writeStatus = new int[capacity];
        used = new boolean[capacity];
        free = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            free[i] = capacity - 1 - i;
        }
        freeTop = capacity;
    }

    int capacity() {
        return free.length;
    }

    int inUse() {
        return free.length - freeTop;
    }

    /** A free slot for a work request, or -1 if every slot is in use. */
    int take(long id, int op, int len) {
        if (freeTop == 0) {
            return -1;
        }
        int s = free[--freeTop];
        used[s] = true;
        wrId[s] = id;
        opcode[s] = op;
        length[s] = len;
        writeStatus[s] = WorkCompletion.SUCCESS;
        return s;
    }

    boolean inUse(int slot) {
        return slot >= 0 && slot < used.length && used[slot];
    }

    /** The chain's RDMA WRITE completed with {@code status} (it only does when it fails). */
    void writeCompleted(int slot, int status) {
        if (writeStatus[slot] == WorkCompletion.SUCCESS || writeStatus[slot] == WorkCompletion.WR_FLUSH_ERR) {
            writeStatus[slot] = status;
        }
    }

    long wrId(int slot) {
        return wrId[slot];
    }

    int opcode(int slot) {
        return opcode[slot];
    }

    int length(int slot) {
        return length[slot];
    }

    /**
     * The status to report for the slot's completion that came with {@code own}: a failed
     * WRITE of the chain wins over the SEND behind it (which is then only flushed).
     */
    int status(int slot, int own) {
        int w = writeStatus[slot];
        return w != WorkCompletion.SUCCESS && (own == WorkCompletion.SUCCESS || own == WorkCompletion.WR_FLUSH_ERR) ? w : own;
    }

    /** Whether the slot's chained RDMA WRITE failed (then the failure is the WRITE's, whatever the SEND says). */
    boolean writeFailed(int slot) {
        return writeStatus[slot] != WorkCompletion.SUCCESS;
    }

    /** Every slot is free again (the queue pair is gone and nothing more completes). */
    void clear() {
        freeTop = 0;
        for (int i = used.length - 1; i >= 0; i--) {
            used[i] = false;
            free[freeTop++] = i;
        }
    }

    void release(int slot) {
        if (used[slot]) {
            used[slot] = false;
            free[freeTop++] = slot;
        }
    }
}
