package io.nvmeof.fabric.rdma.disni;

import io.nvmeof.fabric.rdma.RdmaTuning;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.nvmeof.fabric.rdma.ConnectAcceptor;
import io.nvmeof.fabric.rdma.ConnectParams;
import io.nvmeof.fabric.rdma.ConnectRequest;
import io.nvmeof.fabric.rdma.RdmaConnection;
import io.nvmeof.fabric.rdma.RdmaHandler;
import io.nvmeof.fabric.rdma.RdmaListener;
import io.nvmeof.fabric.rdma.RdmaProvider;
import io.nvmeof.fabric.rdma.RdmaProviderType;
import io.nvmeof.fabric.rdma.RdmaUnavailableException;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The {@code disni} provider: a thin adapter from IBM DiSNI 2.1's Java verbs API ({@code
 * com.ibm.disni.verbs}) to the verbs SPI. See the package documentation for what DiSNI cannot
 * do and how this provider copes.
 *
 * <p>Threads: one daemon CM thread owns the {@code RdmaEventChannel} and makes every
 * connection-management call (DiSNI's event channel keeps its ids in a plain {@code HashMap}
 * that {@code createId} and {@code getCmEvent} both change); it waits for events with a short
 * timeout and runs queued tasks in between. Each device's completion queues have a daemon thread
 * each ({@link CompletionQueue}). Completions and disconnects reach handlers on the connection's
 * event loop ({@code group.next()} per connection), where the posts are made.
 */
public final class DisniProvider implements RdmaProvider {
    private static final System.Logger LOG = System.getLogger(DisniProvider.class.getName());
    private static final int CM_POLL_MS = 20;
    private static final int BACKLOG = 128;
    private static final int DEFAULT_TIMEOUT_MS = 5000;
    private static final int CLOSE_WAIT_MS = 5000;

    /**
     * RDMA READs an accepting side assumes it may have outstanding toward the requester. DiSNI
     * shows neither the requester's responder resources nor lets the accept set the initiator
     * depth (its native accept uses the device's maximum), so only 1 is safe for every peer;
     * {@link RdmaTuning#disniInitiatorDepth} (the target's {@code disni_initiator_depth}) raises it
     * where the hosts are known to allow N.
     */
    final int assumedInitiatorDepth;
    /** Entries of a shared completion queue ({@link RdmaTuning#disniCqSize}); a connection needing more gets its own. */
    private final int cqSize;

    /** Receives the CM events of one id; CM thread. */
    interface CmEndpoint {
        void onCmEvent(int event);

        /** The provider is closing: destroy what is left of this id, without waiting. */
        void abandonOnClose();
    }

    private final EventLoopGroup group;
    private final RdmaEventChannel channel;
    private final Thread cmThread;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private volatile boolean running = true;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** By CM id (DiSNI hands out one Java object per native id); CM thread only. */
    private final Map<RdmaCmId, CmEndpoint> endpoints = new IdentityHashMap<>();
    /** By command file descriptor; CM thread only. */
    private final Map<Integer, DisniDevice> devices = new HashMap<>();
    final Set<DisniConnection> connections = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean warnedAcceptData = new AtomicBoolean();
    private final AtomicBoolean warnedReject = new AtomicBoolean();

    private DisniProvider(EventLoopGroup group, RdmaEventChannel channel, RdmaTuning tuning) {
        this.group = group;
        this.assumedInitiatorDepth = tuning.disniInitiatorDepth();
        this.cqSize = tuning.disniCqSize();
        this.channel = channel;
        this.cmThread = new Thread(this::cmLoop, "disni-cm");
        cmThread.setDaemon(true);
        cmThread.start();
    }

    /**
     * Opens the provider, whose connections deliver on loops of {@code group}. Fails at once,
     * with one message that says what is missing and how to get it, when libdisni cannot be
     * loaded, Java does not give DiSNI the access it needs, or there is no RDMA connection
     * manager. Tuned as {@link RdmaTuning#DEFAULTS}.
     */
    public static DisniProvider open(EventLoopGroup group) throws RdmaUnavailableException {
        return open(group, RdmaTuning.DEFAULTS);
    }

    /** {@link #open(EventLoopGroup)}, tuned as {@code tuning} says. */
    public static DisniProvider open(EventLoopGroup group, RdmaTuning tuning) throws RdmaUnavailableException {
        DisniAvailability.check();
        RdmaEventChannel ch;
        try {
            ch = RdmaEventChannel.createEventChannel();
        } catch (IOException | RuntimeException e) {
            throw new RdmaUnavailableException("DiSNI provider: cannot open the RDMA connection manager ("
                    + String.valueOf(e.getMessage()).trim() + "): it needs /dev/infiniband/rdma_cm (kernel module "
                    + "rdma_ucm) and an RDMA device (an RNIC, or soft-RoCE: rdma link add rxe0 type rxe netdev <if>); "
                    + DisniAvailability.ALTERNATIVES, e);
        }
        return new DisniProvider(group, ch, tuning);
    }

    @Override
    public String name() {
        return "disni";
    }

    // ---- listening ----

    @Override
    public RdmaListener listen(InetSocketAddress address, ConnectAcceptor acceptor) throws IOException {
        checkOpen();
        InetSocketAddress a = ipv4(address);
        return cmCall(() -> {
            RdmaCmId id = channel.createId(RdmaCm.RDMA_PS_TCP);
            try {
                id.bindAddr(a);
                id.listen(BACKLOG);
                InetSocketAddress local = socketAddress(id.getSource(), a);
                DisniListener l = new DisniListener(this, id, acceptor, local);
                endpoints.put(id, l);
                return l;
            } catch (IOException | RuntimeException e) {
                destroyQuietly(id);
                throw new IOException("cannot listen on " + a + " (DiSNI): " + String.valueOf(e.getMessage()).trim(), e);
            }
        });
    }

    /** Accepts {@code r} on the CM thread: queue pair, registration, {@code rdma_accept}. */
    DisniConnection accept(DisniConnectRequest r, int sendDepth, int recvDepth, int initiatorDepth, RdmaHandler handler,
                           Consumer<RdmaConnection> beforeAccept) throws IOException {
        return cmCall(() -> {
            DisniConnection c = new DisniConnection(this, group.next(), r.id, sendDepth, recvDepth, initiatorDepth,
                    handler, r.peer(), r.localAddress());
            try {
                c.createQp(device(r.id.getVerbs()));
                ConnectRequest.runBeforeAccept(c, beforeAccept);
                endpoints.put(r.id, c);
                c.accept();
                return c;
            } catch (IOException | RuntimeException e) {
                c.destroy();
                throw new IOException("cannot accept the connection from " + r.peer() + " (DiSNI): "
                        + String.valueOf(e.getMessage()).trim(), e);
            }
        });
    }

    void warnAcceptPrivateData(int length, InetSocketAddress peer) {
        if (warnedAcceptData.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.WARNING, "DiSNI cannot send accept private data: the {0} bytes for {1} are "
                    + "dropped (further cases are logged at DEBUG)", length, peer);
        } else {
            LOG.log(System.Logger.Level.DEBUG, "DiSNI cannot send accept private data: {0} bytes for {1} dropped",
                    length, peer);
        }
    }

    void warnReject(InetSocketAddress peer, int privateDataLength) {
        String msg = "DiSNI cannot send a reject: destroying the CM id of the connect request from " + peer
                + " instead (the peer sees a reject without private data, or its connect times out)"
                + (privateDataLength > 0 ? "; the " + privateDataLength + " bytes of reject private data are lost" : "");
        LOG.log(warnedReject.compareAndSet(false, true) ? System.Logger.Level.WARNING : System.Logger.Level.INFO, msg);
    }

    // ---- connecting ----

    @Override
    public CompletableFuture<RdmaConnection> connect(InetSocketAddress address, ConnectParams params, RdmaHandler handler) {
        CompletableFuture<RdmaConnection> f = new CompletableFuture<>();
        InetSocketAddress a;
        try {
            checkOpen();
            a = ipv4(address);
            if (params.sendDepth() <= 0 || params.recvDepth() <= 0) {
                throw new IllegalArgumentException("send and receive depth must be positive: " + params);
            }
            if (params.privateData() != null && params.privateData().remaining() > 255) {
                throw new IllegalArgumentException("private data of " + params.privateData().remaining()
                        + " bytes (at most 255)");
            }
        } catch (IOException | RuntimeException e) {
            f.completeExceptionally(e);
            return f;
        }
        int timeout = params.timeoutMillis() > 0 ? params.timeoutMillis() : DEFAULT_TIMEOUT_MS;
        EventLoop loop = group.next();
        cmExecute(() -> {
            RdmaCmId id = null;
            try {
                id = channel.createId(RdmaCm.RDMA_PS_TCP);
                DisniConnection c = new DisniConnection(this, loop, id, a, params, timeout, handler, f);
                endpoints.put(id, c);
                c.startConnect();
            } catch (IOException | RuntimeException e) {
                if (id != null) {
                    endpoints.remove(id);
                    destroyQuietly(id);
                }
                f.completeExceptionally(new IOException("cannot connect to " + a + " (DiSNI): "
                        + String.valueOf(e.getMessage()).trim(), e));
            }
        });
        return f;
    }

    // ---- CM thread ----

    private void cmLoop() {
        while (running) {
            runTasks();
            RdmaCmEvent ev;
            try {
                ev = channel.getCmEvent(CM_POLL_MS);
            } catch (IOException | RuntimeException e) {
                if (running) {
                    LOG.log(System.Logger.Level.ERROR, "DiSNI CM event channel failed; no more connection events", e);
                    running = false;
                }
                break;
            }
            if (ev != null) {
                dispatch(ev.getEvent(), ev.getListenIdPriv(), ev.getConnIdPriv());
            }
        }
        runTasks();
    }

    private void runTasks() {
        Runnable r;
        while ((r = tasks.poll()) != null) {
            try {
                r.run();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "DiSNI CM task failed", e);
            }
        }
    }

    private void dispatch(int event, RdmaCmId listenId, RdmaCmId connId) {
        if (event == CmEvents.CONNECT_REQUEST) {
            CmEndpoint l = listenId == null ? null : endpoints.get(listenId);
            if (l instanceof DisniListener) {
                ((DisniListener) l).onConnectRequest(connId);
            } else if (connId != null) {
                destroyQuietly(connId);
            }
            return;
        }
        CmEndpoint e = connId == null ? null : endpoints.get(connId);
        if (e == null) {
            LOG.log(System.Logger.Level.DEBUG, "{0} for an unknown CM id", CmEvents.name(event));
            return;
        }
        try {
            e.onCmEvent(event);
        } catch (RuntimeException ex) {
            LOG.log(System.Logger.Level.WARNING, "handling " + CmEvents.name(event) + " failed", ex);
        }
    }

    /** Runs {@code r} on the CM thread, soon (within one CM poll). */
    void cmExecute(Runnable r) {
        tasks.add(r);
        if (!running && !cmThread.isAlive()) {
            runTasks();
        }
    }

    /** Runs {@code r} on the CM thread: now when called there, else soon. */
    void onCm(Runnable r) {
        if (Thread.currentThread() == cmThread) {
            r.run();
        } else {
            cmExecute(r);
        }
    }

    /** Runs {@code c} on the CM thread and waits for it (inline when already there). */
    <T> T cmCall(Callable<T> c) throws IOException {
        if (Thread.currentThread() == cmThread) {
            try {
                return c.call();
            } catch (IOException | RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IOException(e);
            }
        }
        if (!running) {
            throw new IOException("DiSNI provider closed");
        }
        FutureTask<T> t = new FutureTask<>(c);
        cmExecute(t);
        try {
            return t.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException) {
                throw (IOException) cause;
            }
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            throw new IOException(cause);
        }
    }

    void register(RdmaCmId id, CmEndpoint e) {
        endpoints.put(id, e);
    }

    void forget(RdmaCmId id, CmEndpoint e) {
        endpoints.remove(id, e);
    }

    /** The device of {@code context}, opened on first use; CM thread. */
    DisniDevice device(IbvContext context) throws IOException {
        if (context == null) {
            throw new IOException("the CM id is not bound to an RDMA device");
        }
        int key = context.getCmd_fd();
        DisniDevice d = devices.get(key);
        if (d == null) {
            d = new DisniDevice(context, key, cqSize);
            devices.put(key, d);
        }
        return d;
    }

    static void destroyQuietly(RdmaCmId id) {
        try {
            id.destroyId();
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "destroying a CM id: {0}", e.getMessage());
        }
    }

    static InetSocketAddress socketAddress(SocketAddress a, InetSocketAddress fallback) {
        return a instanceof InetSocketAddress ? (InetSocketAddress) a : fallback;
    }

    private static InetSocketAddress ipv4(InetSocketAddress a) throws IOException {
        if (a.isUnresolved()) {
            a = new InetSocketAddress(a.getHostString(), a.getPort());
            if (a.isUnresolved()) {
                throw new IOException("cannot resolve " + a.getHostString());
            }
        }
        if (!(a.getAddress() instanceof Inet4Address)) {
            throw new IOException("DiSNI handles IPv4 addresses only, not " + a);
        }
        return a;
    }

    private void checkOpen() throws IOException {
        if (closed.get()) {
            throw new IOException("DiSNI provider closed");
        }
    }

    // ---- closing ----

    /**
     * Stops listening, disconnects what is left (handlers hear of it), waits a while for the
     * queue pairs to flush (not when called on one of the group's loops), then destroys the
     * devices' resources and stops the threads.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        List<DisniConnection> open = new ArrayList<>();
        try {
            cmCall(() -> {
                for (CmEndpoint e : new ArrayList<>(endpoints.values())) {
                    if (e instanceof DisniListener) {
                        ((DisniListener) e).close();
                    }
                }
                open.addAll(connections);
                return null;
            });
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing listeners: {0}", e.getMessage());
        }
        for (DisniConnection c : open) {
            c.close();
        }
        if (!onGroupLoop()) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MS);
            while (!connections.isEmpty() && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        try {
            cmCall(() -> {
                for (CmEndpoint e : new ArrayList<>(endpoints.values())) {
                    e.abandonOnClose();
                }
                endpoints.clear();
                for (DisniDevice d : devices.values()) {
                    d.close();
                }
                devices.clear();
                return null;
            });
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "releasing DiSNI resources: {0}", e.getMessage());
        }
        running = false;
        if (Thread.currentThread() != cmThread) {
            try {
                cmThread.join(CM_POLL_MS * 50L);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (!cmThread.isAlive()) {
            try {
                channel.destroyEventChannel();
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "destroying the CM event channel: {0}", e.getMessage());
            }
        }
    }

    private boolean onGroupLoop() {
        for (EventExecutor e : group) {
            if (e.inEventLoop()) {
                return true;
            }
        }
        return Thread.currentThread() == cmThread;
    }

    @Override
    public String toString() {
        return "DiSNI RDMA provider";
    }

    /** {@code disni} as a provider type, found by {@link io.nvmeof.fabric.rdma.RdmaProviders}. */
    public static final class Type extends RdmaProviderType {
        public Type() {
            super("disni", DisniProvider::open);
        }
    }
}
