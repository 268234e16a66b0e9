package io.nvmeof.initiator;

import static io.nvmeof.initiator.ControllerState.CONNECTING;
import static io.nvmeof.initiator.ControllerState.DEAD;
import static io.nvmeof.initiator.ControllerState.DELETING;
import static io.nvmeof.initiator.ControllerState.LIVE;
import static io.nvmeof.initiator.ControllerState.NEW;
import static io.nvmeof.initiator.ControllerState.RESETTING;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The host controller's transition table, as Linux's nvme_change_ctrl_state allows. */
class ControllerStateTest {
    private static Set<ControllerState> reachableFrom(ControllerState s) {
        Set<ControllerState> out = EnumSet.noneOf(ControllerState.class);
        for (ControllerState n : ControllerState.values()) {
            if (s.canMoveTo(n)) {
                out.add(n);
            }
        }
        return out;
    }

    @Test
    void theTable() {
        assertEquals(EnumSet.of(LIVE, RESETTING, CONNECTING, DELETING), reachableFrom(NEW));
        assertEquals(EnumSet.of(RESETTING, DELETING), reachableFrom(LIVE), "a live controller resets or is deleted");
        assertEquals(EnumSet.of(LIVE, CONNECTING, DELETING), reachableFrom(RESETTING));
        assertEquals(EnumSet.of(LIVE, DELETING), reachableFrom(CONNECTING), "a failed attempt stays CONNECTING");
        assertEquals(EnumSet.of(DEAD), reachableFrom(DELETING));
        assertEquals(EnumSet.noneOf(ControllerState.class), reachableFrom(DEAD), "DEAD is final");
    }

    @Test
    void commandsWaitOnlyWhileTheAssociationIsRebuilt() {
        for (ControllerState s : ControllerState.values()) {
            assertEquals(s == RESETTING || s == CONNECTING, s.recovering(), s.name());
        }
    }
}
