package io.nvmeof.target;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Per-host QoS: one set of limits per host NQN, across all its controllers in this process. */
final class HostQosTable {
    private final ConcurrentHashMap<String, Qos> byHost = new ConcurrentHashMap<>();

    /** Host {@code nqn}'s limits (counters carry over). */
    void set(String nqn, Qos.Limits limits) {
        byHost.compute(nqn, (k, was) -> Qos.replacing(was, limits, System.nanoTime()));
    }

    /** Every host's QoS now, by host NQN. */
    Map<String, Qos> all() {
        return Map.copyOf(byHost);
    }

    /** Host {@code nqn}'s QoS, or null: one emptiness check while none is set. */
    Qos of(String nqn) {
        return byHost.isEmpty() ? null : byHost.get(nqn);
    }
}
