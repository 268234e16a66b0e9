package io.nvmeof.fabric.rdma;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Buffers in registered memory, in power-of-two size classes from 4 KiB to a maximum: slabs are
 * registered once, as they are first needed, and their buffers come back to the pool when
 * released, so the data path neither registers nor allocates. A slab none of whose buffers has
 * been out for a while is deregistered and freed by {@link #trim} (a burst's memory goes back
 * once the burst is over). Buffers start 4 KiB aligned (O_DIRECT can use them). Safe for use from
 * any thread.
 */
public final class RegisteredBufferPool implements AutoCloseable {
    private static final int MIN_SHIFT = 12;
    private static final int SLAB_BYTES = 4 << 20;

    private final ProtectionDomain pd;
    private final int access;
    private final int maxShift;
    private final SizeClass[] classes;
    private final List<Slab> slabs = new ArrayList<>();
    private long registeredBytes;
    private boolean closed;

    /**
     * @param maxBuffer the largest buffer handed out (rounded up to a power of two)
     * @param access    {@link MemoryRegion} access flags of every slab
     */
    public RegisteredBufferPool(ProtectionDomain pd, int maxBuffer, int access) {
        this.pd = pd;
        this.access = access;
        int shift = MIN_SHIFT;
        while ((1 << shift) < maxBuffer) {
            shift++;
        }
        this.maxShift = shift;
        this.classes = new SizeClass[shift - MIN_SHIFT + 1];
        for (int i = 0; i < classes.length; i++) {
            classes[i] = new SizeClass(1 << (MIN_SHIFT + i));
        }
    }

    public ProtectionDomain pd() {
        return pd;
    }

    /** The largest buffer this pool hands out. */
    public int maxBuffer() {
        return 1 << maxShift;
    }

    /**
     * A buffer of at least {@code size} bytes (reader and writer index 0, capacity the size
     * class); release it to give it back.
     */
    public Buf allocate(int size) throws IOException {
        if (size > 1 << maxShift) {
            throw new IllegalArgumentException("buffer of " + size + " bytes (at most " + (1 << maxShift) + ")");
        }
        int shift = MIN_SHIFT;
        while ((1 << shift) < size) {
            shift++;
        }
        SizeClass c = classes[shift - MIN_SHIFT];
        Buf b;
        while ((b = c.take()) == null) {
            grow(c); // (others may take the new buffers first: then grow again)
        }
        b.setIndex(0, 0);
        return b;
    }

    private void grow(SizeClass c) throws IOException {
        synchronized (this) {
            if (closed) {
                throw new IOException("buffer pool closed");
            }
            int bytes = Math.max(SLAB_BYTES, c.size * 4);
            ByteBuffer raw = ByteBuffer.allocateDirect(bytes + 4096);
            ByteBuffer aligned = raw.alignedSlice(4096);
            ByteBuffer slab = aligned.limit(bytes).slice().order(ByteOrder.LITTLE_ENDIAN);
            MemoryRegion mr = pd.register(slab, access);
            Slab s = new Slab(c, mr, System.nanoTime());
            slabs.add(s);
            registeredBytes += bytes;
            for (int off = 0; off + c.size <= bytes; off += c.size) {
                ByteBuffer piece = slab.duplicate().position(off).limit(off + c.size).slice();
                c.add(new Buf(c, s, off, piece));
            }
        }
    }

    /** Bytes of memory registered now. */
    public synchronized long registeredBytes() {
        return registeredBytes;
    }

    /**
     * Deregisters and frees every slab none of whose buffers has been out for {@code idleNanos}:
     * no work request can refer to its memory, and none will, since its buffers leave the free
     * lists with it; the garbage collector frees the memory. Returns the bytes given back.
     */
    public long trim(long idleNanos) {
        long now = System.nanoTime();
        List<Slab> idle = new ArrayList<>();
        synchronized (this) {
            for (Slab s : slabs) {
                if (s.sizeClass.retire(s, now, idleNanos)) {
                    idle.add(s);
                }
            }
            long freed = 0;
            for (Slab s : idle) {
                slabs.remove(s);
                pd.deregister(s.region);
                freed += s.region.length();
            }
            registeredBytes -= freed;
            return freed;
        }
    }

    /** Deregisters every slab; buffers still out must not be used for RDMA afterwards. */
    @Override
    public synchronized void close() {
        closed = true;
        for (Slab s : slabs) {
            pd.deregister(s.region);
        }
        slabs.clear();
        registeredBytes = 0;
    }

    /** One registered slab, cut into buffers of one size class; its counts are the class's to keep. */
    private static final class Slab {
        final SizeClass sizeClass;
        final MemoryRegion region;
        int out;
        long idleSince;

        Slab(SizeClass sizeClass, MemoryRegion region, long now) {
            this.sizeClass = sizeClass;
            this.region = region;
            this.idleSince = now;
        }
    }

    private static final class SizeClass {
        final int size;
        private Buf[] free = new Buf[16];
        private int count;

        SizeClass(int size) {
            this.size = size;
        }

        synchronized Buf take() {
            if (count == 0) {
                return null;
            }
            Buf b = free[--count];
            free[count] = null;
            b.slab.out++;
            return b;
        }

        synchronized void give(Buf b) {
            Slab s = b.slab;
            if (--s.out == 0) {
                s.idleSince = System.nanoTime();
            }
            add(b);
        }

        synchronized void add(Buf b) {
            if (count == free.length) {
                free = Arrays.copyOf(free, count * 2);
            }
            free[count++] = b;
        }

        /** Takes all of an idle slab's buffers off the free list; false if any is out or it is not idle long enough. */
        synchronized boolean retire(Slab s, long now, long idleNanos) {
            if (s.out != 0 || now - s.idleSince < idleNanos) {
                return false;
            }
            int kept = 0;
            for (int i = 0; i < count; i++) {
                if (free[i].slab != s) {
                    free[kept++] = free[i];
                }
            }
            Arrays.fill(free, kept, count, null);
            count = kept;
            return true;
        }
    }

    /** A buffer of the pool: a Netty buffer over registered memory that returns to the pool on its last release. */
    public static final class Buf extends UnpooledDirectByteBuf {
        private final SizeClass sizeClass;
        private final Slab slab;
        private final int regionOffset;

        Buf(SizeClass sizeClass, Slab slab, int regionOffset, ByteBuffer memory) {
            super(UnpooledByteBufAllocator.DEFAULT, memory, memory.capacity());
            this.sizeClass = sizeClass;
            this.slab = slab;
            this.regionOffset = regionOffset;
        }

        /** The registered region the buffer lies in. */
        public MemoryRegion region() {
            return slab.region;
        }

        /** Where byte {@code index} of this buffer lies in {@link #region()}. */
        public int regionOffset(int index) {
            return regionOffset + index;
        }

        /** The native address of byte {@code index}. */
        public long address(int index) {
            return slab.region.address() + regionOffset + index;
        }

        @Override
        public ByteBuf capacity(int newCapacity) {
            if (newCapacity != capacity()) {
                throw new UnsupportedOperationException("a registered buffer cannot change its capacity");
            }
            return this;
        }

        @Override
        protected void deallocate() {
            resetRefCnt();
            setIndex(0, 0);
            sizeClass.give(this);
        }
    }

    /** The buffer behind {@code b} if it is one of a pool's, else null. */
    public static Buf of(ByteBuf b) {
        return b instanceof Buf ? (Buf) b : null;
    }
}
