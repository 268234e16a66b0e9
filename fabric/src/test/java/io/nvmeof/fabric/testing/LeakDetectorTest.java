package io.nvmeof.fabric.testing;

import static org.junit.jupiter.api.Assertions.assertFalse;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The leak check itself can fail: a buffer dropped without release is reported. */
class LeakDetectorTest {
    @Test
    void reportsADroppedBuffer() throws Exception {
        leak();
        List<String> leaks = List.of();
        for (int i = 0; i < 20 && leaks.isEmpty(); i++) {
            System.gc();
            Thread.sleep(20);
            PooledByteBufAllocator.DEFAULT.directBuffer(8).release();
            leaks = FailingLeakDetector.drain();
        }
        assertFalse(leaks.isEmpty(), "the deliberately leaked buffer was not reported");
    }

    private static void leak() {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        b.writeLong(1);
    }
}
