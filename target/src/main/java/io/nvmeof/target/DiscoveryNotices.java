package io.nvmeof.target;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The discovery log's generation and its change notice: whenever the entries may have changed (a
 * subsystem, a port or a referral came, went or changed), a new generation, and the controllers
 * of the discovery subsystem are told.
 */
final class DiscoveryNotices {
    private static final System.Logger LOG = System.getLogger(Target.class.getName());
    private final Subsystem discovery;
    private final AtomicLong generation = new AtomicLong(1);

    DiscoveryNotices(Subsystem discovery) {
        this.discovery = discovery;
    }

    /** The discovery log's generation counter. */
    long generation() {
        return generation.get();
    }

    /** The entries may have changed: a new generation, and the notice to the discovery controllers. */
    void changed() {
        generation.incrementAndGet();
        for (Controller c : discovery.controllers()) {
            c.discoveryChanged();
        }
    }

    /** Sets the referrals {@code port}'s discovery log gives; the notice if they changed. */
    void referrals(Port port, List<Port.Referral> referrals) {
        if (port.referrals(referrals)) {
            LOG.log(System.Logger.Level.INFO, "{0}: referrals {1}", port, referrals);
            changed();
        }
    }
}
