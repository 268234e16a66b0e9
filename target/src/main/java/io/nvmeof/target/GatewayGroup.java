package io.nvmeof.target;

import io.nvmeof.target.backend.RadosLease;
import io.nvmeof.target.backend.Rbd;
import io.nvmeof.target.backend.RbdCluster;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * This gateway's part in a gateway group: gateways that serve the same subsystem over the same
 * RBD images and agree through Ceph who owns each ANA group, with no daemon of their own.
 *
 * <p>Each managed ANA group has a lease in RADOS ({@link RadosLease}: an object's exclusive lock
 * with a time, {@code gateway_lease_ms}). Its holder reports the group optimized on its ports; the
 * others report it non-optimized and try to take the lease every tick. Whoever takes a lease that
 * its last holder did not let go cleanly fences that holder first (a blocklist entry for its
 * client's address, then the newest OSD map), so nothing the old holder still has in flight lands
 * after the new holder's first write. An owner that cannot renew by its own deadline (the lease's
 * time from when its last renewal began, less a margin: never later than the OSD's expiry)
 * reports the group inaccessible at once. A gateway that finds itself fenced reports every group
 * inaccessible, re-opens its images with a new client ({@link Rejoin}) and comes back as
 * non-optimized. With failback, the preferred gateway asks for its group once it has been
 * healthy for the failback delay, and the owner lets it go cleanly.
 */
public final class GatewayGroup implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(GatewayGroup.class.getName());

    /**
     * A group's setup: its {@code name}, this gateway's member name {@code self}, every member's
     * address (for people: {@code get_gateway_group} shows it), the pool of the lease objects, each
     * managed ANA group's preferred member, failback and its delay, and the lease's time.
     */
    public record Config(String name, String self, Map<String, String> members, String pool,
                         SortedMap<Integer, String> preferred, boolean failback, long failbackDelayMillis,
                         long leaseMillis) {
        public Config {
            members = Map.copyOf(members);
            preferred = new TreeMap<>(preferred);
            if (!members.containsKey(self)) {
                throw new IllegalArgumentException("self " + self + " is not a member of gateway group " + name);
            }
        }
    }

    /** Re-opens what this gateway serves from the cluster with a new client, after the cluster fenced {@code fenced}; returns a reference to the new connection. */
    @FunctionalInterface
    public interface Rejoin {
        RbdCluster rejoin(RbdCluster fenced) throws IOException;
    }

    /** A group's role here. */
    public enum Role {
        /** Holds the lease: optimized. */
        OWNER,
        /** Another holds it: non-optimized. */
        STANDBY,
        /** Lost the lease, or fenced: inaccessible until the next lease call says more. */
        LOST
    }

    /** Something that happened, for {@code get_gateway_group}: when (epoch ms), which group (0: all), what. */
    public record Event(long at, int grpid, String what) {
    }

    /** A group's state here, for {@code get_gateway_group}. */
    public record GroupState(int grpid, String preferred, Role role, String holder, long renewedAt) {
    }

    private final Config config;
    private final Target target;
    private final Rejoin rejoin;
    /** Fenced and not rejoined yet (a rejoin failed and is retried each tick); the lease thread's alone. */
    private boolean rejoinPending;
    private final ScheduledExecutorService threads;
    private final Map<Integer, Group> groups = new ConcurrentSkipListMap<>();
    private final ArrayDeque<Event> events = new ArrayDeque<>();
    private final LongAdder leaseChanges = new LongAdder();
    private final LongAdder fencings = new LongAdder();
    private final LongAdder fenced = new LongAdder();
    /** The cluster connection the leases go through (replaced on rejoin); guarded by this. */
    private RbdCluster cluster;
    private volatile boolean closed;

    private final class Group {
        final int grpid;
        final RadosLease lease;
        volatile Role role = Role.STANDBY;
        /** When the last renewal that succeeded began (System.nanoTime), and so the local deadline. */
        volatile long renewedNanos;
        volatile long renewedAt;
        volatile String holder;
        /** Since when a standby preferred gateway has been healthy (System.nanoTime), 0: not. */
        long healthySince;
        boolean asked;

        Group(int grpid, RadosLease lease) {
            this.grpid = grpid;
            this.lease = lease;
        }
    }

    /**
     * Joins: every managed group starts non-optimized on this gateway's ports, and the lease
     * thread starts. {@code cluster} is a reference this group owns from now on (closed with it).
     */
    public GatewayGroup(Config config, Target target, RbdCluster cluster, Rejoin rejoin) throws IOException {
        this.config = config;
        this.target = target;
        this.rejoin = rejoin;
        this.cluster = cluster;
        for (int g : config.preferred().keySet()) {
            groups.put(g, new Group(g, lease(cluster, g)));
        }
        AtomicInteger n = new AtomicInteger();
        threads = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, n.incrementAndGet() == 1 ? "nvmeof-gateway-lease" : "nvmeof-gateway-watch");
            t.setDaemon(true);
            return t;
        });
        for (Group g : groups.values()) {
            report(g, Role.STANDBY);
        }
        long tick = tickMillis();
        threads.scheduleWithFixedDelay(this::tick, 0, tick, TimeUnit.MILLISECONDS);
        threads.scheduleWithFixedDelay(this::watchDeadlines, tick / 2, Math.max(20, tick / 5), TimeUnit.MILLISECONDS);
        event(0, "joined gateway group " + config.name() + " as " + config.self() + " through " + cluster.address());
    }

    private RadosLease lease(RbdCluster c, int grpid) throws IOException {
        return new RadosLease(c, config.pool(), "nvmeof_gw." + config.name() + ".ana." + grpid, config.self());
    }

    /** How often leases are tried: a tenth of the lease's time, 100 ms to 1 s. */
    private long tickMillis() {
        return Math.max(100, Math.min(1000, config.leaseMillis() / 10));
    }

    /** The local deadline's margin: a tenth of the lease's time, at least 500 ms. */
    private long marginNanos() {
        return TimeUnit.MILLISECONDS.toNanos(Math.max(500, config.leaseMillis() / 10));
    }

    public Config config() {
        return config;
    }

    /** Whether ANA group {@code grpid}'s state is this group's to set (then operators may not). */
    public boolean manages(int grpid) {
        return groups.containsKey(grpid);
    }

    /** Each managed group's state here. */
    public List<GroupState> states() {
        List<GroupState> l = new ArrayList<>();
        for (Group g : groups.values()) {
            l.add(new GroupState(g.grpid, config.preferred().get(g.grpid), g.role, g.holder, g.renewedAt));
        }
        return l;
    }

    /** What happened lately, oldest first (the last 64). */
    public synchronized List<Event> events() {
        return List.copyOf(events);
    }

    /** Leases this gateway took or gave up since the start. */
    public long leaseChanges() {
        return leaseChanges.sum();
    }

    /** Other gateways this one fenced since the start. */
    public long fencings() {
        return fencings.sum();
    }

    /** Times the cluster fenced this gateway since the start. */
    public long timesFenced() {
        return fenced.sum();
    }

    private synchronized void event(int grpid, String what) {
        if (events.size() == 64) {
            events.removeFirst();
        }
        events.addLast(new Event(System.currentTimeMillis(), grpid, what));
        LOG.log(System.Logger.Level.INFO, "gateway group {0}{1}: {2}", config.name(),
                grpid == 0 ? "" : " ANA group " + grpid, what);
    }

    /** Sets {@code g}'s role here, and its ANA state on every port of this gateway that has not. */
    private void report(Group g, Role role) {
        g.role = role;
        AnaState state = switch (role) {
            case OWNER -> AnaState.OPTIMIZED;
            case STANDBY -> AnaState.NON_OPTIMIZED;
            case LOST -> AnaState.INACCESSIBLE;
        };
        for (Port p : target.ports()) {
            if (p.discoveryOnly()) {
                continue;
            }
            if (!p.anaGroups().contains(g.grpid) || p.anaState(g.grpid) != state) {
                target.ana().state(p, g.grpid, state);
            }
        }
    }

    /** A port came: it reports each managed group as this gateway's role says. */
    public void portAdded() {
        for (Group g : groups.values()) {
            report(g, g.role);
        }
    }

    /** The lease thread: each group's lease taken, renewed, asked for or let go. */
    private void tick() {
        if (closed) {
            return;
        }
        try {
            for (Group g : groups.values()) {
                step(g);
            }
        } catch (Rbd.Fenced e) {
            fencedHere(e);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "gateway group {0}: {1}", config.name(), e.getMessage());
        }
    }

    private void step(Group g) throws IOException {
        long now = System.nanoTime();
        if (g.role == Role.OWNER && now - g.renewedNanos < TimeUnit.MILLISECONDS.toNanos(config.leaseMillis() / 4)) {
            maybeLetGo(g);
            return; // renewed lately
        }
        RadosLease.Outcome o = g.lease.take(config.leaseMillis());
        if (o == RadosLease.Outcome.BUSY) {
            if (g.role != Role.STANDBY) {
                event(g.grpid, "another gateway holds the lease: non-optimized");
                leaseChanges.increment();
            }
            RadosLease.Holder h = g.lease.holder();
            g.holder = h == null ? null : h.member();
            report(g, Role.STANDBY);
            askBack(g, now);
            return;
        }
        g.renewedNanos = now;
        g.renewedAt = System.currentTimeMillis();
        if (g.role != Role.OWNER) {
            acquired(g);
        }
        maybeLetGo(g);
    }

    /** Just took {@code g}'s lease: fence its last holder unless that one let go cleanly, say so, then report optimized. */
    private void acquired(Group g) throws IOException {
        RadosLease.Holder last = g.lease.holder();
        String me = g.lease.cluster().address();
        if (last != null && !last.released() && !last.address().equals(me)) {
            g.lease.cluster().blocklist(last.address(), 0);
            fencings.increment();
            event(g.grpid, "fenced " + last.member() + " (client " + last.address() + "), which held the lease and did not"
                    + " let it go");
        }
        g.lease.holder(new RadosLease.Holder(config.self(), me, false));
        if (config.self().equals(g.lease.want())) {
            g.lease.want("");
        }
        g.holder = config.self();
        g.asked = false;
        g.healthySince = 0;
        leaseChanges.increment();
        event(g.grpid, "took the lease: optimized");
        report(g, Role.OWNER);
    }

    /** The owner lets {@code g} go cleanly to its preferred gateway when that one asks (failback). */
    private void maybeLetGo(Group g) throws IOException {
        String preferred = config.preferred().get(g.grpid);
        if (!config.failback() || preferred == null || preferred.equals(config.self())) {
            return;
        }
        if (!preferred.equals(g.lease.want())) {
            return;
        }
        report(g, Role.STANDBY);
        g.lease.holder(new RadosLease.Holder(config.self(), g.lease.cluster().address(), true));
        g.lease.release();
        g.holder = null;
        leaseChanges.increment();
        event(g.grpid, "let the lease go to " + preferred + " (failback): non-optimized");
    }

    /** A standby preferred gateway asks for its group back once it has been healthy for the failback delay. */
    private void askBack(Group g, long now) throws IOException {
        if (!config.failback() || !config.self().equals(config.preferred().get(g.grpid)) || g.asked) {
            return;
        }
        if (g.healthySince == 0) {
            g.healthySince = now;
        }
        if (now - g.healthySince >= TimeUnit.MILLISECONDS.toNanos(config.failbackDelayMillis())) {
            g.lease.want(config.self());
            g.asked = true;
            event(g.grpid, "healthy for " + config.failbackDelayMillis() + " ms: asked for the lease back (failback)");
        }
    }

    /** The watch thread: an owner past its own deadline reports the group inaccessible at once. */
    private void watchDeadlines() {
        long now = System.nanoTime();
        long lease = TimeUnit.MILLISECONDS.toNanos(config.leaseMillis());
        for (Group g : groups.values()) {
            if (g.role == Role.OWNER && now - g.renewedNanos > lease - marginNanos()) {
                report(g, Role.LOST);
                leaseChanges.increment();
                event(g.grpid, "could not renew the lease in time: inaccessible");
            }
        }
    }

    /** The cluster fenced this gateway: every group inaccessible, then a new client, then non-optimized. */
    private void fencedHere(IOException why) {
        if (!rejoinPending) { // a retry after a failed rejoin is the same fencing
            rejoinPending = true;
            fenced.increment();
            for (Group g : groups.values()) {
                report(g, Role.LOST);
                g.healthySince = 0;
                g.asked = false;
            }
            event(0, "fenced by the cluster (" + why.getMessage() + "): inaccessible; re-opening with a new client");
        }
        try {
            RbdCluster old;
            synchronized (this) {
                old = cluster;
            }
            RbdCluster next = rejoin.rejoin(old);
            synchronized (this) {
                cluster = next;
            }
            for (Group g : groups.values()) {
                Group fresh = new Group(g.grpid, lease(next, g.grpid));
                groups.put(g.grpid, fresh);
                report(fresh, Role.STANDBY);
            }
            old.close();
            rejoinPending = false;
            event(0, "rejoined through " + next.address() + ": non-optimized");
        } catch (IOException | RuntimeException e) {
            event(0, "could not rejoin yet: " + e.getMessage());
        }
    }

    @Override
    public void close() {
        closed = true;
        threads.shutdownNow();
        try {
            threads.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // owned leases are let go cleanly: the others take them at once, and fence no one
        for (Group g : groups.values()) {
            if (g.role == Role.OWNER) {
                try {
                    report(g, Role.STANDBY);
                    g.lease.holder(new RadosLease.Holder(config.self(), g.lease.cluster().address(), true));
                    g.lease.release();
                } catch (IOException | RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "gateway group {0}: letting ANA group {1} go: {2}", config.name(),
                            g.grpid, e.getMessage());
                }
            }
        }
        synchronized (this) {
            cluster.close();
        }
    }
}
