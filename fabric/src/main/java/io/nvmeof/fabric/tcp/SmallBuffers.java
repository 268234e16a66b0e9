package io.nvmeof.fabric.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledUnsafeDirectByteBuf;
import io.netty.util.internal.PlatformDependent;
import java.util.ArrayDeque;

/**
 * Direct buffers for PDUs without data (responses, R2Ts, capsules, C2HData headers) that come
 * back when Netty releases them after the write: one connection's own free list, no pooled
 * allocator (whose thread cache recycles through a multi-producer queue on every release) and
 * no leak tracking. Confined to the connection's event loop, where Netty also releases what it
 * wrote; a buffer released anywhere else, or more than {@link #KEEP} at once, is left to the
 * garbage collector (its memory has a cleaner), never reused.
 */
final class SmallBuffers {
    /** Capacity of each buffer: the largest PDU header (72 bytes of a capsule) with digest and padding. */
    static final int SIZE = 128;
    private static final int KEEP = 1024;
    static final boolean AVAILABLE = PlatformDependent.hasUnsafe();

    private final ArrayDeque<Small> free = new ArrayDeque<>();
    private Thread owner;

    /** An empty buffer of {@link #SIZE} bytes, recycled when its last reference is released. */
    ByteBuf take() {
        if (owner == null) {
            owner = Thread.currentThread();
        }
        Small b = owner == Thread.currentThread() ? free.pollLast() : null;
        if (b == null) {
            return new Small();
        }
        b.clear();
        return b;
    }

    private final class Small extends UnpooledUnsafeDirectByteBuf {
        Small() {
            super(UnpooledByteBufAllocator.DEFAULT, SIZE, SIZE);
        }

        @Override
        protected void deallocate() {
            if (Thread.currentThread() == owner && free.size() < KEEP) {
                resetRefCnt();
                free.addLast(this);
            } else {
                super.deallocate();
            }
        }
    }
}
