package io.nvmeof.target;

import io.nvmeof.protocol.AnaLog;
import io.nvmeof.protocol.Status;

/**
 * The Asymmetric Namespace Access state of an ANA group as seen through one port (Base 2.0,
 * 8.1), named as nvmet's {@code ports/N/ana_groups/G/ana_state} names them.
 */
public enum AnaState {
    OPTIMIZED("optimized", AnaLog.OPTIMIZED, null),
    NON_OPTIMIZED("non-optimized", AnaLog.NON_OPTIMIZED, null),
    INACCESSIBLE("inaccessible", AnaLog.INACCESSIBLE, Status.ANA_INACCESSIBLE),
    PERSISTENT_LOSS("persistent-loss", AnaLog.PERSISTENT_LOSS, Status.ANA_PERSISTENT_LOSS),
    CHANGE("change", AnaLog.CHANGE, Status.ANA_TRANSITION);

    private final String label;
    final int code;
    /** What an I/O command gets on a path in this state; null: it runs. */
    final Status ioStatus;

    AnaState(String label, int code, Status ioStatus) {
        this.label = label;
        this.code = code;
        this.ioStatus = ioStatus;
    }

    /** nvmet's name: {@code optimized}, {@code non-optimized}, {@code inaccessible}, {@code persistent-loss}, {@code change}. */
    public String label() {
        return label;
    }

    /** The state a name (nvmet's, or the constant's) stands for. */
    public static AnaState of(String name) {
        for (AnaState s : values()) {
            if (s.label.equals(name) || s.name().equalsIgnoreCase(name)) {
                return s;
            }
        }
        throw new IllegalArgumentException("ANA state must be optimized, non-optimized, inaccessible, persistent-loss"
                + " or change: " + name);
    }

    @Override
    public String toString() {
        return label;
    }
}
