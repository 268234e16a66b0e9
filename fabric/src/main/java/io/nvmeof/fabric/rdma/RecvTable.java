package io.nvmeof.fabric.rdma;

import io.netty.util.collection.LongObjectHashMap;
import java.util.Arrays;
import java.util.Iterator;

/**
 * The receive work requests of one connection: the caller's id of each posted receive, under
 * an index that the native {@code wr_id} carries. The index is stable per caller id while the
 * entry lives, so a caller that reposts the same buffer under the same id (as a ring of
 * receive buffers does) gets the same index again, and a provider that prepares a native
 * receive once per index (DiSNI) reposts without allocating. Entries that are not posted are
 * dropped when more than {@code limit} accumulate. Event-loop confined.
 */
final class RecvTable {
    private static final class Entry {
        final int index;
        long wrId;
        boolean posted;

        Entry(int index) {
            this.index = index;
        }
    }

    private final LongObjectHashMap<Entry> byWrId = new LongObjectHashMap<>();
    private final int limit;
    private Entry[] byIndex;
    private int[] freeIndex;
    private int freeTop;
    private int nextIndex;
    private int posted;

    RecvTable(int limit) {
        this.limit = Math.max(1, limit);
        this.byIndex = new Entry[Math.min(this.limit, 1024)];
        this.freeIndex = new int[byIndex.length];
    }

    int posted() {
        return posted;
    }

    int size() {
        return byWrId.size();
    }

    /** Marks {@code wrId} posted and returns its index. Throws if that id is posted already. */
    int post(long wrId) {
        Entry e = byWrId.get(wrId);
        if (e == null) {
            if (byWrId.size() >= limit) {
                evict();
            }
            e = new Entry(takeIndex());
            e.wrId = wrId;
            byWrId.put(wrId, e);
            byIndex[e.index] = e;
        } else if (e.posted) {
            throw new IllegalStateException("receive work request " + wrId + " is already posted");
        }
        e.posted = true;
        posted++;
        return e.index;
    }

    /** Undoes {@link #post} when posting failed. */
    void unpost(int index) {
        Entry e = byIndex[index];
        if (e != null && e.posted) {
            e.posted = false;
            posted--;
        }
    }

    /** Whether {@code index} is a posted receive. */
    boolean isPosted(int index) {
        Entry e = index >= 0 && index < byIndex.length ? byIndex[index] : null;
        return e != null && e.posted;
    }

    /** The caller's id of the posted receive at {@code index}, now not posted (check {@link #isPosted} first). */
    long complete(int index) {
        Entry e = byIndex[index];
        e.posted = false;
        posted--;
        return e.wrId;
    }

    /** Every posted receive is gone without a completion (the queue pair was destroyed). */
    void clear() {
        Arrays.fill(byIndex, null);
        byWrId.clear();
        freeTop = 0;
        nextIndex = 0;
        posted = 0;
    }

    private void evict() {
        Iterator<Entry> it = byWrId.values().iterator();
        while (it.hasNext()) {
            Entry e = it.next();
            if (!e.posted) {
                it.remove();
                byIndex[e.index] = null;
                freeIndex[freeTop++] = e.index;
            }
        }
    }

    private int takeIndex() {
        if (freeTop > 0) {
            return freeIndex[--freeTop];
        }
        if (nextIndex == byIndex.length) {
            byIndex = Arrays.copyOf(byIndex, byIndex.length * 2);
            freeIndex = Arrays.copyOf(freeIndex, freeIndex.length * 2);
        }
        return nextIndex++;
    }
}
