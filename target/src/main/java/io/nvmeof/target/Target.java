package io.nvmeof.target;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.PlatformDependent;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.target.backend.RbdBackend;
import io.nvmeof.target.backend.RbdCluster;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;

/**
 * The NVMe-oF target: subsystems and the ports they are served on. Build it, add
 * subsystems, then add ports ({@link #addPort}, or {@link #listenTcp} for a port that serves
 * every subsystem); the discovery subsystem is served on every port. {@link #close()} stops
 * listening, drops every connection, waits for I/O in flight and closes the backends.
 *
 * <p>This class keeps the registry (subsystems, ports and their transports) and the lifecycle;
 * each other job has a class of its own, which the public methods here front: the settings in
 * effect ({@link Tuning}), the threads ({@link TargetThreads}), ANA ({@link AnaGroups}), the
 * discovery log's changes and referrals ({@link DiscoveryNotices}), per-host QoS ({@link
 * HostQosTable}), host keys ({@link HostKeys}), admission ({@link Admission}) and the counters
 * ({@link TargetCounters}).
 */
public final class Target implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Target.class.getName());
    /** NN reported in Identify Controller unless a namespace has a larger NSID. */
    public static final int MAX_NSID = 1024;
    /** KATO of a discovery controller whose host asks for none (nvmet's and SPDK's NVMET_DISC_KATO_MS). */
    public static final long DISCOVERY_KATO_MILLIS = 120_000;
    /** ANATT, seconds: a group left in the change state longer than this goes inaccessible. */
    public static final int ANA_TRANSITION_SECONDS = 10;

    private final Map<String, Subsystem> subsystems = new ConcurrentHashMap<>();
    /** Read from event loops (discovery log) without the target's lock: never block them behind a reload. */
    private final Map<Port, PortListener> ports = new ConcurrentHashMap<>();
    /** The transports of the ports, by trtype, created on the first port of each. */
    private final Map<String, TargetTransport> transports = new ConcurrentHashMap<>();
    private final Subsystem discovery = new Subsystem(Nqn.DISCOVERY, "discovery", "nvmeof-java discovery",
            ProductVersion.FIRMWARE_REVISION, true);
    private final Faults faults = new Faults(this);
    /** Namespaces' reservations, beyond their objects and (with persistence set) across restarts. */
    private final ReservationStore reservationStore = new ReservationStore();
    private final Tuning tuning;
    private final BufferBudget bufferBudget;
    private final TargetThreads threads;
    private final TargetCounters counters = new TargetCounters();
    private final Admission admission;
    private final HostKeys hostKeys = new HostKeys(this::subsystems);
    private final HostQosTable hostQos = new HostQosTable();
    private final DiscoveryNotices discoveryNotices = new DiscoveryNotices(discovery);
    private final CentralDiscovery centralDiscovery = new CentralDiscovery(this);
    private volatile boolean closed;
    /** This gateway's part in a gateway group, or null. */
    private volatile GatewayGroup gatewayGroup;
    private final AnaGroups ana = new AnaGroups(this::subsystems, () -> closed);

    /**
     * The target's settings, one value for each row of {@link Settings} (defaults a Linux host
     * works well with), and where blocking backend calls run. Immutable: {@link #with} makes a
     * changed copy, checking the value against the row's range.
     */
    public static final class Options {
        private static final Options DEFAULTS;

        static {
            Object[] v = new Object[Settings.ALL.size()];
            for (Setting<?> s : Settings.ALL) {
                v[s.index()] = s.defaultValue();
            }
            DEFAULTS = new Options(v, null);
        }

        private final Object[] values;
        private final ExecutorService ioExecutor;

        private Options(Object[] values, ExecutorService ioExecutor) {
            this.values = values;
            this.ioExecutor = ioExecutor;
        }

        /** Every setting at its default. */
        public static Options defaults() {
            return DEFAULTS;
        }

        /** The value of {@code setting}. */
        public <T> T get(Setting<T> setting) {
            return setting.type().cast(values[setting.index()]);
        }

        /** A copy with {@code setting} at {@code value}; throws {@link IllegalArgumentException} naming it if out of range. */
        public <T> Options with(Setting<T> setting, T value) {
            try {
                setting.check(value);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(setting.key() + " " + e.getMessage(), e);
            }
            Object[] v = values.clone();
            v[setting.index()] = value;
            return new Options(v, ioExecutor);
        }

        /**
         * A copy where blocking backend calls (and long work of any backend) run on {@code executor},
         * which stays the embedder's to shut down; null: a pool of {@link Settings#IO_THREADS} the
         * target owns.
         */
        public Options withIoExecutor(ExecutorService executor) {
            return new Options(values, executor);
        }

        public ExecutorService ioExecutor() {
            return ioExecutor;
        }

        /** The settings whose values differ in {@code other}, in table order. */
        public List<Setting<?>> differences(Options other) {
            List<Setting<?>> l = new ArrayList<>();
            for (Setting<?> s : Settings.ALL) {
                if (!values[s.index()].equals(other.values[s.index()])) {
                    l.add(s);
                }
            }
            return l;
        }

        /** {@code this} with the value of {@code setting} taken from {@code other}. */
        <T> Options withValueOf(Setting<T> setting, Options other) {
            return with(setting, other.get(setting));
        }

        /** Equal settings (where backend calls run is not a setting). */
        @Override
        public boolean equals(Object o) {
            return o instanceof Options other && Arrays.equals(values, other.values);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(values);
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder("{");
            for (Setting<?> s : Settings.ALL) {
                b.append(b.length() > 1 ? ", " : "").append(s.key()).append('=').append(s.formatObject(values[s.index()]));
            }
            return b.append('}').toString();
        }
    }

    public Target() {
        this(Options.defaults());
    }

    public Target(Options options) {
        this.tuning = new Tuning(options);
        this.threads = new TargetThreads(options.ioExecutor());
        this.bufferBudget = new BufferBudget(budgetOf(options));
        this.admission = new Admission(tuning, counters);
        RbdCluster.timeouts(options.get(Settings.RBD_CONNECT_TIMEOUT_MS), options.get(Settings.RBD_OP_TIMEOUT_MS));
    }

    private static long budgetOf(Options o) {
        long m = o.get(Settings.MAX_BUFFER_MEMORY);
        return m > 0 ? m : defaultMaxBufferMemory();
    }

    /** The settings in effect. */
    public Options options() {
        return tuning.options();
    }

    /**
     * Changes the settings of a running target (a reload) to {@code next}, except those that
     * do not reload ({@link Setting#reloads()}: threads, queue sizes, wire parameters), which keep
     * the values the target started with; those are returned, so that the caller can say so. The
     * buffer budget changes at once; timeouts and caps apply from the next connection or command on.
     */
    public synchronized List<Setting<?>> update(Options next) {
        List<Setting<?>> kept = tuning.update(next);
        bufferBudget.setLimit(budgetOf(tuning.options()));
        return kept;
    }

    /** What the target's parts read of the settings. */
    Tuning tuning() {
        return tuning;
    }

    TargetThreads threads() {
        return threads;
    }

    Admission admission() {
        return admission;
    }

    AnaGroups ana() {
        return ana;
    }

    /** The registrations this target keeps as a central discovery controller ({@link Settings#CDC}). */
    public CentralDiscovery centralDiscovery() {
        return centralDiscovery;
    }

    DiscoveryNotices discoveryNotices() {
        return discoveryNotices;
    }

    TargetCounters counters() {
        return counters;
    }

    /** Host {@code nqn}'s QoS limits across its controllers in this process (counters carry over). */
    public void hostQos(String nqn, Qos.Limits limits) {
        hostQos.set(nqn, limits);
    }

    /** Every host's QoS now, by host NQN (for the metrics). */
    public Map<String, Qos> hostQosAll() {
        return hostQos.all();
    }

    /** Host {@code nqn}'s QoS, or null. */
    public Qos hostQos(String nqn) {
        return hostQos.of(nqn);
    }

    public ReservationStore reservationStore() {
        return reservationStore;
    }

    public synchronized void addSubsystem(Subsystem s) {
        if (s.isDiscovery() || s.nqn().equals(Nqn.DISCOVERY)) {
            throw new IllegalArgumentException(Nqn.DISCOVERY + " is the target's own discovery subsystem");
        }
        if (subsystems.putIfAbsent(s.nqn(), s) != null) {
            throw new IllegalArgumentException("subsystem " + s.nqn() + " is defined twice");
        }
        s.onChange(discoveryNotices::changed);
        s.reservationStore(reservationStore);
        discoveryNotices.changed();
    }

    /** Removes a subsystem: its controllers are torn down and its namespaces closed. */
    public synchronized void removeSubsystem(String nqn) throws IOException {
        Subsystem s = subsystems.remove(nqn);
        if (s != null) {
            discoveryNotices.changed();
            s.close();
        }
    }

    /**
     * Sets what each host must prove (DH-HMAC-CHAP keys, TLS PSK), replacing the previous set.
     * A host whose keys change (are added, replaced or removed) loses its controllers at once, as
     * a host taken out of {@code allowed_hosts} does: it reconnects and proves the new keys.
     */
    public void hostSecurity(Collection<HostSecurity> hosts) {
        hostKeys.set(hosts);
    }

    /** What host {@code hostNqn} must prove, or null if nothing is configured for it. */
    public HostSecurity hostSecurity(String hostNqn) {
        return hostKeys.of(hostNqn);
    }

    /** The subsystem with this NQN (the discovery subsystem included), or null. */
    public Subsystem subsystem(String nqn) {
        return Nqn.DISCOVERY.equals(nqn) ? discovery : subsystems.get(nqn);
    }

    public Collection<Subsystem> subsystems() {
        return subsystems.values();
    }

    /** The event loops that serve the ports (none before the first port is added). */
    public List<EventExecutor> eventLoops() {
        return threads.eventLoops();
    }

    /** Serves NVMe/TCP on {@code address} for every subsystem; returns the bound address (port 0 picks one). */
    public synchronized InetSocketAddress listenTcp(InetSocketAddress address) throws IOException {
        return addPort(new Port(nextPortId(), "tcp", address, true, List.of())).bound();
    }

    /** A free PORTID. */
    public synchronized int nextPortId() {
        int id = 1;
        for (Port p : ports.keySet()) {
            id = Math.max(id, p.id() + 1);
        }
        return id;
    }

    /** Starts listening on {@code port}. */
    public synchronized Port addPort(Port port) throws IOException {
        if (closed) {
            throw new IllegalStateException("target is closed");
        }
        for (Port p : ports.keySet()) {
            if (p.id() == port.id()) {
                throw new IllegalArgumentException("portid " + port.id() + " is used twice");
            }
        }
        threads.start(tuning.options());
        try {
            TargetTransport transport = transports.get(port.trtype());
            if (transport == null) {
                transport = port.transport().create(this, threads.group());
                transports.put(port.trtype(), transport);
            }
            PortListener l = transport.listen(port);
            port.bound(l.localAddress());
            ports.put(port, l);
            discoveryNotices.changed();
            GatewayGroup gg = gatewayGroup;
            if (gg != null) {
                gg.portAdded();
            }
            LOG.log(System.Logger.Level.INFO, "listening on {0}://{1}:{2,number,#} (port {3,number,#}{4})", port.trtype(),
                    l.localAddress().getHostString(), l.localAddress().getPort(), port.id(),
                    port.options().isEmpty() ? "" : ", " + port.options());
            return port;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while binding " + port.address(), e);
        } catch (RuntimeException e) {
            throw new IOException("cannot listen on " + port.address().getHostString() + ":" + port.address().getPort()
                    + ": " + e.getMessage(), e);
        }
    }

    /** Stops listening on {@code port} and drops its connections. */
    public void removePort(Port port) {
        PortListener l = ports.remove(port);
        if (l != null) {
            l.close();
            discoveryNotices.changed();
        }
    }

    /** The ports, in PORTID order. */
    public List<Port> ports() {
        List<Port> list = new ArrayList<>(ports.keySet());
        list.sort(Comparator.comparingInt(Port::id));
        return list;
    }

    /**
     * Makes this target a member of a gateway group ({@code null}: none), which from now on sets
     * the ANA states of the groups it manages on every port; the previous one is closed. The
     * target closes it when it closes.
     */
    public void gatewayGroup(GatewayGroup group) {
        GatewayGroup was = gatewayGroup;
        gatewayGroup = group;
        if (was != null && was != group) {
            was.close();
        }
        // reservations of the RBD namespaces the group serves live in the cluster, beside the images
        if (group != null && options().get(Settings.SHARE_RESERVATIONS)) {
            reservationStore.sharing((subsystem, ns) -> ns.backend() instanceof RbdBackend rbd
                    ? SharedReservations.open(rbd.cluster(), group.config().pool(), subsystem, ns) : null);
            for (Subsystem s : subsystems()) {
                for (Namespace ns : s.namespaces().values()) {
                    reservationStore.share(s, ns);
                }
            }
        }
    }

    /** This target's gateway group, or null. */
    public GatewayGroup gatewayGroup() {
        return gatewayGroup;
    }

    /** Faults to inject for tests of the hosts' side; none are set unless asked for. */
    public Faults faults() {
        return faults;
    }

    /** The discovery subsystem, served on every port. */
    public Subsystem discovery() {
        return discovery;
    }

    /**
     * Sets ANA group {@code group}'s state through {@code port} (nvmet's
     * {@code ports/N/ana_groups/G/ana_state}): I/O through the port to the group's namespaces is
     * then served or answered with the path status the state calls for, and the controllers that
     * came in through the port get an ANA change notice and read the new log. A group left in
     * {@link AnaState#CHANGE} for {@link #ANA_TRANSITION_SECONDS} goes {@link AnaState#INACCESSIBLE}
     * (Linux resets a controller whose namespaces stay in change longer). States are this
     * process's only: gateways do not coordinate them, their operator does.
     */
    public void anaState(Port port, int group, AnaState state) {
        ana.state(port, group, state);
    }

    /**
     * Moves namespace {@code nsid} of {@code subsystem} to ANA group {@code group}: a new change
     * count, and the ANA change notice to the hosts. Returns false if there is no such namespace.
     */
    public boolean anaGroup(Subsystem subsystem, int nsid, int group) {
        return ana.group(subsystem, nsid, group);
    }

    /**
     * Sets the referrals {@code port}'s discovery log gives; hosts holding a discovery controller
     * get the discovery log change notice when they change.
     */
    public void referrals(Port port, List<Port.Referral> referrals) {
        discoveryNotices.referrals(port, referrals);
    }

    /** A port's set of subsystems was changed in place: the discovery log changed. */
    public void portChanged() {
        discoveryNotices.changed();
    }

    /** The budget of command data buffers. */
    public BufferBudget bufferBudget() {
        return bufferBudget;
    }

    /** The default buffer budget: half of the JVM's direct memory as Netty sees it. */
    public static long defaultMaxBufferMemory() {
        return Math.max(64L << 20, PlatformDependent.maxDirectMemory() / 2);
    }

    /** Connections closed since the start to make room for newer ones from their address ({@link Admission#admitPending}). */
    public long pendingDisplaced() {
        return counters.pendingDisplaced.sum();
    }

    /** Connections open now, discovery controllers' too. */
    public int connectionCount() {
        return admission.connectionCount();
    }

    /** Connections open now whose Connect named the discovery subsystem ({@link Settings#MAX_DISCOVERY_CONNECTIONS}). */
    public int discoveryConnectionCount() {
        return admission.discoveryConnectionCount();
    }

    /** Controllers torn down since the start because their hosts went quiet past the keep-alive timeout. */
    public long keepAliveExpiries() {
        return counters.keepAliveExpiries.sum();
    }

    /** Connections refused since the start because {@link Settings#MAX_CONNECTIONS} were open. */
    public long connectionsRefused() {
        return counters.connectionsRefused.sum();
    }

    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        GatewayGroup gg = gatewayGroup;
        if (gg != null) {
            gg.close(); // its leases let go cleanly while the ports still answer
        }
        reservationStore.close();
        for (PortListener l : ports.values()) {
            l.close();
        }
        ports.clear();
        threads.stopAuthentication();
        threads.close();
        Closeables.closeAll(transports.values());
        transports.clear();
        Closeables.closeAll(subsystems.values());
    }
}
