package io.nvmeof.target;

import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.internal.PlatformDependent;
import io.nvmeof.fabric.BusyPoll;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.protocol.Nqn;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The NVMe-oF target: subsystems and the ports they are served on. Build it, add
 * subsystems, then add ports ({@link #addPort}, or {@link #listenTcp} for a port that serves
 * every subsystem); the discovery subsystem is served on every port. {@link #close()} stops
 * listening, drops every connection, waits for I/O in flight and closes the backends.
 */
public final class Target implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Target.class.getName());
    /** NN reported in Identify Controller unless a namespace has a larger NSID. */
    public static final int MAX_NSID = 1024;

    private final Map<String, Subsystem> subsystems = new ConcurrentHashMap<>();
    private final Faults faults = new Faults(this);
    /** Read from event loops (discovery log) without the target's lock: never block them behind a reload. */
    private final Map<Port, PortListener> ports = new ConcurrentHashMap<>();
    /** The transports of the ports, by trtype, created on the first port of each. */
    private final Map<String, TargetTransport> transports = new ConcurrentHashMap<>();
    private final Subsystem discovery = new Subsystem(Nqn.DISCOVERY, "discovery", "nvmeof-java discovery", ProductVersion.FIRMWARE_REVISION, true);
    private final AtomicLong discoveryGeneration = new AtomicLong(1);
    /** Replaced whole by {@link #update} (a reload), never changed in place by the target. */
    private volatile Options options;
    private EventLoopGroup group;
    private ExecutorService ioExecutor;
    private ThreadPoolExecutor authExecutor;
    private volatile Map<String, HostSecurity> hosts = Map.of();
    private boolean closed;

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
        private <T> Options withValueOf(Setting<T> setting, Options other) {
            return with(setting, other.get(setting));
        }

        /** Equal settings (where backend calls run is not a setting). */
        @Override
        public boolean equals(Object o) {
            return o instanceof Options other && java.util.Arrays.equals(values, other.values);
        }

        @Override
        public int hashCode() {
            return java.util.Arrays.hashCode(values);
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

    /** KATO of a discovery controller whose host asks for none (nvmet's and SPDK's NVMET_DISC_KATO_MS). */
    public static final long DISCOVERY_KATO_MILLIS = 120_000;

    public Target() {
        this(Options.defaults());
    }

    public Target(Options options) {
        this.options = options;
        this.ioExecutor = options.ioExecutor();
        this.bufferBudget = new BufferBudget(budgetOf(options));
        io.nvmeof.target.backend.RbdCluster.timeouts(options.get(Settings.RBD_CONNECT_TIMEOUT_MS),
                options.get(Settings.RBD_OP_TIMEOUT_MS));
    }

    private static long budgetOf(Options o) {
        long m = o.get(Settings.MAX_BUFFER_MEMORY);
        return m > 0 ? m : defaultMaxBufferMemory();
    }

    /** The settings in effect. */
    public Options options() {
        return options;
    }

    /**
     * Changes the settings of a running target (a reload) to {@code next}, except those that
     * do not reload ({@link Setting#reloads()}: threads, queue sizes, wire parameters), which keep
     * the values the target started with; those are returned, so that the caller can say so. The
     * buffer budget changes at once; timeouts and caps apply from the next connection or command on.
     */
    public synchronized List<Setting<?>> update(Options next) {
        Options o = next.withIoExecutor(options.ioExecutor());
        List<Setting<?>> kept = new ArrayList<>();
        for (Setting<?> s : options.differences(next)) {
            if (!s.reloads()) {
                kept.add(s);
                o = o.withValueOf(s, options);
            }
        }
        options = o;
        bufferBudget.setLimit(budgetOf(o));
        for (Setting<?> s : kept) {
            LOG.log(System.Logger.Level.WARNING, "{0} changes only at a restart: keeping {1}", s.key(),
                    s.formatObject(options.get(s)));
        }
        return kept;
    }

    /** Per-host QoS (by host NQN: all its controllers here), empty unless set. */
    private final java.util.concurrent.ConcurrentHashMap<String, Qos> hostQos = new java.util.concurrent.ConcurrentHashMap<>();

    /** Host {@code nqn}'s QoS limits across its controllers in this process (counters carry over). */
    public void hostQos(String nqn, Qos.Limits limits) {
        hostQos.compute(nqn, (k, was) -> Qos.replacing(was, limits, System.nanoTime()));
    }

    /** Every host's QoS now, by host NQN (for the metrics). */
    public java.util.Map<String, Qos> hostQosAll() {
        return java.util.Map.copyOf(hostQos);
    }

    /** Host {@code nqn}'s QoS, or null. */
    public Qos hostQos(String nqn) {
        return hostQos.isEmpty() ? null : hostQos.get(nqn);
    }

    /** Namespaces' reservations, beyond their objects and (with persistence set) across restarts. */
    private final ReservationStore reservationStore = new ReservationStore();

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
        s.onChange(this::discoveryChanged);
        s.reservationStore(reservationStore);
        discoveryChanged();
    }

    /** Removes a subsystem: its controllers are torn down and its namespaces closed. */
    public synchronized void removeSubsystem(String nqn) throws IOException {
        Subsystem s = subsystems.remove(nqn);
        if (s != null) {
            discoveryChanged();
            s.close();
        }
    }

    /**
     * Sets what each host must prove (DH-HMAC-CHAP keys, TLS PSK), replacing the previous set.
     * A host whose keys change (are added, replaced or removed) loses its controllers at once, as
     * a host taken out of {@code allowed_hosts} does: it reconnects and proves the new keys.
     */
    public void hostSecurity(Collection<HostSecurity> hosts) {
        Map<String, HostSecurity> m = new HashMap<>();
        for (HostSecurity h : hosts) {
            if (m.put(h.nqn(), h) != null) {
                throw new IllegalArgumentException("host " + h.nqn() + " is defined twice");
            }
        }
        Map<String, HostSecurity> old;
        synchronized (this) {
            old = this.hosts;
            this.hosts = Map.copyOf(m);
        }
        // a key changed, added or removed revokes: the host's controllers end, and it must prove the new key
        java.util.Set<String> nqns = new java.util.HashSet<>(old.keySet());
        nqns.addAll(m.keySet());
        for (String nqn : nqns) {
            if (!HostSecurity.sameKeys(old.get(nqn), m.get(nqn))) {
                for (Subsystem s : subsystems.values()) {
                    s.revokeHost(nqn, "the keys of host " + nqn + " changed");
                }
            }
        }
    }

    /** What host {@code hostNqn} must prove, or null if nothing is configured for it. */
    public HostSecurity hostSecurity(String hostNqn) {
        return hosts.get(hostNqn);
    }

    /** The subsystem with this NQN (the discovery subsystem included), or null. */
    public Subsystem subsystem(String nqn) {
        return Nqn.DISCOVERY.equals(nqn) ? discovery : subsystems.get(nqn);
    }

    public Collection<Subsystem> subsystems() {
        return subsystems.values();
    }

    /** The event loops that serve the ports (none before the first port is added). */
    public synchronized List<EventExecutor> eventLoops() {
        List<EventExecutor> l = new ArrayList<>();
        if (group != null && !group.isShuttingDown()) {
            group.forEach(l::add);
        }
        return l;
    }

    private synchronized void startThreads() {
        if (group == null) {
            EventLoops.use(options.get(Settings.IO_ENGINE));
            group = EventLoops.newGroup(options.get(Settings.EVENT_LOOP_THREADS), "nvmeof-target", options.get(Settings.BUSY_POLL));
            int loops = options.get(Settings.EVENT_LOOP_THREADS) > 0 ? options.get(Settings.EVENT_LOOP_THREADS) : Runtime.getRuntime().availableProcessors();
            LOG.log(System.Logger.Level.INFO, "{0,number,#} event loops on {1}, busy polling {2}", loops,
                    EventLoops.engine(), EventLoops.nativeEpoll() ? options.get(Settings.BUSY_POLL) : "off (epoll only)");
        }
        if (authExecutor == null) {
            int threads = options.get(Settings.AUTH_THREADS) > 0 ? options.get(Settings.AUTH_THREADS)
                    : Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
            AtomicInteger n = new AtomicInteger();
            // bounded: each queue has at most one job here, and a full pool refuses (the host may retry)
            authExecutor = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
                    new ArrayBlockingQueue<>(AUTH_BACKLOG), r -> {
                        Thread t = new Thread(r, "nvmeof-auth-" + n.incrementAndGet());
                        t.setDaemon(true);
                        return t;
                    });
        }
        if (ioExecutor == null) {
            AtomicInteger n = new AtomicInteger();
            // A bounded array queue: no allocation per queued command, and ample room for
            // every queue's depth at once.
            ioExecutor = new ThreadPoolExecutor(options.get(Settings.IO_THREADS), options.get(Settings.IO_THREADS), 60, TimeUnit.SECONDS,
                    new ArrayBlockingQueue<>(65536), r -> {
                        Thread t = new Thread(r, "nvmeof-io-" + n.incrementAndGet());
                        t.setDaemon(true);
                        return t;
                    });
        }
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
        startThreads();
        try {
            TargetTransport transport = transports.get(port.trtype());
            if (transport == null) {
                transport = port.transport().create(this, group);
                transports.put(port.trtype(), transport);
            }
            PortListener l = transport.listen(port);
            port.bound(l.localAddress());
            ports.put(port, l);
            discoveryChanged();
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
            discoveryChanged();
        }
    }

    /** The ports, in PORTID order. */
    public List<Port> ports() {
        List<Port> list = new ArrayList<>(ports.keySet());
        list.sort(Comparator.comparingInt(Port::id));
        return list;
    }

    /** The discovery subsystem, served on every port. */
    /** Faults to inject for tests of the hosts' side; none are set unless asked for. */
    public Faults faults() {
        return faults;
    }

    public Subsystem discovery() {
        return discovery;
    }

    /** Discovery log generation counter: changes whenever the set of log entries may have. */
    long discoveryGeneration() {
        return discoveryGeneration.get();
    }

    /** A port's set of subsystems was changed in place. */
    /** ANATT, seconds: a group left in the change state longer than this goes inaccessible. */
    public static final int ANA_TRANSITION_SECONDS = 10;
    /** The ANA change count (the log page's): one more for every change of a state or a group. */
    private final AtomicLong anaChangeCount = new AtomicLong();

    long anaChangeCount() {
        return anaChangeCount.get();
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
        boolean known = port.anaGroups().contains(group);
        AnaState was = port.anaState(group, state);
        if (known && was == state) {
            return;
        }
        LOG.log(System.Logger.Level.INFO, "{0}: ANA group {1} {2} (was {3})", port, group, state, was);
        anaChanged(port);
        if (state == AnaState.CHANGE) {
            long at = anaChangeCount.get();
            CompletableFuture.delayedExecutor(ANA_TRANSITION_SECONDS * 1000L - 500, TimeUnit.MILLISECONDS).execute(() -> {
                if (!closed && port.anaState(group) == AnaState.CHANGE && anaChangeCount.get() == at) {
                    LOG.log(System.Logger.Level.WARNING, "{0}: ANA group {1} stayed in change for {2} s (ANATT): inaccessible now",
                            port, group, ANA_TRANSITION_SECONDS);
                    anaState(port, group, AnaState.INACCESSIBLE);
                }
            });
        }
    }

    /**
     * Moves namespace {@code nsid} of {@code subsystem} to ANA group {@code group}: a new change
     * count, and the ANA change notice to the hosts. Returns false if there is no such namespace.
     */
    public boolean anaGroup(Subsystem subsystem, int nsid, int group) {
        Namespace ns = subsystem.namespace(nsid);
        if (ns != null) {
            ns.anaGroup(group);
            anaChanged(null);
        }
        return ns != null;
    }

    /** A state or a group changed: a new change count, and the notice to the controllers of {@code port} (all for null). */
    void anaChanged(Port port) {
        anaChangeCount.incrementAndGet();
        for (Subsystem s : subsystems.values()) {
            for (Controller c : s.controllers()) {
                if (port == null || c.port() == port) {
                    c.anaChanged();
                }
            }
        }
    }

    /**
     * Sets the referrals {@code port}'s discovery log gives; hosts holding a discovery controller
     * get the discovery log change notice when they change.
     */
    public void referrals(Port port, List<Port.Referral> referrals) {
        if (port.referrals(referrals)) {
            LOG.log(System.Logger.Level.INFO, "{0}: referrals {1}", port, referrals);
            discoveryChanged();
        }
    }

    public void portChanged() {
        discoveryChanged();
    }

    void discoveryChanged() {
        discoveryGeneration.incrementAndGet();
        for (Controller c : discovery.controllers()) {
            c.discoveryChanged();
        }
    }

    ExecutorService ioExecutor() {
        return ioExecutor;
    }

    /** Jobs waiting for an authentication thread at most; more are refused. */
    static final int AUTH_BACKLOG = 256;

    /** Where DH-HMAC-CHAP's Diffie-Hellman work runs: its own few threads, never the I/O executor's. */
    ThreadPoolExecutor authExecutor() {
        return authExecutor;
    }

    /** File and block namespaces' reads, writes and flushes go through their loop's kernel queues ({@link Settings#FILE_IO}). */
    boolean ringFileIo() {
        return !"threads".equals(options.get(Settings.FILE_IO));
    }

    /** O_DIRECT files and block devices go through their loop's Linux AIO context ({@link Settings#FILE_IO} auto). */
    boolean aioFileIo() {
        return "auto".equals(options.get(Settings.FILE_IO));
    }

    int maxQueueSize() {
        return options.get(Settings.MAX_QUEUE_SIZE);
    }

    int maxIoQueues() {
        return options.get(Settings.MAX_IO_QUEUES);
    }

    int inCapsuleDataSize() {
        return options.get(Settings.IN_CAPSULE_DATA_SIZE);
    }

    int maxH2cData() {
        return options.get(Settings.MAX_H2C_DATA);
    }

    int mdts() {
        return options.get(Settings.MDTS);
    }

    /** Largest transfer of one command: 2^MDTS pages of 4 KiB. */
    int maxTransferSize() {
        return 4096 << options.get(Settings.MDTS);
    }

    int readyTimeoutHalfSeconds() {
        return (int) (options.get(Settings.READY_TIMEOUT_MS) / 500);
    }

    long keepAliveGraceMillis() {
        return options.get(Settings.KEEP_ALIVE_GRACE_MS);
    }

    /** How the target's RDMA providers are tuned. */
    io.nvmeof.fabric.rdma.RdmaTuning rdmaTuning() {
        return new io.nvmeof.fabric.rdma.RdmaTuning(options.get(Settings.RDMA_BUSY_POLL),
                options.get(Settings.DISNI_CQ_SIZE), options.get(Settings.DISNI_INITIATOR_DEPTH));
    }

    /** How long a registered RDMA slab stays unused before it is given back. */
    long rdmaPoolIdleMillis() {
        return options.get(Settings.RDMA_POOL_IDLE_MS);
    }

    long maxQueueWriteData() {
        return options.get(Settings.MAX_QUEUE_WRITE_DATA);
    }

    long maxCopyInFlight() {
        return options.get(Settings.MAX_COPY_IN_FLIGHT);
    }

    /** The budget of command data buffers. */
    public BufferBudget bufferBudget() {
        return bufferBudget;
    }

    /** The default buffer budget: half of the JVM's direct memory as Netty sees it. */
    public static long defaultMaxBufferMemory() {
        return Math.max(64L << 20, PlatformDependent.maxDirectMemory() / 2);
    }

    long dataTimeoutMillis() {
        return options.get(Settings.DATA_TIMEOUT_MS);
    }

    long connectTimeoutMillis() {
        return options.get(Settings.CONNECT_TIMEOUT_MS);
    }

    int maxControllersPerHost() {
        return options.get(Settings.MAX_CONTROLLERS_PER_HOST);
    }

    /**
     * The KATO granted for {@code askedMillis}: a discovery controller asked for none gets 120 s
     * (so a host that vanishes does not keep it for ever), any other request at least {@link
     * Settings#MIN_KEEP_ALIVE_MS}; 0 (no keep-alive) stays 0 on an I/O controller.
     */
    long grantedKato(long askedMillis, boolean discovery) {
        if (askedMillis == 0) {
            return discovery ? DISCOVERY_KATO_MILLIS : 0;
        }
        return Math.max(askedMillis, options.get(Settings.MIN_KEEP_ALIVE_MS));
    }

    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger discoveryConnections = new AtomicInteger();
    private final BufferBudget bufferBudget;

    /**
     * Counts a new connection in, or refuses it (null) when {@link Settings#MAX_CONNECTIONS} are
     * open; the slot it gets is given back by {@link ConnectionSlot#end()}.
     */
    ConnectionSlot admitConnection() {
        while (true) {
            int n = connections.get();
            if (n >= options.get(Settings.MAX_CONNECTIONS)) {
                connectionsRefused.increment();
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
            int max = options.get(Settings.MAX_DISCOVERY_CONNECTIONS);
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

    /** Per peer address, its connections not yet connected and authenticated, oldest first. */
    private final ConcurrentHashMap<java.net.InetAddress, LinkedHashSet<QueuePair>> pending = new ConcurrentHashMap<>();
    private static final RateLimitedLog PENDING_DISPLACED = new RateLimitedLog(LOG);
    private final LongAdder pendingDisplaced = new LongAdder();

    /**
     * Counts {@code q}, a new connection from {@code peer}, as pending (not yet connected and
     * authenticated) until {@link #pendingEnded}. Where that address has {@link
     * Settings#MAX_PENDING_PER_ADDRESS} pending already, the oldest of them is closed to make room
     * rather than the new one refused: hosts behind one NAT address, or containers on one node,
     * share it with whoever floods it, and a host that completes its Connect promptly always gets
     * in. Memory stays bounded: the displaced connection no longer counts and is closing.
     */
    void admitPending(java.net.InetAddress peer, QueuePair q) {
        int max = options.get(Settings.MAX_PENDING_PER_ADDRESS);
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
            pendingDisplaced.increment();
            PENDING_DISPLACED.log(System.Logger.Level.WARNING, "closed the connection from {0} that had waited longest"
                    + " to connect: {1} connections from there are not yet connected and authenticated, the most one"
                    + " address may have", peer.getHostAddress(), max);
            old.displaced();
        }
    }

    void pendingEnded(java.net.InetAddress peer, QueuePair q) {
        pending.computeIfPresent(peer, (a, set) -> {
            set.remove(q);
            return set.isEmpty() ? null : set;
        });
    }

    /** Connections closed since the start to make room for newer ones from their address ({@link #admitPending}). */
    public long pendingDisplaced() {
        return pendingDisplaced.sum();
    }

    /** Connections open now, discovery controllers' too. */
    public int connectionCount() {
        return connections.get() + discoveryConnections.get();
    }

    /** Connections open now whose Connect named the discovery subsystem ({@link Settings#MAX_DISCOVERY_CONNECTIONS}). */
    public int discoveryConnectionCount() {
        return discoveryConnections.get();
    }

    /** Connections open now that count against {@link Settings#MAX_CONNECTIONS}: all but discovery controllers'. */
    int countedConnections() {
        return connections.get();
    }

    private final LongAdder keepAliveExpiries = new LongAdder();
    private final LongAdder connectionsRefused = new LongAdder();

    /** A controller's keep-alive timer expired and it was torn down. */
    void keepAliveExpired() {
        keepAliveExpiries.increment();
    }

    /** Controllers torn down since the start because their hosts went quiet past the keep-alive timeout. */
    public long keepAliveExpiries() {
        return keepAliveExpiries.sum();
    }

    /** Connections refused since the start because {@link Settings#MAX_CONNECTIONS} were open. */
    public long connectionsRefused() {
        return connectionsRefused.sum();
    }

    /**
     * Each loop closes its own file I/O queues, delivering what is still in flight there, before
     * the loops stop: completions run only on their loop, and a queue closed after it would keep
     * the buffers of what was in flight.
     */
    private void closeLoopRings() {
        List<Future<?>> closing = new ArrayList<>();
        for (EventExecutor l : group) {
            try {
                closing.add(l.submit(LoopRing::closeOnThisLoop));
            } catch (RejectedExecutionException e) {
                // already stopping: it closes its handles itself
            }
        }
        long deadline = System.nanoTime() + LoopRing.CLOSE_WAIT_NANOS + TimeUnit.SECONDS.toNanos(1);
        for (Future<?> f : closing) {
            if (!f.awaitUninterruptibly(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                LOG.log(System.Logger.Level.WARNING, "an event loop did not close its file I/O queues in time");
            }
        }
    }

    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        reservationStore.close();
        for (PortListener l : ports.values()) {
            l.close();
        }
        ports.clear();
        if (authExecutor != null) {
            authExecutor.shutdownNow();
        }
        if (ioExecutor != null && ioExecutor != options.ioExecutor()) {
            // Backend calls still running hand their requests back to the event loops, which
            // release them; so the executor drains before the loops stop.
            ioExecutor.shutdown();
            try {
                if (!ioExecutor.awaitTermination(10, TimeUnit.SECONDS)) {
                    LOG.log(System.Logger.Level.WARNING, "backend I/O still running after 10 s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (group != null) {
            closeLoopRings();
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
        Closeables.closeAll(transports.values());
        transports.clear();
        Closeables.closeAll(subsystems.values());
    }
}
