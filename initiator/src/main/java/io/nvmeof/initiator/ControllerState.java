package io.nvmeof.initiator;

import java.util.EnumSet;
import java.util.Set;

/**
 * Where a host controller is, as Linux's {@code enum nvme_ctrl_state} has it, and the moves
 * {@code nvme_change_ctrl_state} allows: NEW until the first association is up; LIVE;
 * RESETTING (the association is being torn down after a loss); CONNECTING (a new association
 * is being built, every reconnect delay until the controller loss timeout); DELETING (closed,
 * or given up); DEAD.
 */
enum ControllerState {
    NEW, LIVE, RESETTING, CONNECTING, DELETING, DEAD;

    /** The states each state may be entered from. */
    private Set<ControllerState> from() {
        switch (this) {
            case LIVE:
                return EnumSet.of(NEW, RESETTING, CONNECTING);
            case RESETTING:
                return EnumSet.of(NEW, LIVE);
            case CONNECTING:
                return EnumSet.of(NEW, RESETTING);
            case DELETING:
                return EnumSet.of(NEW, LIVE, RESETTING, CONNECTING);
            case DEAD:
                return EnumSet.of(DELETING);
            default:
                return EnumSet.noneOf(ControllerState.class);
        }
    }

    /** Whether a controller in this state may move to {@code next}. */
    boolean canMoveTo(ControllerState next) {
        return next.from().contains(this);
    }

    /** Commands wait (parked) while the association is rebuilt. */
    boolean recovering() {
        return this == RESETTING || this == CONNECTING;
    }
}
