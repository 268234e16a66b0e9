package io.nvmeof.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
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

    @Test
    void anOddFormIsUsableAControlCharacterIsNot() {
        assertNull(Nqn.unusable("blktests-subsystem-1"), "nvmet takes any name");
        assertNotNull(Nqn.problem("blktests-subsystem-1"));
        assertNotNull(Nqn.unusable("nqn.2024-01.io.x:a\u001bb"));
        assertNotNull(Nqn.unusable("nqn.2024-01.io.x:a\u0000b"));
        assertNotNull(Nqn.unusable("nqn.2024-01.io.x:a\ufffdb"), "an undecodable byte");
        assertNotNull(Nqn.unusable("nqn.2024-01.io.x:" + "a".repeat(220)));
        assertThrows(IllegalArgumentException.class, () -> Nqn.requireUsable(""));
    }

    @Test
    void printableEscapesWhatATerminalWouldObey() {
        assertEquals("plain", Nqn.printable("plain"));
        assertEquals("a\\x1b[2Jb", Nqn.printable("a\u001b[2Jb"));
        assertEquals("tab\\x09nl\\x0a", Nqn.printable("tab\tnl\n"));
        assertEquals("back\\\\slash", Nqn.printable("back\\slash"));
    }
}
