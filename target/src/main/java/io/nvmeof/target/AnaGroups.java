package io.nvmeof.target;

import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Asymmetric Namespace Access across the target: group states per port, namespaces' groups, the
 * log page's change count, and the ANA change notice to the controllers concerned.
 */
final class AnaGroups {
    private static final System.Logger LOG = System.getLogger(Target.class.getName());
    private final Supplier<Collection<Subsystem>> subsystems;
    private final BooleanSupplier closed;
    /** The ANA change count (the log page's): one more for every change of a state or a group. */
    private final AtomicLong changeCount = new AtomicLong();

    AnaGroups(Supplier<Collection<Subsystem>> subsystems, BooleanSupplier closed) {
        this.subsystems = subsystems;
        this.closed = closed;
    }

    long changeCount() {
        return changeCount.get();
    }

    /** See {@link Target#anaState}. */
    void state(Port port, int group, AnaState state) {
        boolean known = port.anaGroups().contains(group);
        AnaState was = port.anaState(group, state);
        if (known && was == state) {
            return;
        }
        LOG.log(System.Logger.Level.INFO, "{0}: ANA group {1} {2} (was {3})", port, group, state, was);
        changed(port);
        if (state == AnaState.CHANGE) {
            long at = changeCount.get();
            CompletableFuture.delayedExecutor(Target.ANA_TRANSITION_SECONDS * 1000L - 500, TimeUnit.MILLISECONDS)
                    .execute(() -> {
                        if (!closed.getAsBoolean() && port.anaState(group) == AnaState.CHANGE && changeCount.get() == at) {
                            LOG.log(System.Logger.Level.WARNING, "{0}: ANA group {1} stayed in change for {2} s (ANATT):"
                                    + " inaccessible now", port, group, Target.ANA_TRANSITION_SECONDS);
                            state(port, group, AnaState.INACCESSIBLE);
                        }
                    });
        }
    }

    /** See {@link Target#anaGroup}. */
    boolean group(Subsystem subsystem, int nsid, int group) {
        Namespace ns = subsystem.namespace(nsid);
        if (ns != null) {
            ns.anaGroup(group);
            changed(null);
        }
        return ns != null;
    }

    /** A state or a group changed: a new change count, and the notice to the controllers of {@code port} (all for null). */
    void changed(Port port) {
        changeCount.incrementAndGet();
        for (Subsystem s : subsystems.get()) {
            for (Controller c : s.controllers()) {
                if (port == null || c.port() == port) {
                    c.anaChanged();
                }
            }
        }
    }
}
