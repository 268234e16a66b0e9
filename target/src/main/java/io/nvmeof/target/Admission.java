package io.nvmeof.target;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Who gets in: connections counted against {@link Settings#MAX_CONNECTIONS} from accept, discovery
 * controllers against {@link Settings#MAX_DISCOVERY_CONNECTIONS}, and per peer address the
 * connections not yet connected and authenticated ({@link Settings#MAX_PENDING_PER_ADDRESS}).
 */
final class Admission {
    private static final System.Logger LOG = System.getLogger(Target.class.getName());
    private static final RateLimitedLog PENDING_DISPLACED = new RateLimitedLog(LOG);
    private final Tuning tuning;
    private final TargetCounters counters;
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger discoveryConnections = new AtomicInteger();
    /** Per peer address, its connections not yet connected and authenticated, oldest first. */
    private final ConcurrentHashMap<InetAddress, LinkedHashSet<QueuePair>> pending = new ConcurrentHashMap<>();

    Admission(Tuning tuning, TargetCounters counters) {
        this.tuning = tuning;
        this.counters = counters;
    }

    /**
     * Counts a new connection in, or refuses it (null) when {@link Settings#MAX_CONNECTIONS} are
     * open; the slot it gets is given back by {@link ConnectionSlot#end()}.
     */
    ConnectionSlot admitConnection() {
        while (true) {
            int n = connections.get();
            if (n >= tuning.get(Settings.MAX_CONNECTIONS)) {
                counters.connectionsRefused.increment();
                return null;
            }
            if (connections.compareAndSet(n, n + 1)) {
                return new ConnectionSlot();
            }
        }
    }

    /**
     * One connection's place in the target's counts. From accept it counts against {@link
     * Settings#MAX_CONNECTIONS}, before anyone knows what it is for; once its Connect names the
     * discovery subsystem it counts against {@link Settings#MAX_DISCOVERY_CONNECTIONS} instead, so
     * discovery controllers (unauthenticated, kept for minutes by their keep-alive) never crowd
     * out an I/O host. Its transport ends it once, from any thread.
     */
    final class ConnectionSlot {
        private static final int COUNTED = 0;
        private static final int DISCOVERY = 1;
        private static final int ENDED = 2;
        private final AtomicInteger state = new AtomicInteger(COUNTED);

        private ConnectionSlot() {
        }

        /**
         * Moves the connection to the discovery controllers' count; false, and it stays where it
         * was, when {@link Settings#MAX_DISCOVERY_CONNECTIONS} are connected (or it has ended).
         */
        boolean toDiscovery() {
            int max = tuning.get(Settings.MAX_DISCOVERY_CONNECTIONS);
            while (true) {
                int n = discoveryConnections.get();
                if (n >= max) {
                    return false;
                }
                if (discoveryConnections.compareAndSet(n, n + 1)) {
                    break;
                }
            }
            if (!state.compareAndSet(COUNTED, DISCOVERY)) {
                discoveryConnections.decrementAndGet();
                return false;
            }
            connections.decrementAndGet();
            return true;
        }

        /** The connection is gone: out of whichever count it is in. Idempotent. */
        void end() {
            int was = state.getAndSet(ENDED);
            if (was == COUNTED) {
                connections.decrementAndGet();
            } else if (was == DISCOVERY) {
                discoveryConnections.decrementAndGet();
            }
        }
    }

    /**
     * Counts {@code q}, a new connection from {@code peer}, as pending (not yet connected and
     * authenticated) until {@link #pendingEnded}. Where that address has {@link
     * Settings#MAX_PENDING_PER_ADDRESS} pending already, the oldest of them is closed to make room
     * rather than the new one refused: hosts behind one NAT address, or containers on one node,
     * share it with whoever floods it, and a host that completes its Connect promptly always gets
     * in. Memory stays bounded: the displaced connection no longer counts and is closing.
     */
    void admitPending(InetAddress peer, QueuePair q) {
        int max = tuning.get(Settings.MAX_PENDING_PER_ADDRESS);
        List<QueuePair> displaced = new ArrayList<>(1);
        pending.compute(peer, (a, set) -> {
            LinkedHashSet<QueuePair> s = set != null ? set : new LinkedHashSet<>();
            for (Iterator<QueuePair> it = s.iterator(); s.size() >= max && it.hasNext(); ) {
                displaced.add(it.next());
                it.remove();
            }
            s.add(q);
            return s;
        });
        // closed outside the map's lock: a connection of this thread's own loop closes at once,
        // and its close comes back to pendingEnded
        for (QueuePair old : displaced) {
            counters.pendingDisplaced.increment();
            PENDING_DISPLACED.log(System.Logger.Level.WARNING, "closed the connection from {0} that had waited longest"
                    + " to connect: {1} connections from there are not yet connected and authenticated, the most one"
                    + " address may have", peer.getHostAddress(), max);
            old.displaced();
        }
    }

    void pendingEnded(InetAddress peer, QueuePair q) {
        pending.computeIfPresent(peer, (a, set) -> {
            set.remove(q);
            return set.isEmpty() ? null : set;
        });
    }

    /** Connections open now, discovery controllers' too. */
    int connectionCount() {
        return connections.get() + discoveryConnections.get();
    }

    /** Connections open now whose Connect named the discovery subsystem. */
    int discoveryConnectionCount() {
        return discoveryConnections.get();
    }

    /** Connections open now that count against {@link Settings#MAX_CONNECTIONS}: all but discovery controllers'. */
    int countedConnections() {
        return connections.get();
    }
}
