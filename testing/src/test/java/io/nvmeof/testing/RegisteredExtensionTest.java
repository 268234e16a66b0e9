package io.nvmeof.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import java.io.IOException;
import java.net.URI;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Registered with a builder in a static field: one target for the class, by the builder. */
class RegisteredExtensionTest {
    @RegisterExtension
    static NvmeofTargetExtension nvme = new NvmeofTargetExtension(EmbeddedTarget.builder()
            .subsystemNqn("nqn.2026-11.io.nvmeof:registered").ramNamespace(1 << 20)
            .allowHost("nqn.2026-11.io.nvmeof:only-this-host"));

    @Test
    void onlyTheAllowedHostGetsIn(URI uri, EmbeddedTarget target) throws IOException {
        assertSame(nvme.target(), target);
        assertEquals("nqn.2026-11.io.nvmeof:registered", target.subsystemNqn());
        assertEquals(nvme.uri(), uri.toString());
        IOException refused = assertThrows(IOException.class, () -> Nvmeof.connect(uri.toString(), Connections.quick()));
        assertTrue(refused.getMessage().contains("Connect Invalid Host"), refused.toString());
        try (Controller c = Nvmeof.connect(uri.toString(), Connections.quick().identity(
                io.nvmeof.initiator.HostIdentity.of("nqn.2026-11.io.nvmeof:only-this-host", java.util.UUID.randomUUID())))) {
            assertEquals(1 << 20, c.namespace(1).size());
        }
    }
}
