package io.nvmeof.fabric.testing;

import static org.junit.jupiter.api.Assertions.assertFalse;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** The leak check itself can fail: a buffer dropped without release is reported. */
class LeakDetectorTest {
    @Test
    void reportsADroppedBuffer() throws Exception {
        leak();
        // the detector reports when the collector has found the buffer and an allocation makes it look
        List<String> leaks = Awaitility.await("the deliberately leaked buffer reported").atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(20)).until(() -> {
                    System.gc();
                    PooledByteBufAllocator.DEFAULT.directBuffer(8).release();
                    return FailingLeakDetector.drain();
                }, l -> !l.isEmpty());
        assertFalse(leaks.isEmpty(), "the deliberately leaked buffer was not reported");
    }

    private static void leak() {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        b.writeLong(1);
    }
}
