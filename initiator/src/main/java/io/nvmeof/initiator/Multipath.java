package io.nvmeof.initiator;

import io.nvmeof.protocol.AnaLog;
import io.nvmeof.protocol.DiscoveryLogEntry;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.IdentifyController;
import io.nvmeof.protocol.IdentifyNamespace;
import io.nvmeof.protocol.LogPage;
import io.nvmeof.protocol.Status;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * One subsystem through several controllers (paths), as Linux's native NVMe multipath has it:
 * each path is a {@link Controller} of its own (its own connections, keep-alive and reconnects),
 * and a {@link BlockDevice} of the set sends each command down one usable path, chosen by
 * {@link Policy} among the ANA-optimized paths first, then the non-optimized ones. A command that
 * fails with a path error (the connection lost, a command timeout, an ANA or other path-related
 * status without DNR) runs again on another path and never reaches the caller as an error while
 * a usable path exists; with none, it waits up to {@link ConnectOptions#noPathTimeout}. Any other
 * status (media errors, LBA out of range, Reservation Conflict, anything with DNR) is the
 * caller's. Every path has the same host NQN and host ID (one {@link ConnectOptions}), and must
 * be the same subsystem (NQN) and, for each namespace used, the same namespace (NGUID, EUI-64);
 * a path that is not is closed and never used.
 *
 * <p>ANA states are read on connect and reconnect, on every ANA change notice, and on every ANA
 * status (the path is out of use for that namespace until then). A failover resubmits at once,
 * as Linux does: it relies on the target not running a lost controller's commands after its
 * keep-alive expired.
 */
public final class Multipath implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Multipath.class.getName());
    private static final long TICK_MILLIS = 50;

    /** How a path is chosen among the usable ones of the best ANA state (Linux's iopolicy). */
    public enum Policy {
        /** The first usable path in the order given: all I/O on one path until it goes (Linux: numa). */
        NUMA,
        /** Each command on the next path in turn (Linux: round-robin). */
        ROUND_ROBIN,
        /** The path with the fewest commands in flight (Linux: queue-depth). */
        QUEUE_DEPTH;

        /** Linux's name: numa, round-robin, queue-depth. */
        public String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        /** From Linux's name (or {@code first} for numa). */
        public static Policy of(String s) {
            String n = s.trim().toLowerCase(Locale.ROOT);
            if (n.equals("first")) {
                return NUMA;
            }
            for (Policy p : values()) {
                if (p.label().equals(n)) {
                    return p;
                }
            }
            throw new IllegalArgumentException("unknown I/O policy '" + s + "' (numa, round-robin, queue-depth)");
        }
    }

    /** One path: a controller of the subsystem at one address. */
    public static final class Path {
        final int index;
        final NvmeofUri uri;
        volatile Controller controller;
        /** Set when the path proved to be another subsystem or namespace: never used again. */
        volatile String refused;
        volatile String lastError;
        /** ANA state per NSID as the path's controller last reported it (AnaLog's codes). */
        volatile Map<Integer, Integer> ana = Map.of();
        /** Whether the controller reports ANA at all (CMIC bit 3): if not, every namespace is optimized. */
        volatile boolean anaReported;
        volatile boolean anaPending;
        /** A read of the ANA log is queued and not yet begun: more reasons to read it need no second one. */
        final AtomicBoolean anaQueued = new AtomicBoolean();
        int seenReconnects = -1;
        /** Connect attempts that failed while the path had no controller yet: each doubles the wait for the next. */
        int failedConnects;
        final AtomicInteger inflight = new AtomicInteger();
        final LongAdder ios = new LongAdder();
        final LongAdder failovers = new LongAdder();
        /** The path's thread for what blocks (ANA log reads, namespace refreshes): its tasks in order on the host's shared threads. */
        final HostThreads.Serial admin;

        Path(int index, NvmeofUri uri) {
            this.index = index;
            this.uri = uri;
            this.admin = HostThreads.serial();
        }

        public NvmeofUri uri() {
            return uri;
        }

        /** The path's controller, or null while it has never connected. */
        public Controller controller() {
            return controller;
        }

        /** As Linux's sysfs {@code state}: live, resetting, connecting, deleting, dead; "new" before the first connect; "refused". */
        public String state() {
            if (refused != null) {
                return "refused";
            }
            Controller c = controller;
            return c == null ? "connecting" : c.state().name().toLowerCase(Locale.ROOT);
        }

        /** The ANA state of namespace {@code nsid} through this path, as Linux names it (optimized, non-optimized, inaccessible, persistent-loss, change), or "unknown". */
        public String anaState(int nsid) {
            return anaName(ana(nsid));
        }

        int ana(int nsid) {
            if (!anaReported && controller != null) {
                return AnaLog.OPTIMIZED;
            }
            Integer s = ana.get(nsid);
            return s == null ? 0 : s;
        }

        /** Commands sent down this path. */
        public long ios() {
            return ios.sum();
        }

        /** Commands that failed here with a path error and went to another path (or waited for one). */
        public long failovers() {
            return failovers.sum();
        }

        /** Commands in flight on this path now. */
        public int inflight() {
            return inflight.get();
        }

        /** Why the path is not in use (the last connect failure, or why it was refused), or null. */
        public String problem() {
            return refused != null ? refused : lastError;
        }

        boolean live() {
            Controller c = controller;
            return refused == null && c != null && c.state() == ControllerState.LIVE;
        }

        @Override
        public String toString() {
            return uri + " " + state();
        }
    }

    private final List<Path> paths;
    private final String subsystemNqn;
    private final ConnectOptions options;
    private final Policy policy;
    private final long noPathTimeoutNanos;
    private final HostThreads.Serial exec;
    private final AtomicBoolean ticking = new AtomicBoolean();
    private final ArrayDeque<Command> waiting = new ArrayDeque<>();
    private final Map<Integer, NamespaceDevice> devices = new ConcurrentHashMap<>();
    /** Per NSID, the identity every path must show: NGUID and EUI-64 (hex), from the first path that served it. */
    private final Map<Integer, String> identities = new ConcurrentHashMap<>();
    private final AtomicInteger turn = new AtomicInteger();
    private final LongAdder failovers = new LongAdder();
    private final long startNanos = System.nanoTime();
    private volatile boolean closed;
    /** The set as its namespace devices see it. */
    private final IoSink sink = new IoSink() {
        @Override
        public void submitIo(Command c) {
            Multipath.this.submit(c);
        }

        @Override
        public void checkBlockingAllowed() {
            for (Path p : paths) {
                Controller c = p.controller;
                if (c != null) {
                    c.checkBlockingAllowed();
                }
            }
        }

        @Override
        public long callerTimeoutMillis() {
            return Multipath.this.callerTimeoutMillis();
        }

        @Override
        public String describe() {
            return Multipath.this.toString();
        }
    };

    private Multipath(List<NvmeofUri> uris, ConnectOptions options) {
        List<Path> ps = new ArrayList<>();
        for (NvmeofUri u : uris) {
            ps.add(new Path(ps.size(), u));
        }
        this.paths = List.copyOf(ps);
        this.subsystemNqn = uris.get(0).subsystemNqn();
        this.options = options;
        this.policy = options.ioPolicy;
        this.noPathTimeoutNanos = (options.noPathTimeout != null ? options.noPathTimeout : options.controllerLossTimeout)
                .toNanos();
        this.exec = HostThreads.serial();
    }

    /**
     * Connects every path (the URIs of one subsystem: {@link NvmeofUri#parseAll}); at least one
     * must come up now, the others keep trying every reconnect delay, as the lost ones do.
     */
    public static Multipath connect(List<NvmeofUri> uris, ConnectOptions options) throws IOException {
        if (uris.isEmpty()) {
            throw new IllegalArgumentException("no path given");
        }
        String nqn = uris.get(0).subsystemNqn();
        for (NvmeofUri u : uris) {
            if (!u.subsystemNqn().equals(nqn)) {
                throw new IllegalArgumentException("paths to different subsystems: " + nqn + " and " + u.subsystemNqn());
            }
        }
        options.identity(); // one host NQN and host ID on every path
        Multipath m = new Multipath(uris, options);
        List<String> failures = new ArrayList<>();
        for (Path p : m.paths) {
            try {
                m.attach(p, Controller.connect(p.uri, options));
            } catch (IOException | RuntimeException e) {
                p.lastError = e.getMessage();
                failures.add(p.uri + ": " + e.getMessage());
            }
        }
        if (m.paths.stream().noneMatch(Path::live)) {
            m.close();
            throw new IOException("no path to " + nqn + " came up: " + String.join("; ", failures));
        }
        for (Path p : m.paths) {
            if (p.controller == null && p.refused == null) {
                m.scheduleConnect(p);
            }
        }
        m.wake();
        return m;
    }

    /**
     * The paths to {@code subsystemNqn} that a discovery service and the discovery services it
     * refers to (referral entries, followed once each, at most 16) list: one URI per entry of the
     * subsystem on the transport of {@code discoveryUri}, in the order found.
     */
    public static List<NvmeofUri> discover(String discoveryUri, String subsystemNqn, ConnectOptions options)
            throws IOException {
        NvmeofUri start = NvmeofUri.parse(discoveryUri);
        List<String> seen = new ArrayList<>();
        ArrayDeque<String> todo = new ArrayDeque<>(List.of(start.toString()));
        List<NvmeofUri> found = new ArrayList<>();
        List<String> addresses = new ArrayList<>();
        IOException first = null;
        while (!todo.isEmpty() && seen.size() < 16) {
            String u = todo.poll();
            if (seen.contains(u)) {
                continue;
            }
            seen.add(u);
            Discovery.Log log;
            try {
                log = Nvmeof.discover(u, options);
            } catch (IOException e) {
                first = first == null ? e : first; // another referral may still be reachable
                continue;
            }
            for (DiscoveryEntry e : log.entries()) {
                if (!e.transportName().equals(start.transport())) {
                    continue;
                }
                if (e.subtype() == DiscoveryLogEntry.SUBTYPE_REFERRAL) {
                    todo.add(NvmeofUri.parse(e.uri()).toString());
                } else if (subsystemNqn.equals(e.subsystemNqn())) {
                    String at = e.traddr() + ":" + e.trsvcid();
                    if (!addresses.contains(at)) {
                        addresses.add(at);
                        found.add(NvmeofUri.parse(e.uri()));
                    }
                }
            }
        }
        if (found.isEmpty()) {
            throw first != null ? new IOException("no path to " + subsystemNqn + " found from " + discoveryUri + ": "
                    + first.getMessage(), first) : new IOException("no discovery log reached from " + discoveryUri
                    + " lists " + subsystemNqn);
        }
        return List.copyOf(found);
    }

    /** A path's controller is up: check it is the subsystem, learn its ANA states, follow its events. */
    private void attach(Path p, Controller c) throws IOException {
        IdentifyController id = c.identify();
        if (!subsystemNqn.equals(id.subsystemNqn())) {
            c.close();
            p.refused = "the controller at " + p.uri + " is subsystem " + id.subsystemNqn() + ", not " + subsystemNqn;
            throw new IOException(p.refused);
        }
        p.anaReported = (id.cmic() & (1 << 3)) != 0;
        c.onEvent(e -> {
            if (e.logPage() == LogPage.ANA) {
                refreshAna(p);
            } else if (e.type() == 2 && e.info() == 0) {
                onPathThread(p, () -> refreshNamespaces(p));
            }
        });
        c.onReconnect(this::wake);
        p.controller = c;
        p.seenReconnects = c.reconnects();
        for (Integer nsid : devices.keySet()) {
            checkIdentity(p, nsid);
        }
        try {
            refreshAnaNow(p);
        } catch (IOException e) {
            p.anaPending = true;
            p.seenReconnects = -1; // the next tick reads it again; the path waits unused till then
            wake();
        }
        LOG.log(System.Logger.Level.DEBUG, "path {0} to {1}: controller {2}{3}", p.index, p.uri, Integer.toString(c.cntlid()),
                p.anaReported ? ", ANA " + p.ana : "");
    }

    private void scheduleConnect(Path p) {
        try {
            p.failedConnects++;
            exec.schedule(() -> connectLater(p), options.reconnectDelayMillis(p.failedConnects), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /** A path that was down at connect: one more attempt (until the controller loss timeout). */
    private void connectLater(Path p) {
        if (closed || p.controller != null || p.refused != null) {
            return;
        }
        Controller c = null;
        try {
            c = Controller.connect(p.uri, options);
            attach(p, c);
            drainWaiting();
        } catch (IOException | RuntimeException e) {
            p.lastError = e.getMessage();
            if (c != null && p.controller == null) {
                c.close();
            }
            if (p.refused == null && System.nanoTime() - startNanos < options.controllerLossTimeout.toNanos()) {
                scheduleConnect(p);
            }
        }
    }

    /** The paths, in the order given. */
    public List<Path> paths() {
        return paths;
    }

    public String subsystemNqn() {
        return subsystemNqn;
    }

    public Policy policy() {
        return policy;
    }

    /** The host NQN every path connects with. */
    public String hostNqn() {
        return options.identity().hostNqn();
    }

    /** Commands that went to another path (or waited for one) after a path error, over all paths. */
    public long failovers() {
        return failovers.sum();
    }

    /** The namespace through every path; {@code nsid} 0: the first active namespace. */
    public BlockDevice namespace(int nsid) throws IOException {
        // asked of the first live path that answers: a path lost meanwhile is the next one's turn
        IOException lost = null;
        int n = nsid;
        IdentifyNamespace ns = null;
        for (Path p : paths) {
            Controller c = p.controller;
            if (!p.live() || c == null) {
                continue;
            }
            try {
                if (nsid == 0) {
                    List<Integer> active = c.activeNamespaces();
                    if (active.isEmpty()) {
                        throw new NoSuchElementException(subsystemNqn + " has no active namespace");
                    }
                    n = active.get(0);
                }
                ns = c.identifyNamespace(n);
                break;
            } catch (NoSuchElementException e) {
                throw new IOException(e.getMessage()); // the controller answered: the answer stands
            } catch (NvmeStatusException e) {
                throw e;
            } catch (IOException e) {
                lost = e;
            }
        }
        if (ns == null) {
            throw lost != null ? lost : new IOException("no live path to " + subsystemNqn);
        }
        identities.putIfAbsent(n, identity(ns));
        for (Path p : paths) {
            if (p.live()) {
                try {
                    checkIdentity(p, n);
                } catch (IOException e) {
                    // that path is refused (and logged); the others serve
                }
            }
        }
        int blockSize = Controller.checkedBlockSize(ns, "namespace " + Integer.toUnsignedString(n) + " of " + subsystemNqn);
        int maxTransfer = Integer.MAX_VALUE;
        for (Path p : paths) {
            if (p.live()) {
                maxTransfer = Math.min(maxTransfer, p.controller.maxTransferBytes(blockSize));
            }
        }
        int mt = maxTransfer;
        long nsze = ns.nsze();
        NamespaceDevice d = devices.computeIfAbsent(n, k -> new NamespaceDevice(sink, k, nsze, blockSize, mt));
        d.update(ns);
        return d;
    }

    private static String identity(IdentifyNamespace ns) {
        HexFormat hex = HexFormat.of();
        return "NGUID " + hex.formatHex(ns.nguid()) + ", EUI-64 " + hex.formatHex(ns.eui64());
    }

    /** The namespace through {@code p} must be the one the first path showed; else the path is refused. */
    private void checkIdentity(Path p, int nsid) throws IOException {
        String want = identities.get(nsid);
        Controller c = p.controller;
        if (want == null || c == null) {
            return;
        }
        String got = identity(c.identifyNamespace(nsid));
        if (!got.equals(want)) {
            p.refused = "namespace " + nsid + " through " + p.uri + " is another namespace (" + got + "; the others: "
                    + want + ")";
            LOG.log(System.Logger.Level.ERROR, "multipath: {0}; the path is not used", p.refused);
            c.close();
            throw new IOException(p.refused);
        }
    }

    // ---- ANA ----

    /** The path is out of use (for every namespace) until its ANA log has been read again, on its own thread. */
    private void refreshAna(Path p) {
        p.anaPending = true;
        if (!p.anaQueued.compareAndSet(false, true)) {
            return; // the queued read has not begun, so it sees whatever made this call
        }
        onPathThread(p, () -> {
            p.anaQueued.set(false);
            try {
                refreshAnaNow(p);
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "multipath: reading the ANA log through {0}: {1}", p.uri,
                        e.getMessage());
                p.seenReconnects = -1; // the next tick asks again
                wake();
            }
            drainWaiting();
        });
    }

    private static void onPathThread(Path p, Runnable task) {
        try {
            p.admin.execute(task);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /** Reads the path's ANA log (every group, with NSIDs) and takes its states. */
    private void refreshAnaNow(Path p) throws IOException {
        Controller c = p.controller;
        if (c == null || !p.anaReported) {
            p.anaPending = false;
            return;
        }
        IdentifyController id = c.identify();
        long size = AnaLog.size(Math.max(1, id.nanagrpid()), Math.max(1, id.mnan()));
        int len = (int) Math.min(size + 3 & ~3L, 1 << 20);
        ByteBuffer page = Flyweight.allocate(len);
        Command get = Command.getLogPage(LogPage.ANA, 0, page, len, false);
        c.admin(get);
        Map<Integer, Integer> states = new HashMap<>();
        int groups = AnaLog.groupCount(page);
        int at = AnaLog.HEADER_SIZE;
        for (int g = 0; g < groups && at + AnaLog.DESCRIPTOR_SIZE <= len; g++) {
            long n = Integer.toUnsignedLong(AnaLog.nsidCount(page, at));
            if (n > (len - at - AnaLog.DESCRIPTOR_SIZE) / 4) {
                throw new IOException("the ANA log through " + p.uri + " claims " + n + " NSIDs in group "
                        + AnaLog.group(page, at) + ", past the end of its " + len + " bytes");
            }
            int state = AnaLog.state(page, at);
            for (int i = 0; i < n; i++) {
                states.put(AnaLog.nsid(page, at, i), state);
            }
            at += AnaLog.DESCRIPTOR_SIZE + 4 * (int) n;
        }
        p.ana = Map.copyOf(states);
        p.anaPending = false;
        LOG.log(System.Logger.Level.DEBUG, "multipath: ANA through {0}: {1}", p.uri, p.ana);
    }

    private void refreshNamespaces(Path p) {
        Controller c = p.controller;
        for (NamespaceDevice d : devices.values()) {
            try {
                IdentifyNamespace ns = c.identifyNamespace(d.nsid());
                if (ns.nsze() == 0 && otherLivePath(p)) {
                    // inactive through this path only (a gateway between two steps of a change, say):
                    // the set's size stays while another path serves it
                    LOG.log(System.Logger.Level.DEBUG, "multipath: namespace {0} is inactive through {1}",
                            Integer.toUnsignedString(d.nsid()), p.uri);
                    continue;
                }
                d.update(ns);
            } catch (IOException e) {
                LOG.log(System.Logger.Level.DEBUG, "multipath: refreshing namespace {0}: {1}", d.nsid(), e.getMessage());
            }
        }
    }

    private boolean otherLivePath(Path p) {
        for (Path o : paths) {
            if (o != p && o.live()) {
                return true;
            }
        }
        return false;
    }

    static String anaName(int state) {
        switch (state) {
            case AnaLog.OPTIMIZED:
                return "optimized";
            case AnaLog.NON_OPTIMIZED:
                return "non-optimized";
            case AnaLog.INACCESSIBLE:
                return "inaccessible";
            case AnaLog.PERSISTENT_LOSS:
                return "persistent-loss";
            case AnaLog.CHANGE:
                return "change";
            default:
                return "unknown";
        }
    }

    // ---- choosing a path ----

    /** Usable for {@code nsid}: live, not waiting for its ANA log, and optimized (2) or non-optimized (1); else 0. */
    private static int rank(Path p, int nsid) {
        if (!p.live() || p.anaPending) {
            return 0;
        }
        int s = p.ana(nsid);
        return s == AnaLog.OPTIMIZED ? 2 : s == AnaLog.NON_OPTIMIZED ? 1 : 0;
    }

    /** The path for a command to {@code nsid} by the policy, never {@code avoid}; null if none is usable. Allocates nothing. */
    Path pick(int nsid, Path avoid) {
        List<Path> ps = paths;
        int n = ps.size();
        int start = policy == Policy.ROUND_ROBIN ? (turn.getAndIncrement() & Integer.MAX_VALUE) % n : 0;
        Path best = null;
        int bestRank = 0;
        int bestDepth = Integer.MAX_VALUE;
        for (int i = 0; i < n; i++) {
            Path p = ps.get((start + i) % n);
            if (p == avoid) {
                continue;
            }
            int r = rank(p, nsid);
            if (r == 0 || r < bestRank) {
                continue;
            }
            if (policy == Policy.QUEUE_DEPTH) {
                int depth = p.inflight.get();
                if (r > bestRank || depth < bestDepth) {
                    best = p;
                    bestRank = r;
                    bestDepth = depth;
                }
            } else if (r > bestRank) {
                best = p;
                bestRank = r;
            }
        }
        return best;
    }

    long callerTimeoutMillis() {
        long t = 0;
        for (Path p : paths) {
            Controller c = p.controller;
            if (c != null) {
                t = Math.max(t, c.callerTimeoutMillis());
            }
        }
        return Math.max(t, TimeUnit.NANOSECONDS.toMillis(noPathTimeoutNanos)) + options.commandTimeout.toMillis();
    }

    /** Sends {@code c} down a usable path, or holds it until one is. */
    void submit(Command c) {
        c.multipath = this;
        if (c.expiresAtNanos == 0) {
            c.expiresAtNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(callerTimeoutMillis() - 500);
        }
        route(c, null);
    }

    private void route(Command c, Path avoid) {
        if (closed) {
            c.multipath = null;
            c.completeExceptionally(new IOException(this + " is closed"));
            return;
        }
        Path p = pick(c.sqe.nsid(), avoid);
        if (p == null) {
            hold(c);
            return;
        }
        c.noPathSinceNanos = 0;
        c.timedOut = false;
        c.path = p;
        p.inflight.incrementAndGet();
        p.ios.increment();
        p.controller.submitIo(c);
    }

    private void hold(Command c) {
        if (c.noPathSinceNanos == 0) {
            c.noPathSinceNanos = System.nanoTime();
        }
        synchronized (waiting) {
            waiting.addLast(c);
        }
        wake();
    }

    /** A path could not take {@code c} (its controller is not live): it waits for the next round. */
    void unavailable(Command c) {
        Path p = c.path;
        if (p != null) {
            c.path = null;
            p.inflight.decrementAndGet();
        }
        hold(c);
    }

    /**
     * Whether a status is a path error: without DNR, SCT 3h (path related: the ANA states, path
     * errors), or one of the generic statuses that speak of the queue rather than the data
     * (Command Aborted due to SQ Deletion: a controller ending its queues; Transient Transport
     * Error).
     */
    static boolean pathError(Status s) {
        if (s.dnr()) {
            return false;
        }
        return s.sct() == Status.SCT_PATH || s.sct() == Status.SCT_GENERIC
                && (s.sc() == Status.ABORTED_SQ_DELETION.sc() || s.sc() == Status.TRANSIENT_TRANSPORT_ERROR.sc());
    }

    /**
     * A command of this set finished on its path: with a status, or (status null) lost with its
     * connection, timed out, or refused by a path that is down. Returns true if it was taken
     * over (it runs again elsewhere, or waits for a path); false if the status is the caller's.
     */
    boolean completed(Command c, Status s, Throwable cause) {
        Path p = c.path;
        if (p != null) {
            c.path = null;
            p.inflight.decrementAndGet();
        }
        if (s != null && (s.isSuccess() || !pathError(s))) {
            return false;
        }
        if (System.nanoTime() - c.expiresAtNanos > 0) {
            if (s != null) {
                return false;
            }
            c.multipath = null;
            c.completeExceptionally(new NvmeTimeoutException(c.name() + " could not complete before its caller's deadline"
                    + " (" + (cause != null ? cause.getMessage() : "a path error") + ")"));
            return true;
        }
        if (p != null) {
            p.failovers.increment();
            failovers.increment();
            if (s != null && (s.equals(Status.ANA_INACCESSIBLE) || s.equals(Status.ANA_TRANSITION)
                    || s.equals(Status.ANA_PERSISTENT_LOSS))) {
                refreshAna(p); // out of use for now; the log says what it is
            }
            LOG.log(System.Logger.Level.DEBUG, "multipath: {0} failed over from {1}: {2}", c.name(), p.uri,
                    s != null ? s.name() : cause);
        }
        route(c, p);
        return true;
    }

    /**
     * A tick in 50 ms, unless one is due: an idle set schedules nothing; commands waiting for a
     * path, a path that reconnected, and an ANA log still to read each keep the ticks coming.
     */
    private void wake() {
        if (!closed && ticking.compareAndSet(false, true)) {
            try {
                exec.schedule(this::tick, TICK_MILLIS, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                // closed meanwhile
            }
        }
    }

    /** Paths that reconnected read their ANA log again; held commands go, or fail. */
    private void tick() {
        ticking.set(false);
        for (Path p : paths) {
            Controller c = p.controller;
            // one not live yet wakes this set when it is (onReconnect)
            if (c != null && c.state() == ControllerState.LIVE && c.reconnects() != p.seenReconnects) {
                p.seenReconnects = c.reconnects();
                refreshAna(p);
            }
        }
        drainWaiting();
        boolean again;
        synchronized (waiting) {
            again = !waiting.isEmpty();
        }
        if (again) {
            wake();
        }
    }

    private void drainWaiting() {
        List<Command> ready;
        synchronized (waiting) {
            if (waiting.isEmpty()) {
                return;
            }
            ready = new ArrayList<>(waiting);
            waiting.clear();
        }
        long now = System.nanoTime();
        for (Command c : ready) {
            if (now - c.expiresAtNanos > 0) {
                c.multipath = null;
                c.completeExceptionally(new NvmeTimeoutException(c.name()
                        + " could not complete before its caller's deadline: no usable path to " + subsystemNqn));
            } else if (now - c.noPathSinceNanos > noPathTimeoutNanos) {
                c.multipath = null;
                c.completeExceptionally(new IOException("no usable path to " + subsystemNqn + " for "
                        + TimeUnit.NANOSECONDS.toSeconds(noPathTimeoutNanos) + " s: " + this));
            } else {
                route(c, null);
            }
        }
    }

    /** Commands waiting for a usable path now. */
    public int waiting() {
        synchronized (waiting) {
            return waiting.size();
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        exec.shutdownNow();
        for (Path p : paths) {
            p.admin.shutdownNow();
        }
        List<Command> left;
        synchronized (waiting) {
            left = new ArrayList<>(waiting);
            waiting.clear();
        }
        for (Command c : left) {
            c.multipath = null;
            c.completeExceptionally(new IOException(this + " is closed"));
        }
        for (Path p : paths) {
            Controller c = p.controller;
            if (c != null) {
                c.close();
            }
        }
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder(subsystemNqn).append(" [");
        for (Path p : paths) {
            s.append(p.index == 0 ? "" : ", ").append(p.uri.host()).append(':').append(p.uri.port()).append(' ')
                    .append(p.state());
        }
        return s.append(']').toString();
    }
}
