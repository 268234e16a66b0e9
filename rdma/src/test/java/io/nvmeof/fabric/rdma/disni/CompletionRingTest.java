package io.nvmeof.fabric.rdma.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class CompletionRingTest {
    @Test
    void capacityIsAPowerOfTwoAtLeastAsked() {
        assertEquals(2, new CompletionRing(1).capacity());
        assertEquals(16, new CompletionRing(16).capacity());
        assertEquals(64, new CompletionRing(33).capacity());
    }

    @Test
    void firstInFirstOutUntilFull() {
        CompletionRing r = new CompletionRing(4);
        for (int i = 0; i < 4; i++) {
            assertTrue(r.offer(100 + i, i, 10 * i, 8, -i));
        }
        assertFalse(r.offer(999, 0, 0, 0, 0), "full");
        assertEquals(4, r.size());
        for (int i = 0; i < 4; i++) {
            assertTrue(r.next());
            assertEquals(100 + i, r.currentWrId);
            assertEquals(i, r.currentStatus);
            assertEquals(10 * i, r.currentByteLen);
            assertEquals(8, r.currentFlags);
            assertEquals(-i, r.currentImm);
            assertTrue(r.offer(200 + i, 0, 0, 0, 0), "room again");
        }
        for (int i = 0; i < 4; i++) {
            assertTrue(r.next());
            assertEquals(200 + i, r.currentWrId);
        }
        assertFalse(r.next());
    }

    @Test
    void oneProducerOneConsumer() throws Exception {
        CompletionRing r = new CompletionRing(64);
        int n = 500_000;
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread consumer = new Thread(() -> {
            long expect = 0;
            while (expect < n) {
                if (r.next()) {
                    if (r.currentWrId != expect || r.currentByteLen != (int) expect * 3) {
                        failure.set(new AssertionError("got " + r.currentWrId + " expected " + expect));
                        return;
                    }
                    expect++;
                } else {
                    Thread.onSpinWait();
                }
            }
        });
        consumer.start();
        for (long i = 0; i < n; i++) {
            while (!r.offer(i, 0, (int) i * 3, 0, 0)) {
                Thread.onSpinWait();
            }
        }
        consumer.join(30_000);
        assertFalse(consumer.isAlive());
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertEquals(0, r.size());
    }
}
