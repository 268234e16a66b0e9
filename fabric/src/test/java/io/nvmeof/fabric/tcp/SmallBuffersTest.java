package io.nvmeof.fabric.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.buffer.ByteBuf;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class SmallBuffersTest {
    @Test
    void aReleasedBufferComesBackEmptyOnItsThread() {
        assumeTrue(SmallBuffers.AVAILABLE, "no Unsafe: the pooled allocator serves");
        SmallBuffers pool = new SmallBuffers();
        ByteBuf a = pool.take();
        assertEquals(SmallBuffers.SIZE, a.capacity());
        a.writeLong(42);
        ByteBuf b = pool.take();
        assertNotSame(a, b, "a buffer in use is not handed out twice");
        assertTrue(a.release());
        ByteBuf again = pool.take();
        assertSame(a, again, "released on its thread: reused, nothing allocated");
        assertEquals(0, again.readableBytes());
        assertEquals(1, again.refCnt());
        again.release();
        b.release();
    }

    @Test
    void aBufferReleasedOnAnotherThreadIsNeverReused() throws Exception {
        assumeTrue(SmallBuffers.AVAILABLE, "no Unsafe: the pooled allocator serves");
        SmallBuffers pool = new SmallBuffers();
        ByteBuf a = pool.take();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                a.release();
            } catch (Throwable e) {
                failed.set(e);
            }
        });
        t.start();
        t.join();
        assertEquals(null, failed.get());
        assertNotSame(a, pool.take(), "the free list is its thread's alone");
    }

    @Test
    void pduHeadersWithoutDataTakeSmallBuffers() {
        assumeTrue(SmallBuffers.AVAILABLE, "no Unsafe: the pooled allocator serves");
        PduWriter w = new PduWriter(java.nio.ByteBuffer.allocate(256).order(java.nio.ByteOrder.LITTLE_ENDIAN));
        ByteBuf h = w.header(io.netty.buffer.PooledByteBufAllocator.DEFAULT, 24, true, 0);
        assertEquals(28, h.readableBytes(), "header and its digest");
        h.release();
        assertSame(h, w.header(io.netty.buffer.PooledByteBufAllocator.DEFAULT, 24, false, 0), "recycled");
        ByteBuf big = w.header(io.netty.buffer.PooledByteBufAllocator.DEFAULT, 24, false, 4096);
        assertTrue(big.capacity() >= 4120, "with data: a buffer of the allocator");
        big.release();
    }
}
