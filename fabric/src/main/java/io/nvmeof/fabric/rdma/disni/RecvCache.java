package io.nvmeof.fabric.rdma.disni;

import io.netty.util.collection.LongObjectHashMap;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * The receive work requests of one connection, built once and posted again and again. DiSNI
 * lets a prepared receive ({@code SVCPostRecv}) be executed any number of times but changes
 * none of its fields (its {@code RecvWRMod} only reads the {@code wr_id}), so this keeps one
 * prepared receive per caller id and buffer: a caller that reposts the same buffer under the
 * same id (as a queue of receive buffers does) posts without allocating. An entry's {@link
 * Entry#index} is what its native {@code wr_id} carries. Entries that are not posted are
 * dropped when more than {@code limit} accumulate. Event-loop confined.
 *
 * @param <S> the prepared receive
 */
final class RecvCache<S> {
    static final class Entry<S> {
        final int index;
        long wrId;
        Object region;
        int offset;
        int length;
        /** The prepared receive, or null if it must be built (again). */
        S prepared;
        boolean posted;

        Entry(int index) {
            this.index = index;
        }
    }

    private final LongObjectHashMap<Entry<S>> byWrId = new LongObjectHashMap<>();
    private final int limit;
    private final Consumer<S> free;
    private Entry<S>[] byIndex;
    private int[] freeIndex;
    private int freeTop;
    private int nextIndex;
    private int posted;

    @SuppressWarnings("unchecked")
    RecvCache(int limit, Consumer<S> free) {
        this.limit = Math.max(1, limit);
        this.free = free;
        this.byIndex = (Entry<S>[]) new Entry<?>[Math.min(this.limit, 1024)];
        this.freeIndex = new int[byIndex.length];
    }

    int posted() {
        return posted;
    }

    int size() {
        return byWrId.size();
    }

    /**
     * The entry for posting {@code length} bytes at {@code offset} of {@code region} under
     * {@code wrId}, marked posted; its {@link Entry#prepared} is null when the caller must
     * build it. Throws if that id is posted already.
     */
    Entry<S> post(long wrId, Object region, int offset, int length) {
        Entry<S> e = byWrId.get(wrId);
        if (e != null) {
            if (e.posted) {
                throw new IllegalStateException("receive work request " + wrId + " is already posted");
            }
            if (e.region != region || e.offset != offset || e.length != length) {
                release(e.prepared);
                e.prepared = null;
                e.region = region;
                e.offset = offset;
                e.length = length;
            }
        } else {
            if (byWrId.size() >= limit) {
                evict();
            }
            e = new Entry<>(takeIndex());
            e.wrId = wrId;
            e.region = region;
            e.offset = offset;
            e.length = length;
            byWrId.put(wrId, e);
            byIndex[e.index] = e;
        }
        e.posted = true;
        posted++;
        return e;
    }

    /** Undoes {@link #post} when posting failed. */
    void unpost(Entry<S> e) {
        if (e.posted) {
            e.posted = false;
            posted--;
        }
    }

    /** The posted entry whose native {@code wr_id} carries {@code index}, now not posted; null if none. */
    Entry<S> complete(int index) {
        Entry<S> e = index >= 0 && index < byIndex.length ? byIndex[index] : null;
        if (e == null || !e.posted) {
            return null;
        }
        e.posted = false;
        posted--;
        return e;
    }

    /** Frees every prepared receive and forgets all entries. */
    void clear() {
        for (Entry<S> e : byIndex) {
            if (e != null) {
                release(e.prepared);
                e.prepared = null;
            }
        }
        Arrays.fill(byIndex, null);
        byWrId.clear();
        freeTop = 0;
        nextIndex = 0;
        posted = 0;
    }

    private void evict() {
        java.util.Iterator<Entry<S>> it = byWrId.values().iterator();
        while (it.hasNext()) {
            Entry<S> e = it.next();
            if (!e.posted) {
                it.remove();
                release(e.prepared);
                e.prepared = null;
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

    private void release(S prepared) {
        if (prepared != null) {
            free.accept(prepared);
        }
    }
}
