package io.nvmeof.target;

import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
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
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

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

    /** Tunables, with the defaults a Linux host works well with. */
    public static final class Options implements Cloneable {
        /** Event loop threads; 0 means one per core. */
        public int eventLoopThreads = 0;
        /**
         * How event loops wait for I/O (native epoll): {@link BusyPoll#OFF} sleeps when idle;
         * {@link BusyPoll#ALWAYS} never sleeps, the lowest latency at the price of a core per loop,
         * for a target given its own cores (pair it with {@link #eventLoopThreads} and CPU
         * affinity); a window polls for a while after each event, then sleeps.
         */
        public BusyPoll busyPoll = BusyPoll.OFF;
        /** Threads for blocking backend I/O. */
        public int ioThreads = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());
        /**
         * Where blocking backend calls (and long work of any backend) run; null: a pool of {@link
         * #ioThreads} the target owns and shuts down. One given here is the embedder's to shut down.
         */
        public ExecutorService ioExecutor;
        /** CAP.MQES + 1. */
        public int maxQueueSize = 128;
        public int maxIoQueues = 64;
        /** In-capsule data accepted on every queue (IOCCSZ - 64). */
        public int inCapsuleDataSize = 8192;
        /** MAXH2CDATA: at least 4096 and a multiple of 4 for Linux hosts. */
        public int maxH2cData = 128 * 1024;
        /** MDTS as a power of two of 4 KiB pages: 8 = 1 MiB. */
        public int mdts = 8;
        public int ieeeOui = 0;
        /** CAP.TO in 500 ms units. */
        public int readyTimeoutHalfSeconds = 15;
        /** Extra time past KATO before a silent host's controller is torn down. */
        public long keepAliveGraceMillis = 2000;
        /**
         * A write whose data the host owes (after an R2T) and has not sent within this time fails
         * with Data Transfer Error and gives its buffer back (the Linux host times a command out
         * after 30 s itself).
         */
        public long dataTimeoutMillis = 30_000;
        /**
         * Bytes of command data buffers the target holds at once, over all hosts ({@link
         * BufferBudget}); 0: half of the JVM's direct memory.
         */
        public long maxBufferMemory = 0;
        /**
         * Bytes of write data one queue may have asked its host for (R2T) and not yet received;
         * further writes wait, holding no buffer. A host that never answers R2T thus holds at
         * most this much of {@link #maxBufferMemory} per queue until the data timeout. One
         * write alone always goes, however large.
         */
        public long maxQueueWriteData = 4 << 20;
        /**
         * A slab of registered RDMA data buffers none of whose buffers has been used for this
         * long is deregistered and freed: the pool grows with a burst and shrinks back after it.
         */
        public long rdmaPoolIdleMillis = 30_000;
        /**
         * A connection that has not completed ICReq and Connect and, if its host must
         * authenticate, the authentication, within this time is closed.
         */
        public long connectDeadlineMillis = 10_000;
        /** The least KATO granted when a host asks for one (a host asking for 100 ms gets this). */
        public long minKeepAliveMillis = 1000;
        /** Controllers one host NQN may hold in one subsystem at once (Linux multipath uses one per path). */
        public int maxControllersPerHost = 16;
        /** Connections (queues) open on the target at once, over all ports and hosts. */
        public int maxConnections = 16384;
        /**
         * Connections from one peer address that are not yet connected or, if their host must
         * authenticate, not yet authenticated ({@link #connectDeadlineMillis} ends them): a
         * host's established queues never count, so any number of paths and queues, or hosts
         * behind one NAT address, are never refused, while one address cannot hold a flood of
         * half-open connections.
         */
        public int maxPendingPerAddress = 128;
        /**
         * Threads for the Diffie-Hellman arithmetic of DH-HMAC-CHAP, apart from {@link #ioThreads}
         * so that hosts authenticating (or pretending to) never delay storage I/O; 0: one per two cores.
         */
        public int authThreads = 0;

        Options copy() {
            try {
                return (Options) clone();
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }
    }

    /** KATO of a discovery controller whose host asks for none (nvmet's and SPDK's NVMET_DISC_KATO_MS). */
    public static final long DISCOVERY_KATO_MILLIS = 120_000;

    public Target() {
        this(new Options());
    }

    public Target(Options options) {
        if (options.maxH2cData < 4096 || options.maxH2cData % 4 != 0) {
            throw new IllegalArgumentException("maxH2cData must be at least 4096 and a multiple of 4");
        }
        this.options = options;
        this.ioExecutor = options.ioExecutor;
        this.bufferBudget = new BufferBudget(budgetOf(options));
    }

    private static long budgetOf(Options o) {
        return o.maxBufferMemory > 0 ? o.maxBufferMemory : defaultMaxBufferMemory();
    }

    /**
     * Changes limits and timeouts of a running target (a reload): {@code change} edits a copy of
     * the options, which then replaces them. The buffer budget changes at once; timeouts and caps
     * apply from the next connection or command on. Threads, queue sizes and wire parameters stay
     * as the target started.
     */
    public synchronized void update(Consumer<Options> change) {
        Options o = options.copy();
        change.accept(o);
        options = o;
        bufferBudget.setLimit(budgetOf(o));
    }

    public synchronized void addSubsystem(Subsystem s) {
        if (s.isDiscovery() || s.nqn().equals(Nqn.DISCOVERY)) {
            throw new IllegalArgumentException(Nqn.DISCOVERY + " is the target's own discovery subsystem");
        }
        if (subsystems.putIfAbsent(s.nqn(), s) != null) {
            throw new IllegalArgumentException("subsystem " + s.nqn() + " is defined twice");
        }
        s.onChange(this::discoveryChanged);
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
            group = EventLoops.newGroup(options.eventLoopThreads, "nvmeof-target", options.busyPoll);
            int loops = options.eventLoopThreads > 0 ? options.eventLoopThreads : Runtime.getRuntime().availableProcessors();
            LOG.log(System.Logger.Level.INFO, "{0,number,#} event loops on {1}, busy polling {2}", loops,
                    EventLoops.engine(), EventLoops.nativeEpoll() ? options.busyPoll : "off (epoll only)");
        }
        if (authExecutor == null) {
            int threads = options.authThreads > 0 ? options.authThreads
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
            ioExecutor = new ThreadPoolExecutor(options.ioThreads, options.ioThreads, 60, TimeUnit.SECONDS,
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
    public Subsystem discovery() {
        return discovery;
    }

    /** Discovery log generation counter: changes whenever the set of log entries may have. */
    public long discoveryGeneration() {
        return discoveryGeneration.get();
    }

    /** A port's set of subsystems was changed in place. */
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

    public int maxQueueSize() {
        return options.maxQueueSize;
    }

    public int maxIoQueues() {
        return options.maxIoQueues;
    }

    public int inCapsuleDataSize() {
        return options.inCapsuleDataSize;
    }

    public int maxH2cData() {
        return options.maxH2cData;
    }

    public int mdts() {
        return options.mdts;
    }

    /** Largest transfer of one command: 2^MDTS pages of 4 KiB. */
    public int maxTransferSize() {
        return 4096 << options.mdts;
    }

    public int ieeeOui() {
        return options.ieeeOui;
    }

    public int readyTimeoutHalfSeconds() {
        return options.readyTimeoutHalfSeconds;
    }

    public long keepAliveGraceMillis() {
        return options.keepAliveGraceMillis;
    }

    /** How long a registered RDMA slab stays unused before it is given back. */
    public long rdmaPoolIdleMillis() {
        return options.rdmaPoolIdleMillis;
    }

    public long maxQueueWriteData() {
        return options.maxQueueWriteData;
    }

    /** The budget of command data buffers. */
    public BufferBudget bufferBudget() {
        return bufferBudget;
    }

    /** The default buffer budget: half of the JVM's direct memory as Netty sees it. */
    public static long defaultMaxBufferMemory() {
        return Math.max(64L << 20, PlatformDependent.maxDirectMemory() / 2);
    }

    public long dataTimeoutMillis() {
        return options.dataTimeoutMillis;
    }

    public long connectDeadlineMillis() {
        return options.connectDeadlineMillis;
    }

    public int maxControllersPerHost() {
        return options.maxControllersPerHost;
    }

    /**
     * The KATO granted for {@code askedMillis}: a discovery controller asked for none gets 120 s
     * (so a host that vanishes does not keep it for ever), any other request at least {@link
     * Options#minKeepAliveMillis}; 0 (no keep-alive) stays 0 on an I/O controller.
     */
    public long grantedKato(long askedMillis, boolean discovery) {
        if (askedMillis == 0) {
            return discovery ? DISCOVERY_KATO_MILLIS : 0;
        }
        return Math.max(askedMillis, options.minKeepAliveMillis);
    }

    private final AtomicInteger connections = new AtomicInteger();
    private final BufferBudget bufferBudget;

    /**
     * Counts a new connection in, or refuses it (false) when {@link Options#maxConnections} are
     * open; each one counted in is counted out by {@link #connectionClosed()}.
     */
    public boolean admitConnection() {
        while (true) {
            int n = connections.get();
            if (n >= options.maxConnections) {
                connectionsRefused.increment();
                return false;
            }
            if (connections.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    public void connectionClosed() {
        connections.decrementAndGet();
    }

    private final ConcurrentHashMap<java.net.InetAddress, AtomicInteger> pending = new ConcurrentHashMap<>();
    private static final RateLimitedLog PENDING_REFUSED = new RateLimitedLog(LOG);

    /**
     * Counts a new connection from {@code peer} as pending (not yet connected and authenticated),
     * or refuses it (false) when {@link Options#maxPendingPerAddress} from there are pending.
     * Each one counted is counted out by {@link #pendingEnded}.
     */
    boolean admitPending(java.net.InetAddress peer) {
        int max = options.maxPendingPerAddress;
        boolean[] ok = {false};
        pending.compute(peer, (a, n) -> {
            int now = n == null ? 0 : n.get();
            if (now >= max) {
                return n;
            }
            ok[0] = true;
            if (n == null) {
                return new AtomicInteger(1);
            }
            n.incrementAndGet();
            return n;
        });
        if (!ok[0]) {
            connectionsRefused.increment();
            PENDING_REFUSED.log(System.Logger.Level.WARNING, "refused a connection from {0}: {1} connections from there"
                    + " are not yet connected and authenticated, the most one address may have", peer.getHostAddress(), max);
        }
        return ok[0];
    }

    void pendingEnded(java.net.InetAddress peer) {
        pending.computeIfPresent(peer, (a, n) -> n.decrementAndGet() <= 0 ? null : n);
    }

    /** Connections open now. */
    public int connectionCount() {
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

    /** Connections refused since the start because {@link Options#maxConnections} were open. */
    public long connectionsRefused() {
        return connectionsRefused.sum();
    }

    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        for (PortListener l : ports.values()) {
            l.close();
        }
        ports.clear();
        if (authExecutor != null) {
            authExecutor.shutdownNow();
        }
        if (ioExecutor != null && ioExecutor != options.ioExecutor) {
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
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
        Closeables.closeAll(transports.values());
        transports.clear();
        Closeables.closeAll(subsystems.values());
    }
}
