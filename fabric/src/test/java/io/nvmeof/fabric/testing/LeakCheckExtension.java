package io.nvmeof.fabric.testing;

import static org.junit.jupiter.api.Assertions.fail;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class when Netty reported a leaked buffer during it. Registered for every
 * test through {@code META-INF/services} and JUnit's extension autodetection. Leaks surface
 * only after the garbage collector finds the lost buffer, so this collects and then
 * allocates to make the detector look.
 */
public final class LeakCheckExtension implements AfterAllCallback {
    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (ResourceLeakDetector.getLevel() == ResourceLeakDetector.Level.DISABLED) {
            return;
        }
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(20);
            for (int j = 0; j < 4; j++) {
                ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(16);
                b.release();
                ByteBuf h = PooledByteBufAllocator.DEFAULT.heapBuffer(16);
                h.release();
            }
        }
        List<String> leaks = FailingLeakDetector.drain();
        if (!leaks.isEmpty()) {
            fail("Netty reported " + leaks.size() + " leaked buffer(s) in " + context.getDisplayName() + ":\n"
                    + String.join("\n", leaks));
        }
    }
}
