package io.nvmeof.target;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/** What each host must prove (DH-HMAC-CHAP keys, TLS PSK), by host NQN, and revocation when that changes. */
final class HostKeys {
    private final Supplier<Collection<Subsystem>> subsystems;
    private volatile Map<String, HostSecurity> hosts = Map.of();

    HostKeys(Supplier<Collection<Subsystem>> subsystems) {
        this.subsystems = subsystems;
    }

    /**
     * Replaces the set. A host whose keys change (are added, replaced or removed) loses its
     * controllers at once, as a host taken out of {@code allowed_hosts} does: it reconnects and
     * proves the new keys.
     */
    void set(Collection<HostSecurity> next) {
        Map<String, HostSecurity> m = new HashMap<>();
        for (HostSecurity h : next) {
            if (m.put(h.nqn(), h) != null) {
                throw new IllegalArgumentException("host " + h.nqn() + " is defined twice");
            }
        }
        Map<String, HostSecurity> old;
        synchronized (this) {
            old = hosts;
            hosts = Map.copyOf(m);
        }
        Set<String> nqns = new HashSet<>(old.keySet());
        nqns.addAll(m.keySet());
        for (String nqn : nqns) {
            if (!HostSecurity.sameKeys(old.get(nqn), m.get(nqn))) {
                for (Subsystem s : subsystems.get()) {
                    s.revokeHost(nqn, "the keys of host " + nqn + " changed");
                }
            }
        }
    }

    /** What host {@code hostNqn} must prove, or null if nothing is configured for it. */
    HostSecurity of(String hostNqn) {
        return hosts.get(hostNqn);
    }
}
