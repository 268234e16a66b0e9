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
 * released, so the data path neither registers nor allocates. Buffers start 4 KiB aligned
 * (O_DIRECT can use them). Safe for use from any thread.
 */
public final class RegisteredBufferPool implements AutoCloseable {
    private static final int MIN_SHIFT = 12;
    private static final int SLAB_BYTES = 4 << 20;

    private final ProtectionDomain pd;
    private final int access;
    private final int maxShift;
    private final SizeClass[] classes;
    private final List<MemoryRegion> slabs = new ArrayList<>();
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
            slabs.add(mr);
            for (int off = 0; off + c.size <= bytes; off += c.size) {
                ByteBuffer piece = slab.duplicate().position(off).limit(off + c.size).slice();
                c.give(new Buf(c, mr, off, piece));
            }
        }
    }

    /** Deregisters every slab; buffers still out must not be used for RDMA afterwards. */
    @Override
    public synchronized void close() {
        closed = true;
        for (MemoryRegion mr : slabs) {
            pd.deregister(mr);
        }
        slabs.clear();
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
            return b;
        }

        synchronized void give(Buf b) {
            if (count == free.length) {
                free = Arrays.copyOf(free, count * 2);
            }
            free[count++] = b;
        }
    }

    /** A buffer of the pool: a Netty buffer over registered memory that returns to the pool on its last release. */
    public static final class Buf extends UnpooledDirectByteBuf {
        private final SizeClass sizeClass;
        private final MemoryRegion region;
        private final int regionOffset;

        Buf(SizeClass sizeClass, MemoryRegion region, int regionOffset, ByteBuffer memory) {
            super(UnpooledByteBufAllocator.DEFAULT, memory, memory.capacity());
            this.sizeClass = sizeClass;
            this.region = region;
            this.regionOffset = regionOffset;
        }

        /** The registered region the buffer lies in. */
        public MemoryRegion region() {
            return region;
        }

        /** Where byte {@code index} of this buffer lies in {@link #region()}. */
        public int regionOffset(int index) {
            return regionOffset + index;
        }

        /** The native address of byte {@code index}. */
        public long address(int index) {
            return region.address() + regionOffset + index;
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
