package io.nvmeof.protocol;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.UUID;
import org.junit.jupiter.api.Test;

class NqnTest {
    @Test
    void acceptsSpecForms() {
        assertNull(Nqn.problem("nqn.2014-08.org.nvmexpress.discovery"));
        assertNull(Nqn.problem("nqn.2024-01.io.nvmeof:disk1"));
        assertNull(Nqn.problem(Nqn.fromUuid(UUID.randomUUID())));
    }

    @Test
    void rejectsMalformed() {
        assertNotNull(Nqn.problem(""));
        assertNotNull(Nqn.problem("iqn.2024-01.io.nvmeof:disk1"));
        assertNotNull(Nqn.problem("nqn.2024-13.io.nvmeof:disk1"));
        assertNotNull(Nqn.problem("nqn.2014-08.org.nvmexpress:uuid:not-a-uuid"));
        assertNotNull(Nqn.problem("nqn.2024-01.io.x:" + "a".repeat(220)));
        assertThrows(IllegalArgumentException.class, () -> Nqn.require("bogus"));
    }
}
