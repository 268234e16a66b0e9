package io.nvmeof.fabric.rdma.disni;

/**
 * Work completions on their way from the completion queue's thread (the one producer) to the
 * connection's event loop (the one consumer), in preallocated arrays: handing a completion over
 * allocates nothing. A connection never has more completions in flight than work requests
 * posted, so a ring sized for the queue pair cannot overflow; {@link #offer} says so if it
 * would.
 */
final class CompletionRing {
    private final long[] wrId;
    private final int[] status;
    private final int[] byteLen;
    private final int[] flags;
    private final int[] imm;
    private final int mask;
    /** Written by the producer only. */
    private volatile long tail;
    /** Written by the consumer only. */
    private volatile long head;

    // the entry last taken by next(): consumer only
    long currentWrId;
    int currentStatus;
    int currentByteLen;
    int currentFlags;
    int currentImm;

    CompletionRing(int minCapacity) {
        int cap = Integer.highestOneBit(Math.max(2, minCapacity) - 1) << 1;
        wrId = new long[cap];
        status = new int[cap];
        byteLen = new int[cap];
        flags = new int[cap];
        imm = new int[cap];
        mask = cap - 1;
    }

    int capacity() {
        return mask + 1;
    }

    /** Producer: appends a completion; false if the ring is full. */
    boolean offer(long id, int st, int len, int fl, int im) {
        long t = tail;
        if (t - head > mask) {
            return false;
        }
        int i = (int) t & mask;
        wrId[i] = id;
        status[i] = st;
        byteLen[i] = len;
        flags[i] = fl;
        imm[i] = im;
        tail = t + 1;
        return true;
    }

    /** Consumer: takes the oldest completion into the {@code current*} fields; false if none. */
    boolean next() {
        long h = head;
        if (h == tail) {
            return false;
        }
        int i = (int) h & mask;
        currentWrId = wrId[i];
        currentStatus = status[i];
        currentByteLen = byteLen[i];
        currentFlags = flags[i];
        currentImm = imm[i];
        head = h + 1;
        return true;
    }

    int size() {
        return (int) (tail - head);
    }
}
