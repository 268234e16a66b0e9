package io.nvmeof.target.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledUnsafeDirectByteBuf;
import io.netty.util.internal.PlatformDependent;
import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;

/**
 * Read-only views of one memory segment of a backend, for sending a read straight from the
 * backend's memory: the kernel copies the bytes into the socket, and nothing is copied before
 * (the nvmet way: it sends a bio's pages). Each view covers the whole segment, its reader and
 * writer index select the bytes; a view released by whoever sent it comes back here with its
 * count reset, so a read takes a view and allocates nothing. A view holds the segment, so the
 * memory stays while a view of it is queued for sending, even if the namespace is gone.
 *
 * <p>Shared by every event loop reading the segment, hence the (uncontended, array-based)
 * blocking queue. Needs Unsafe (a view's address goes to writev as it is); without it there
 * are no views and reads copy as before.
 */
final class MemoryViews {
    /** Views kept for reuse; more in flight at once are made and dropped after. */
    private static final int KEEP = 4096;
    static final boolean AVAILABLE = PlatformDependent.hasUnsafe();

    private final ByteBuffer segment;
    private final ArrayBlockingQueue<View> free = new ArrayBlockingQueue<>(KEEP);

    MemoryViews(ByteBuffer segment) {
        this.segment = segment;
    }

    /** A view whose readable bytes are the segment's {@code [index, index + length)}. */
    ByteBuf view(int index, int length) {
        View v = free.poll();
        if (v == null) {
            v = new View();
        }
        v.setIndex(index, index + length);
        return v;
    }

    private final class View extends UnpooledUnsafeDirectByteBuf {
        View() {
            // not sliced, never freed: the memory is the backend's
            super(UnpooledByteBufAllocator.DEFAULT, false, segment, segment.capacity());
        }

        @Override
        public boolean isReadOnly() {
            return true;
        }

        @Override
        protected void deallocate() {
            // the last release: back to the pool, counted anew (the memory is not ours to free)
            resetRefCnt();
            free.offer(this);
        }
    }
}
