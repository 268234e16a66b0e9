package io.nvmeof.initiator;

import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.nvmeof.fabric.tls.TlsSession;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.IdentifyCns;
import io.nvmeof.protocol.IdentifyController;
import io.nvmeof.protocol.IdentifyNamespace;
import io.nvmeof.protocol.LogPage;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.protocol.Registers;
import io.nvmeof.protocol.Status;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A host-side NVMe-oF controller: an admin queue and I/O queues to one subsystem, brought
 * up the way the spec and the Linux host do it (Connect, CAP/VS, CC.EN, CSTS.RDY, Identify,
 * Number of Queues, I/O queue Connects) and kept alive at KATO/2. Commands spread over the
 * I/O queues without a global lock. Thread-safe; {@link #close()} shuts the controller
 * down (CC.SHN) and always returns.
 */
public final class Controller implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Controller.class.getName());

    private final NvmeofUri uri;
    private final ConnectOptions options;
    private final EventLoopGroup group;
    /** Whether {@link #group} is the process's shared loops, to release at close (not the caller's: {@link ConnectOptions#eventLoops}). */
    private final boolean sharedGroup;
    /** The live association (after a loss, the last one until a new one is up); null before the first. */
    private volatile Association live;
    /** The I/O queues of the live association, and which one a command goes to. */
    private final IoRouter router = new IoRouter();
    /** Moved only by {@link #move}, under this controller's lock; commands wait in {@link #parked} while recovering. */
    private volatile ControllerState state = ControllerState.NEW;
    /** The controller's thread for what is not I/O (teardown, reconnect attempts, asynchronous events): its tasks in order on the host's shared threads. */
    private final HostThreads.Serial events;
    private final List<Command> parked = new ArrayList<>();
    private final AtomicInteger reconnects = new AtomicInteger();
    private final List<Runnable> reconnectListeners = new CopyOnWriteArrayList<>();
    private long lostAtNanos;
    /** The lost association's CQT, and when it was seen to close every connection (0: it was not). */
    private long cqtNanos;
    private long quiescingSinceNanos;
    private Throwable lossCause;
    private int failedAttempts; // reconnect attempts failed since the loss: each doubles the wait for the next
    /** Namespaces handed out, kept current by namespace-change events. */
    private final Map<Integer, NamespaceDevice> devices = new ConcurrentHashMap<>();
    private final AsyncEventHandler asyncEvents = new AsyncEventHandler(this);
    /** This controller as its namespace devices see it. */
    private final IoSink sink = new IoSink() {
        @Override
        public void submitIo(Command c) {
            Controller.this.submitIo(c);
        }

        @Override
        public void checkBlockingAllowed() {
            Controller.this.checkBlockingAllowed();
        }

        @Override
        public long callerTimeoutMillis() {
            return Controller.this.callerTimeoutMillis();
        }

        @Override
        public String describe() {
            return uri.toString();
        }
    };
    private volatile boolean closed;
    private HostTransport transport;

    private Controller(NvmeofUri uri, ConnectOptions options) {
        this.uri = uri;
        this.options = options;
        this.sharedGroup = options.eventLoops == null;
        this.group = sharedGroup ? SharedLoops.acquire(options.busyPoll, options.ioEngine) : options.eventLoops;
        this.events = HostThreads.serial();
    }

    /** Moves to {@code next} by the state table ({@link ControllerState#canMoveTo}); holding the lock. */
    private void move(ControllerState next) {
        if (!state.canMoveTo(next)) {
            throw new IllegalStateException("controller " + uri + ": " + state + " -> " + next + " is not a transition");
        }
        state = next;
    }

    /** Runs {@code task} on the controller's thread (dropped once it is shut down). */
    void onControllerThread(Runnable task) {
        try {
            events.execute(task);
        } catch (RejectedExecutionException e) {
            LOG.log(System.Logger.Level.DEBUG, "controller {0} is closed; a task was dropped", uri);
        }
    }

    /**
     * Runs {@code task} on the controller's thread once the association is live: at once if it
     * is, otherwise once the recovery (which runs on that thread too) has brought it up. A task
     * that waits there for an admin command must not run before: it would hold the thread the
     * recovery needs (dropped once the controller is shut down or dead).
     */
    void onControllerThreadWhenLive(Runnable task) {
        onControllerThread(() -> {
            if (closed || state == ControllerState.DEAD) {
                return;
            }
            if (state.recovering()) {
                try {
                    events.schedule(() -> onControllerThreadWhenLive(task), 20, TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException e) {
                    // closed meanwhile
                }
                return;
            }
            task.run();
        });
    }

    /** Connects to the subsystem {@code uri} names and brings the controller up. */
    public static Controller connect(NvmeofUri uri, ConnectOptions options) throws IOException {
        Controller c = new Controller(uri, options);
        try {
            c.bringUp();
            synchronized (c) {
                if (c.closed) {
                    throw new IOException("controller " + uri + " was closed while connecting");
                }
                c.move(ControllerState.LIVE);
            }
            return c;
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    private long timeoutMillis() {
        return options.commandTimeout.toMillis();
    }

    /** Brings up a new association and publishes it: the hooks of its queues, its I/O queues, its events. */
    private void bringUp() throws IOException {
        Association assoc = Association.establish(this, transport());
        if (!isDiscovery()) {                  // a discovery controller is one-shot: no recovery, no events
            InetSocketAddress address = uri.address();
            for (HostQueue q : assoc.ioQueues) {
                q.onOrphans((c, t) -> orphaned(q, c, t));
                q.onTimeout(this::abort);
                q.closeFuture().whenComplete((v, f) -> connectionLost(q, new IOException("I/O queue " + q.qid() + " to "
                        + address + " closed")));
            }
            assoc.admin.closeFuture().whenComplete((v, f) -> connectionLost(assoc.admin,
                    new IOException("admin queue to " + address + " closed")));
        }
        router.queues(assoc.ioQueues);
        this.live = assoc;
        asyncEvents.start(assoc.admin, assoc.identify); // a discovery controller's: log change notices
        LOG.log(System.Logger.Level.DEBUG, "connected to {0}: cntlid {1}, {2} I/O queues of {3}", uri, assoc.cntlid,
                assoc.ioQueues.length, assoc.queueSize);
    }

    /** The transport of this controller, created with its first queue. */
    private synchronized HostTransport transport() {
        if (transport == null) {
            transport = uri.transportType().create(uri, group, options);
        }
        return transport;
    }

    // ---- connection loss and recovery ----

    /**
     * A queue's connection ended. Unless the controller is closing, the association is torn
     * down and rebuilt every reconnect delay until the controller loss timeout; commands wait.
     */
    private void connectionLost(HostQueue q, Throwable cause) {
        synchronized (this) {
            if (closed || state != ControllerState.LIVE || !current(q)) {
                return; // a queue of an association already given up
            }
            if (options.controllerLossTimeout.toMillis() <= 0) {
                // no recovery wanted: the controller is lost for good
                move(ControllerState.DELETING);
                move(ControllerState.DEAD);
                lossCause = cause;
                onControllerThread(this::tearDown);
                return;
            }
            startRecovery(cause);
        }
    }

    /** Whether {@code q} belongs to the live association. */
    private boolean current(HostQueue q) {
        Association a = live;
        return a != null && a.owns(q);
    }

    /** A command its dead queue could not finish: it waits for the reconnect, then runs again. */
    private void orphaned(HostQueue q, Command c, Throwable cause) {
        if (c.multipath != null) {
            c.multipath.completed(c, null, cause); // another path takes it, or it waits for one
            return;
        }
        if (options.controllerLossTimeout.toMillis() <= 0) {
            c.completeExceptionally(cause); // no recovery wanted
            return;
        }
        boolean resubmit = false;
        synchronized (this) {
            if (!closed && (state == ControllerState.LIVE || state.recovering()) && !expired(c)) {
                if (state == ControllerState.LIVE && !current(q)) {
                    resubmit = true; // a stale queue's leftover: the new association takes it
                } else {
                    parked.add(c);
                    if (state == ControllerState.LIVE) {
                        startRecovery(cause); // the queue died before its close listener ran
                    }
                    return;
                }
            }
        }
        if (resubmit) {
            submitIo(c);
            return;
        }
        c.completeExceptionally(expired(c) ? new NvmeTimeoutException(c.name() + " could not complete before its caller's"
                + " deadline (connection lost: " + cause.getMessage() + ")") : lostException(cause));
    }

    private static boolean expired(Command c) {
        return c.expiresAtNanos != 0 && System.nanoTime() - c.expiresAtNanos > 0;
    }

    /** LIVE -> RESETTING (holding the lock); the controller's thread tears down and reconnects. */
    private void startRecovery(Throwable cause) {
        move(ControllerState.RESETTING);
        lostAtNanos = System.nanoTime();
        lossCause = cause;
        failedAttempts = 0;
        LOG.log(System.Logger.Level.WARNING, "lost the connection to " + uri + " (" + cause.getMessage()
                + "); reconnecting in " + options.reconnectDelayMillis(0) + " ms, then at most every "
                + options.reconnectDelay.toMillis() + " ms for up to " + options.controllerLossTimeout.toSeconds() + " s");
        onControllerThread(this::reset);
    }

    private IOException lostException(Throwable cause) {
        if (closed) {
            return new IOException("controller " + uri + " is closed");
        }
        return new IOException("lost the connection to " + uri + " for longer than the controller loss timeout ("
                + options.controllerLossTimeout.toSeconds() + " s): " + (cause != null ? cause.getMessage() : "unknown"),
                cause);
    }

    /** RESETTING: the old association goes; CONNECTING: the first attempt after the reconnect delay. */
    private void reset() {
        Association old = live;
        long confirmed = tearDown(options.keepAlive.toMillis());
        synchronized (this) {
            cqtNanos = old == null ? 0 : TimeUnit.MILLISECONDS.toNanos(old.cqtMillis());
            quiescingSinceNanos = confirmed;
        }
        synchronized (this) {
            if (closed || state != ControllerState.RESETTING) {
                return;
            }
            move(ControllerState.CONNECTING);
        }
        scheduleAttempt();
    }

    private void scheduleAttempt() {
        try {
            events.schedule(this::reconnectAttempt, options.reconnectDelayMillis(failedAttempts), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closed meanwhile: close() fails what waits
        }
    }

    /** CONNECTING: one attempt at a new association; the next one is scheduled if it fails. */
    private void reconnectAttempt() {
        List<Command> fail = null;
        synchronized (this) {
            if (closed || state != ControllerState.CONNECTING) {
                return;
            }
            if (System.nanoTime() - (lostAtNanos + options.controllerLossTimeout.toNanos()) > 0) {
                move(ControllerState.DELETING);
                move(ControllerState.DEAD);
                fail = new ArrayList<>(parked);
                parked.clear();
            }
        }
        if (fail != null) {
            IOException e = lostException(lossCause);
            for (Command c : fail) {
                c.completeExceptionally(e);
            }
            LOG.log(System.Logger.Level.WARNING, e.getMessage());
            return;
        }
        try {
            bringUp();
        } catch (IOException | RuntimeException e) {
            tearDown();
            synchronized (this) {
                failedAttempts++;
            }
            LOG.log(System.Logger.Level.INFO, "reconnect to " + uri + " failed: " + e.getMessage() + "; next attempt in "
                    + options.reconnectDelayMillis(failedAttempts) + " ms");
            scheduleAttempt();
            return;
        }
        // Writes from the old association may still be on their way inside the target until
        // it notices the loss and stops them: wait that long before resubmitting, so an old
        // write cannot land after a newer one. A controller that reports a Command Quiesce
        // Time and was seen to close every connection has stopped them CQT after the last
        // close; otherwise it notices within KATO of the loss, then takes CQT (TP4129).
        // (With none waiting, nothing is resubmitted: a multipath set's commands went elsewhere.)
        long quiet;
        boolean waiting;
        synchronized (this) {
            waiting = !parked.isEmpty();
            quiet = (quiescingSinceNanos != 0 ? quiescingSinceNanos : lostAtNanos + options.keepAlive.toNanos())
                    + cqtNanos - System.nanoTime();
        }
        if (quiet > 0 && waiting) {
            try {
                events.schedule(this::resume, quiet, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                // closed meanwhile
            }
            return;
        }
        resume();
    }

    /** CONNECTING -> LIVE: the commands that waited run again on the new association. */
    private void resume() {
        List<Command> again;
        synchronized (this) {
            if (closed || state != ControllerState.CONNECTING) {
                return;
            }
            move(ControllerState.LIVE);
            again = new ArrayList<>(parked);
            parked.clear();
        }
        reconnects.incrementAndGet();
        reconnectListeners.forEach(Runnable::run);
        LOG.log(System.Logger.Level.WARNING, "reconnected to " + uri + " as controller " + live.cntlid + "; resubmitting "
                + again.size() + " commands");
        for (Command c : again) {
            try {
                if (expired(c)) {
                    c.completeExceptionally(new NvmeTimeoutException(c.name()
                            + " could not complete before its caller's deadline (reconnected too late)"));
                } else {
                    submitIo(c);
                }
            } catch (RuntimeException e) {
                c.completeExceptionally(new IOException(c.name() + ": " + e, e));
            }
        }
        refreshNamespaces();
        // a queue of the new association that died already starts the next round
        for (HostQueue q : router.queues()) {
            if (!q.isOpen()) {
                connectionLost(q, new IOException("I/O queue " + q.qid() + " closed during reconnect"));
            }
        }
    }

    /** Closes every connection of the live association (they may be dead already). */
    private void tearDown() {
        tearDown(0);
    }

    /** Ends the live association; returns when the controller was seen to notice, or 0 ({@link Association#tearDown}). */
    private long tearDown(long confirmMillis) {
        Association a = live;
        return a != null ? a.tearDown(confirmMillis) : 0;
    }

    /** Sends an I/O command to a queue of the live association, or parks it while reconnecting. */
    void submitIo(Command c) {
        if (c.expiresAtNanos == 0) {
            // the caller waits at most callerTimeoutMillis(): nothing may touch its buffer after that
            c.expiresAtNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(callerTimeoutMillis() - 500);
        }
        ControllerState st = state; // state first: a LIVE read then guarantees the queues of that association
        HostQueue[] qs = router.queues();
        if (!closed && st == ControllerState.LIVE && qs.length > 0) {
            router.pick(qs).submit(c);
            return;
        }
        if (c.multipath != null) {
            c.multipath.unavailable(c); // a path that cannot take it now: it waits for the set's next round
            return;
        }
        synchronized (this) {
            if (!closed && state.recovering()) {
                parked.add(c);
                return;
            }
        }
        c.completeExceptionally(closed ? new IOException("controller " + uri + " is closed")
                : qs.length == 0 && st == ControllerState.LIVE ? new IOException(uri + " has no I/O queues") : lostException(lossCause));
    }

    /** A command passed its timeout: ask the controller to abort it (Base 2.0, 5.1). */
    private void abort(int qid, int cid) {
        Association live = this.live;
        HostQueue a = live == null ? null : live.admin;
        if (a == null || !a.isOpen()) {
            return;
        }
        Command ab = Command.of("Abort", q -> q.abort(qid, cid));
        a.submit(ab);
    }

    // ---- asynchronous events ----

    /** An asynchronous event the controller reported, e.g. a namespace change. */
    public record AsyncEvent(int type, int info, int logPage, List<Integer> namespaces) {
        public boolean namespaceChanged() {
            return type == 2 && info == 0 && logPage == LogPage.CHANGED_NAMESPACE_LIST;
        }
    }

    /** Calls {@code listener} (on a controller thread) for every asynchronous event. */
    public void onEvent(Consumer<AsyncEvent> listener) {
        asyncEvents.addListener(listener);
    }

    /** Calls {@code listener} each time the controller is live again after a reconnect; it must not block. */
    void onReconnect(Runnable listener) {
        reconnectListeners.add(listener);
    }

    /** Whether {@code q} is the admin queue of the live association (and the controller is open). */
    boolean isLiveAdmin(HostQueue q) {
        Association a = live;
        return !closed && a != null && q == a.admin;
    }

    /** Re-reads the size of every namespace handed out (after a change event or a reconnect). */
    void refreshNamespaces() {
        for (NamespaceDevice d : devices.values()) {
            try {
                IdentifyNamespace ns = identifyNamespace(d.nsid());
                d.update(ns);
            } catch (IOException e) {
                LOG.log(System.Logger.Level.DEBUG, "refreshing namespace " + d.nsid() + ": " + e.getMessage());
            }
        }
    }

    /** Runs an admin command synchronously with the command timeout. */
    public Command admin(Command c) throws IOException {
        // while the association is being rebuilt, wait for it (up to the controller loss timeout)
        long deadline = System.nanoTime() + options.controllerLossTimeout.toNanos() + TimeUnit.SECONDS.toNanos(1);
        while (state.recovering() && !closed && System.nanoTime() - deadline < 0) {
            Association.sleep(20);
        }
        if (state != ControllerState.LIVE || closed) {
            throw lostException(lossCause);
        }
        return run(live.admin, c);
    }

    /**
     * Runs an I/O command as given (passthrough, like nvme-cli's io-passthru) on the next I/O
     * queue and waits for it; a status other than success throws {@link NvmeStatusException}.
     */
    public Command io(Command c) throws IOException {
        submitIo(c);
        return await(c, c.name(), callerTimeoutMillis());
    }

    /**
     * Runs a fused pair (Compare then Write, FUSE 1 and 2) back to back on one I/O queue and
     * waits for both; either failing throws, the first failure reported.
     */
    public void fused(Command first, Command second) throws IOException {
        backToBack(first.fuse(1), second.fuse(2));
    }

    /**
     * Runs two commands as given, adjacent on one I/O queue, and waits for both (for fused
     * pairs, and for testing how a target treats broken ones).
     */
    public void backToBack(Command first, Command second) throws IOException {
        HostQueue q = (HostQueue) ioQueue();
        q.submitFused(first, second);
        IOException failure = null;
        for (Command c : new Command[] {first, second}) {
            try {
                await(c, c.name(), callerTimeoutMillis());
            } catch (IOException e) {
                if (failure == null) {
                    failure = e;
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Blocking waits would stall the very loop that must answer them: refuse them there. */
    void checkBlockingAllowed() {
        for (EventExecutor e : group) {
            if (e.inEventLoop()) {
                throw new IllegalStateException("a blocking call on an nvmeof event loop thread would wait for itself;"
                        + " use the asynchronous or callback forms in completions");
            }
        }
    }

    Command run(Queue q, Command c) throws IOException {
        checkBlockingAllowed();
        q.submit(c);
        return await(c, c.name(), callerTimeoutMillis());
    }

    /**
     * How long a caller waits: longer than the queue takes to notice a timeout (command timeout
     * plus a tenth), so the queue, which fails the connection and so stops all use of the
     * caller's buffer, always reports first.
     */
    long callerTimeoutMillis() {
        // a reset queue's commands fail once the transport has quiesced it (RDMA: its queue pair)
        long quiesce = transport().quiesceMillis();
        return timeoutMillis() * 3 / 2 + 1000 + quiesce + Math.max(0, options.controllerLossTimeout.toMillis());
    }

    static <T> T await(CompletableFuture<T> f, String what, long timeoutMillis) throws IOException {
        try {
            return f.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException(what + " interrupted");
        } catch (TimeoutException e) {
            throw new IOException(what + " timed out after " + timeoutMillis + " ms");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            while (c instanceof CompletionException && c.getCause() != null) {
                c = c.getCause();
            }
            if (c instanceof NvmeStatusException s) {
                throw new NvmeStatusException(what, s.status(), s.fabricsCommand());
            }
            if (c instanceof IOException io) {
                throw new IOException(io.getMessage(), io);
            }
            throw new IOException(what + " failed: " + c, c);
        }
    }

    /** Connected to the discovery subsystem rather than an NVM subsystem. */
    public boolean isDiscovery() {
        return Nqn.DISCOVERY.equals(uri.subsystemNqn());
    }

    /** The I/O queue for the caller's next command ({@link IoRouter}). */
    Queue ioQueue() throws IOException {
        HostQueue[] qs = router.queues();
        if (state != ControllerState.LIVE || qs.length == 0) {
            throw new IOException("controller " + uri + " has no live I/O queue (" + state + ")");
        }
        return router.pick(qs);
    }

    /** Active namespace IDs, ascending. */
    public List<Integer> activeNamespaces() throws IOException {
        List<Integer> ids = new ArrayList<>();
        int after = 0;
        while (true) {
            ByteBuffer page = Flyweight.allocate(IdentifyCns.DATA_SIZE);
            run(live.admin, Association.identifyCommand(IdentifyCns.ACTIVE_NAMESPACE_LIST, after, page));
            int count = 0;
            for (int at = 0; at < IdentifyCns.DATA_SIZE; at += 4) {
                int nsid = page.getInt(at);
                if (nsid == 0) {
                    break;
                }
                ids.add(nsid);
                after = nsid;
                count++;
            }
            if (count < IdentifyCns.DATA_SIZE / 4) {
                return ids;
            }
        }
    }

    /** Identify Namespace data for {@code nsid}. */
    public IdentifyNamespace identifyNamespace(int nsid) throws IOException {
        ByteBuffer page = Flyweight.allocate(IdentifyCns.DATA_SIZE);
        run(live.admin, Association.identifyCommand(IdentifyCns.NAMESPACE, nsid, page));
        return new IdentifyNamespace().wrap(page, 0);
    }

    /** A block device for namespace {@code nsid}; the same object each time, its size kept current. */
    public BlockDevice namespace(int nsid) throws IOException {
        if (isDiscovery()) {
            throw new IllegalStateException(uri + " names no subsystem, so this is the discovery controller, which has"
                    + " no namespaces: put the subsystem's NQN in the URI (nvme+tcp://HOST:PORT/NQN), or list the"
                    + " subsystems there with Nvmeof.discover(\"" + uri + "\")");
        }
        if (nsid == 0 || nsid == -1) {
            throw new IllegalArgumentException("NSID " + Integer.toUnsignedString(nsid) + " is not a namespace: NSIDs"
                    + " of namespaces start at 1 (0 means none, 0xFFFFFFFF every namespace)");
        }
        IdentifyNamespace ns;
        try {
            ns = identifyNamespace(nsid);
        } catch (NvmeStatusException e) {
            if (e.status().sct() == Status.SCT_GENERIC && (e.status().sc() == Status.INVALID_NAMESPACE.sc()
                    || e.status().sc() == Status.INVALID_FIELD.sc())) {
                throw new IOException("no namespace " + Integer.toUnsignedString(nsid) + " in " + uri.subsystemNqn()
                        + " (the controller refused to identify it: " + e.status() + ")", e);
            }
            throw e;
        }
        int blockSize = checkedBlockSize(ns, "namespace " + Integer.toUnsignedString(nsid) + " of " + uri.subsystemNqn());
        NamespaceDevice d = devices.computeIfAbsent(nsid, n -> new NamespaceDevice(sink, n, ns.nsze(), blockSize,
                maxTransferBytes(blockSize)));
        d.update(ns);
        return d;
    }

    /**
     * The block size of a namespace as its Identify Namespace data gives it, checked: active
     * (NSZE not 0), FLBAS naming one of the NLBAF + 1 formats, LBADS from 512 bytes to 64 KiB
     * (the NVM Command Set allows no less than 9), and a capacity in bytes that fits in a long.
     * Whatever a target sends, a namespace it describes wrongly is an IOException naming the field.
     */
    static int checkedBlockSize(IdentifyNamespace ns, String what) throws IOException {
        if (ns.nsze() == 0) {
            throw new IOException(what + " is not active");
        }
        int format = ns.flbas() & 0xf;
        if (format > ns.nlbaf()) {
            throw new IOException(what + ": FLBAS selects LBA format " + format + " of " + (ns.nlbaf() + 1));
        }
        int lbads = ns.lbaDataSizeLog2(format);
        if (lbads < 9 || lbads > 16) {
            throw new IOException(what + ": LBADS " + lbads + " (block size 2^" + lbads + ") is not 9 to 16");
        }
        if (ns.nsze() < 0 || ns.nsze() > Long.MAX_VALUE >>> lbads) {
            throw new IOException(what + ": NSZE " + Long.toUnsignedString(ns.nsze()) + " blocks of " + (1 << lbads)
                    + " bytes is beyond 2^63 bytes");
        }
        return 1 << lbads;
    }

    /** Block devices for every active namespace. */
    public List<BlockDevice> namespaces() throws IOException {
        List<BlockDevice> all = new ArrayList<>();
        for (int nsid : activeNamespaces()) {
            all.add(namespace(nsid));
        }
        return all;
    }

    /** The largest transfer of one command: MDTS (2^n pages of CAP.MPSMIN), at most 1 MiB and 65536 blocks. */
    int maxTransferBytes(int blockSize) {
        long limit = 1 << 20;
        Association a = live;
        int mdts = a.identify.mdts();
        if (mdts > 0) {
            long page = 1L << (12 + Registers.capMpsMin(a.cap));
            limit = Math.min(limit, page << mdts);
        }
        limit = Math.min(limit, 65536L * blockSize);
        return (int) Math.max(blockSize, limit - limit % blockSize);
    }

    /** Identify Controller data, as read at bring-up. */
    public IdentifyController identify() {
        return live.identify;
    }

    public long cap() {
        return live.cap;
    }

    public int version() {
        return live.version;
    }

    public int cntlid() {
        return live.cntlid;
    }

    /** The secure channel of the live association's admin queue (NVMe/TCP over TLS), or null when in the clear. */
    public TlsSession secureChannel() {
        Association a = live;
        return a != null && a.admin instanceof TcpQueue t ? t.tlsSession() : null;
    }

    /** How the admin queue of the live association was authenticated, or null if the controller asked for none. */
    public Authenticated authentication() {
        Association a = live;
        return a == null ? null : a.admin.authenticated;
    }

    /**
     * Authenticates again (DH-HMAC-CHAP), the admin queue first and then every I/O queue, with the
     * keys of {@link ConnectOptions}, as the kernel does when its key changes. I/O goes on
     * meanwhile; a failure is thrown, and the controller may then end the association.
     */
    public Authenticated reauthenticate() throws IOException {
        Association a = live;
        if (a == null || state != ControllerState.LIVE) {
            throw new IOException("controller " + uri + " is not live");
        }
        String host = options.identity().hostNqn();
        Authenticated how = HostAuthentication.authenticate(this, a.admin, host, uri.subsystemNqn(), options);
        a.admin.authenticated = how;
        for (HostQueue q : a.ioQueues) {
            q.authenticated = HostAuthentication.authenticate(this, q, host, uri.subsystemNqn(), options);
        }
        return how;
    }

    /** Where the controller is (for tests of its recovery). */
    ControllerState state() {
        return state;
    }

    /** How many times the controller reconnected after losing its connection. */
    public int reconnects() {
        return reconnects.get();
    }

    public int ioQueueCount() {
        return router.queues().length;
    }

    boolean isClosed() {
        return closed;
    }

    ConnectOptions options() {
        return options;
    }

    public NvmeofUri uri() {
        return uri;
    }

    /** Normal shutdown (CC.SHN), then every connection closes. Always returns. */
    @Override
    public void close() {
        List<Command> waiting;
        ControllerState was;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            was = state;
            if (state != ControllerState.DEAD) {
                move(ControllerState.DELETING);
            }
            waiting = new ArrayList<>(parked);
            parked.clear();
        }
        for (Command c : waiting) {
            c.completeExceptionally(new IOException("controller " + uri + " closed"));
        }
        Association current = live;
        if (current != null) {
            current.stopKeepAlive();
        }
        boolean onLoop = false;
        for (EventExecutor e : group) {
            onLoop |= e.inEventLoop();
        }
        // a reconnect attempt under way stops (its queues are closed by the attempt itself)
        events.shutdownNow();
        if (onLoop) {
            // closing from a completion: no waiting here; the rest happens on its own thread
            Thread t = new Thread(() -> {
                awaitControllerThread();
                tearDown();
                shutdownGroup();
                closeTransport();
                dead();
            }, "nvmeof-close");
            t.setDaemon(true);
            t.start();
            return;
        }
        try {
            awaitControllerThread();
            if (current != null && current.admin.isOpen() && was == ControllerState.LIVE) {
                HostQueue a = current.admin;
                a.submit(Association.propertySet(Registers.CC, Registers.ccEnable() | Registers.CC_SHN_NORMAL));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
                while (System.nanoTime() < deadline) {
                    Command get = Association.propertyGet(Registers.CSTS, 4);
                    a.submit(get);
                    int csts = (int) await(get, "shutdown", 2000).result();
                    if (Registers.cstsShst(csts) == 2) {
                        break;
                    }
                    Association.sleep(10);
                }
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "shutdown of " + uri + " incomplete: " + e.getMessage());
        }
        tearDown();
        shutdownGroup();
        closeTransport();
        dead();
    }

    private void shutdownGroup() {
        if (sharedGroup) {
            SharedLoops.release(group);
        }
    }

    /** Waits (bounded) for the controller's thread to finish what it was doing, unless this is it. */
    private void awaitControllerThread() {
        if (events.inThread()) {
            return;
        }
        try {
            events.awaitTermination(options.connectTimeout.toMillis() + 2000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private synchronized void dead() {
        if (state == ControllerState.DELETING) {
            move(ControllerState.DEAD);
        }
    }

    private synchronized void closeTransport() {
        if (transport != null) {
            transport.close();
            transport = null;
        }
    }
}
