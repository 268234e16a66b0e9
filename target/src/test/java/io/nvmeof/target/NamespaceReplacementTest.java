package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.backend.RamBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A namespace put in place of another with its NSID (a gateway re-opening its images with a new
 * client, a reload giving an NSID new storage) is never inactive in between: a host that
 * identifies it meanwhile would see an empty namespace (0 blocks) and take the device as gone.
 */
class NamespaceReplacementTest {
    static final String NQN = "nqn.2026-12.io.nvmeof:replace";
    static final UUID ID = UUID.fromString("0b9a3f4e-5c1d-4e2f-8a7b-6c5d4e3f2a1b");

    @Test
    void theNsidStaysActiveWhileItsNamespaceIsReplaced() throws Exception {
        Subsystem s = new Subsystem(NQN, "R1", "replace", "1.0");
        s.addNamespace(new Namespace(NQN, 1, new RamBackend(1 << 20, 512), false, ID));
        AtomicBoolean done = new AtomicBoolean();
        AtomicLong looks = new AtomicLong();
        AtomicLong inactive = new AtomicLong();
        Thread watcher = new Thread(() -> {
            while (!done.get()) {
                if (s.namespace(1) == null) {
                    inactive.incrementAndGet();
                }
                looks.incrementAndGet();
            }
        });
        watcher.start();
        List<Namespace> replaced = new ArrayList<>();
        try {
            for (int i = 0; i < 500; i++) {
                Namespace old = s.namespace(1);
                Namespace next = new Namespace(NQN, 1, new RamBackend(1 << 20, 512), false, ID);
                s.replaceNamespace(next);
                assertSame(next, s.namespace(1));
                replaced.add(old);
            }
        } finally {
            done.set(true);
            watcher.join();
        }
        assertTrue(looks.get() > 0);
        assertEquals(0, inactive.get(), "NSID 1 was inactive " + inactive.get() + " times of " + looks.get());
        for (Namespace old : replaced) {
            assertTrue(old.closed(), "a replaced namespace closes once its commands are done");
        }
        assertFalse(s.namespace(1).closed());
    }
}
