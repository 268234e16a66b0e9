package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.FabricsCommandType;
import io.nvmeof.protocol.NvmOpcode;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The command sets a command's handler is chosen from, and the effects log generated from them. */
class CommandSetsTest {
    private static Set<Integer> opcodes(CommandSet set) {
        Set<Integer> out = new TreeSet<>();
        for (CommandSet.Handler h : set.handlers()) {
            out.add(h.opcode());
        }
        return out;
    }

    @Test
    void theDiscoveryControllerIsItsOwnSet() {
        Set<Integer> admin = opcodes(AdminCommands.SET);
        Set<Integer> discovery = opcodes(DiscoveryCommands.SET);
        assertEquals(Set.of(AdminOpcode.IDENTIFY.code, AdminOpcode.GET_LOG_PAGE.code, AdminOpcode.SET_FEATURES.code,
                AdminOpcode.GET_FEATURES.code, AdminOpcode.KEEP_ALIVE.code, AdminOpcode.ASYNC_EVENT_REQUEST.code,
                AdminOpcode.ABORT.code), admin);
        Set<Integer> noAbort = new TreeSet<>(admin);
        noAbort.remove(AdminOpcode.ABORT.code);
        noAbort.add(AdminOpcode.DISCOVERY_INFO_MGMT.code); // TP8010: a central discovery controller's registrations
        assertEquals(noAbort, discovery, "NVMe-oF 1.1, 5: the admin commands less Abort, and Discovery Information Management");
        assertNull(DiscoveryCommands.SET.handler(AdminOpcode.ABORT.code));
        assertNotNull(AdminCommands.SET.handler(AdminOpcode.ABORT.code));
        assertNull(AdminCommands.SET.handler(0x74), "an opcode nobody implements has no handler: Invalid Opcode");
        assertNull(IoCommands.SET.handler(0xff));
    }

    @Test
    void fabricsCommandsAreChosenByTypeAndQueue() {
        assertEquals("Connect", FabricsCommands.handler(FabricsCommandType.CONNECT.code, -1).name(), "before Connect");
        assertEquals("Connect", FabricsCommands.handler(FabricsCommandType.CONNECT.code, 3).name());
        assertEquals("Property Get", FabricsCommands.handler(FabricsCommandType.PROPERTY_GET.code, 0).name());
        assertEquals("Property Set", FabricsCommands.handler(FabricsCommandType.PROPERTY_SET.code, 0).name());
        assertNull(FabricsCommands.handler(FabricsCommandType.PROPERTY_GET.code, 1), "properties: admin queue only");
        assertNull(FabricsCommands.handler(FabricsCommandType.PROPERTY_SET.code, 1));
        for (int qid : new int[] {0, 1}) {
            assertEquals("Authentication Send", FabricsCommands.handler(FabricsCommandType.AUTHENTICATION_SEND.code, qid).name());
            assertEquals("Authentication Receive",
                    FabricsCommands.handler(FabricsCommandType.AUTHENTICATION_RECEIVE.code, qid).name());
        }
        assertNull(FabricsCommands.handler(FabricsCommandType.DISCONNECT.code, 0), "Disconnect is not implemented: Invalid Opcode");
    }

    @Test
    void nvmCommandsCheckTheirFieldsAndCallTheBackend() {
        for (CommandSet.Handler h : IoCommands.SET.handlers()) {
            assertNotNull(h.check(), h.name());
            // the reservation commands change the namespace's reservation, not its data
            assertEquals(!h.name().startsWith("Reservation"), h.callsBackend(), h.name());
        }
        for (CommandSet.Handler h : AdminCommands.SET.handlers()) {
            assertNull(h.check(), h.name());
            assertFalse(h.callsBackend(), h.name());
        }
    }

    @Test
    void theEffectsLogIsGeneratedFromTheHandlers() {
        ByteBuffer log = AdminCommands.commandsSupportedAndEffects();
        for (CommandSet.Handler h : AdminCommands.SET.handlers()) {
            assertEquals(1, log.getInt(h.opcode() * 4), h.name());
        }
        assertEquals(0, log.getInt(0x05 * 4), "Create I/O Completion Queue is not a fabrics command here");
        assertEquals(1 | CommandSet.LBCC, log.getInt(1024 + NvmOpcode.WRITE.code * 4));
        assertEquals(1 | CommandSet.LBCC, log.getInt(1024 + NvmOpcode.WRITE_ZEROES.code * 4));
        assertEquals(1 | CommandSet.LBCC, log.getInt(1024 + NvmOpcode.DATASET_MANAGEMENT.code * 4));
        assertEquals(1, log.getInt(1024 + NvmOpcode.READ.code * 4));
        assertEquals(1, log.getInt(1024 + NvmOpcode.COMPARE.code * 4));
        assertEquals(1, log.getInt(1024 + NvmOpcode.FLUSH.code * 4));
        assertEquals(0, log.getInt(1024 + 0x7e * 4));
    }

    @Test
    void anOpcodeHasOneHandler() {
        CommandSet.Handler h = new CommandSet.Handler(1, "x", (r, c) -> { });
        assertThrows(IllegalArgumentException.class, () -> new CommandSet("twice", h, h));
    }
}
