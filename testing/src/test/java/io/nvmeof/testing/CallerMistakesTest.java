package io.nvmeof.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import java.io.IOException;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/**
 * A caller's mistakes get messages in the caller's terms, not a bare NVMe status: a URI without
 * a subsystem NQN (the discovery controller) asked for a namespace, NSID 0, an NSID the subsystem
 * does not have, and a subsystem NQN the target does not serve (not "Attempted Write to Read Only
 * Range", the other meaning of the status code that Connect gets).
 */
class CallerMistakesTest {
    @Test
    void eachMistakeSaysWhatIsWrong() throws Exception {
        try (EmbeddedTarget t = EmbeddedTarget.builder().ramNamespace(1 << 20).start()) {
            InetSocketAddress a = t.address();
            String base = "nvme+tcp://" + a.getHostString() + ":" + a.getPort();
            try (Controller discovery = Nvmeof.connect(base)) {
                IllegalStateException e = assertThrows(IllegalStateException.class, () -> discovery.namespace(1));
                assertTrue(e.getMessage().contains("names no subsystem") && e.getMessage().contains("NQN"), e.getMessage());
            }
            try (Controller c = Nvmeof.connect(t.uri())) {
                IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> c.namespace(0));
                assertTrue(zero.getMessage().contains("NSIDs of namespaces start at 1"), zero.getMessage());
                IOException none = assertThrows(IOException.class, () -> c.namespace(7));
                // within the controller's range (NN) but inactive: the target identifies it as all zeroes
                assertEquals("namespace 7 of " + t.subsystemNqn() + " is not active", none.getMessage());
                IOException past = assertThrows(IOException.class, () -> c.namespace(0x7fffffff));
                // past NN: the controller refuses to identify it
                assertTrue(past.getMessage().startsWith("no namespace 2147483647 in " + t.subsystemNqn() + " (the controller"
                        + " refused to identify it: "), past.getMessage());
            }
            IOException wrong = assertThrows(IOException.class, () -> Nvmeof.connect(base + "/nqn.2026-12.io.example:nope"));
            String m = wrong.getMessage();
            assertTrue(m.contains("no such subsystem") && m.contains("Connect Invalid Parameters"), m);
            assertFalse(m.contains("Read Only"), m);
        }
    }
}
