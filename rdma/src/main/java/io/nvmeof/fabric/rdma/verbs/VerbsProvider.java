package io.nvmeof.fabric.rdma.verbs;

import static io.nvmeof.fabric.rdma.verbs.Native.MEM;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.nvmeof.fabric.rdma.AbstractRdmaConnection;
import io.nvmeof.fabric.rdma.ConnectAcceptor;
import io.nvmeof.fabric.rdma.ConnectParams;
import io.nvmeof.fabric.rdma.RdmaConnection;
import io.nvmeof.fabric.rdma.RdmaHandler;
import io.nvmeof.fabric.rdma.RdmaListener;
import io.nvmeof.fabric.rdma.RdmaProvider;
import io.nvmeof.fabric.rdma.RdmaProviderType;
import io.nvmeof.fabric.rdma.RdmaTuning;
import io.nvmeof.fabric.rdma.RdmaUnavailableException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;

/**
 * The {@code verbs} provider: rdma-core's librdmacm and libibverbs, called through jnr-ffi and
 * jffi, no native code of our own. Works on every RNIC rdma-core drives (InfiniBand, RoCE,
 * iWARP) and on the kernel's soft-RoCE ({@code rdma_rxe}).
 *
 * <p>Threads: one daemon thread per provider waits on the rdma_cm event channel, copies and
 * acknowledges each event, then dispatches it (connect requests to the listener's acceptor on
 * that thread, everything else to the connection's event loop). One daemon thread per
 * (event loop, device) waits on a completion channel and hands CQ drains to the event loop.
 * Busy polling ({@link #open(EventLoopGroup, boolean)}: the target's {@code rdma_busy_poll}, the
 * host's {@code ConnectOptions.rdmaBusyPoll}) arms no CQ: each connection's event loop polls its
 * CQ in a task that re-schedules itself.
 *
 * <p>Memory: one protection domain per device ({@code ibv_alloc_pd} once per
 * {@code ibv_context}); {@link RdmaConnection#pd()} of every connection on that device is it.
 */
public final class VerbsProvider implements RdmaProvider {
    private static final System.Logger LOG = System.getLogger(VerbsProvider.class.getName());
    private static final int POLL_MS = 250;
    private static final int BACKLOG = 128;
    static final String NO_DEVICE = "no RDMA device: ibv_get_device_list found none (load the RNIC's driver; "
            + "for soft-RoCE: modprobe rdma_rxe && rdma link add rxe0 type rxe netdev <eth0>)";
    static final String NO_RDMA_CM = "/dev/infiniband/rdma_cm is missing: modprobe rdma_ucm ib_uverbs";

    /** What the CM thread dispatches an event to, by rdma_cm id. */
    interface CmTarget {
        void onCmEvent(CmEvent e);
    }

    final Native.Libs libs;
    final boolean busyPoll;
    private final EventLoopGroup group;
    private final long channel;
    private final Thread cmThread;
    private final Map<Long, CmTarget> ids = new ConcurrentHashMap<>();
    private final Map<Long, VerbsDevice> devices = new HashMap<>();                 // by ibv_context*, under this
    private final Map<ChannelKey, CompletionChannel> channels = new HashMap<>();    // under this
    private final Set<VerbsConnection> connections = ConcurrentHashMap.newKeySet();
    private final Set<VerbsListener> listeners = ConcurrentHashMap.newKeySet();
    private volatile boolean closing;
    private volatile boolean stopped;

    private record ChannelKey(EventLoop loop, long context) {
    }

    private VerbsProvider(Native.Libs libs, EventLoopGroup group, long channel, boolean busyPoll) {
        this.libs = libs;
        this.group = group;
        this.channel = channel;
        this.busyPoll = busyPoll;
        this.cmThread = new Thread(this::runCm, "verbs-cm");
        cmThread.setDaemon(true);
    }

    /** Opens the provider, waiting for completion events (no busy polling). */
    public static VerbsProvider open(EventLoopGroup group) throws RdmaUnavailableException {
        return open(group, RdmaTuning.DEFAULTS.busyPoll());
    }

    /**
     * Opens the provider, whose connections deliver on loops of {@code group}. Fails with one
     * message when rdma-core is not installed, no RDMA device exists or the rdma_cm device node
     * is missing.
     */
    public static VerbsProvider open(EventLoopGroup group, boolean busyPoll) throws RdmaUnavailableException {
        Native.Libs libs = Native.libs();
        checkDevices(libs);
        long ch = libs.cm.rdma_create_event_channel();
        if (ch == 0) {
            throw new RdmaUnavailableException(libs.error("rdma_create_event_channel") + " (is rdma_ucm loaded and "
                    + "/dev/infiniband/rdma_cm accessible?)");
        }
        VerbsProvider p = new VerbsProvider(libs, group, ch, busyPoll);
        p.cmThread.start();
        return p;
    }

    private static void checkDevices(Native.Libs libs) throws RdmaUnavailableException {
        long num = Native.calloc(8);
        try {
            long list = libs.ib.ibv_get_device_list(num);
            int n = list == 0 ? 0 : MEM.getInt(num);
            if (list != 0) {
                libs.ib.ibv_free_device_list(list);
            }
            if (n == 0) {
                throw new RdmaUnavailableException(NO_DEVICE);
            }
        } finally {
            Native.free(num);
        }
        if (!Files.exists(Path.of("/dev/infiniband/rdma_cm"))) {
            throw new RdmaUnavailableException(NO_RDMA_CM);
        }
    }

    @Override
    public String name() {
        return "verbs";
    }

    /** Native blocks this provider's code has allocated and not freed, in this process (tests check it returns to 0). */
    public static int liveNativeBlocks() {
        return Native.liveAllocations();
    }

    // ---- listen / connect

    @Override
    public RdmaListener listen(InetSocketAddress address, ConnectAcceptor acceptor) throws IOException {
        ensureOpen();
        long id = createId();
        long sa = 0;
        try {
            sa = SockAddr.allocate(address);
            if (libs.cm.rdma_bind_addr(id, sa) != 0) {
                throw new IOException(libs.error("rdma_bind_addr(" + address + ")"));
            }
            if (libs.cm.rdma_listen(id, BACKLOG) != 0) {
                throw new IOException(libs.error("rdma_listen(" + address + ")"));
            }
        } catch (IOException | RuntimeException e) {
            libs.cm.rdma_destroy_id(id);
            throw e;
        } finally {
            Native.free(sa);
        }
        InetSocketAddress bound = SockAddr.read(id + Abi.CM_ID_SRC_ADDR);
        VerbsDevice dev = prepareDevice(MEM.getAddress(id + Abi.CM_ID_VERBS));
        VerbsListener l = new VerbsListener(this, id, acceptor, bound != null ? bound : address, dev);
        listeners.add(l);
        ids.put(id, l);
        return l;
    }

    @Override
    public CompletableFuture<RdmaConnection> connect(InetSocketAddress address, ConnectParams params, RdmaHandler handler) {
        CompletableFuture<RdmaConnection> future = new CompletableFuture<>();
        long id;
        try {
            ensureOpen();
            id = createId();
        } catch (IOException e) {
            future.completeExceptionally(e);
            return future;
        }
        VerbsConnection c = new VerbsConnection(this, nextLoop(), handler, id, address, params, future);
        connections.add(c);
        ids.put(id, c);
        try {
            c.eventLoop().execute(c::startConnect);
        } catch (RejectedExecutionException e) {
            c.destroy();
            future.completeExceptionally(new IOException("the event loop group is shut down", e));
        }
        return future;
    }

    private long createId() throws IOException {
        long out = Native.calloc(8);
        try {
            if (libs.cm.rdma_create_id(channel, out, 0, Abi.PS_TCP) != 0) {
                throw new IOException(libs.error("rdma_create_id"));
            }
            return MEM.getAddress(out);
        } finally {
            Native.free(out);
        }
    }

    private void ensureOpen() throws IOException {
        if (closing) {
            throw new IOException("the verbs provider is closed");
        }
    }

    // ---- shared state for listeners, requests and connections

    EventLoop nextLoop() {
        return group.next();
    }

    void register(long id, CmTarget t) {
        ids.put(id, t);
    }

    void forget(long id) {
        ids.remove(id);
    }

    void track(VerbsConnection c) {
        connections.add(c);
    }

    void untrack(VerbsConnection c) {
        connections.remove(c);
    }

    void untrack(VerbsListener l) {
        listeners.remove(l);
    }

    /** The device of {@code context}, opened (PD allocated, limits queried) the first time. */
    synchronized VerbsDevice device(long context) throws IOException {
        if (context == 0) {
            throw new IOException("the rdma_cm id is not bound to an RDMA device");
        }
        VerbsDevice d = devices.get(context);
        if (d == null) {
            d = VerbsDevice.open(libs, context);
            devices.put(context, d);
        }
        return d;
    }

    /**
     * A listener bound to one device (not a wildcard address) opens it now, with its protection
     * domain and a completion channel per event loop, so that the first connect request is
     * answered without that work: RDMA hosts give up on an unanswered connect soon (SPDK after
     * 1 s). Failures here are left for the connect request to meet and report.
     */
    private VerbsDevice prepareDevice(long context) {
        if (context == 0) {
            return null;
        }
        try {
            VerbsDevice d = device(context);
            for (EventExecutor e : group) {
                if (e instanceof EventLoop loop) {
                    completionChannel(loop, d);
                }
            }
            return d;
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "verbs: could not prepare the device of a listener: {0}", e.getMessage());
            return null;
        }
    }

    /** The completion channel of {@code loop} on {@code device}, created (with its thread) the first time. */
    synchronized CompletionChannel completionChannel(EventLoop loop, VerbsDevice device) throws IOException {
        ChannelKey k = new ChannelKey(loop, device.context);
        CompletionChannel c = channels.get(k);
        if (c == null) {
            c = new CompletionChannel(libs, device, "verbs-cq-" + device.name + "-" + channels.size());
            channels.put(k, c);
        }
        return c;
    }

    // ---- the CM event thread

    private void runCm() {
        long fd = MEM.getInt(channel + Abi.EVENT_CHANNEL_FD);
        long scratch = Native.calloc(16);                  // struct pollfd at 0, rdma_cm_event* at 8
        try {
            MEM.putInt(scratch, (int) fd);
            MEM.putShort(scratch + 4, (short) Abi.POLLIN);
            while (!stopped) {
                MEM.putShort(scratch + 6, (short) 0);
                if (libs.c.poll(scratch, 1, POLL_MS) <= 0) {
                    continue;
                }
                if (libs.cm.rdma_get_cm_event(channel, scratch + 8) != 0) {
                    continue;
                }
                long ev = MEM.getAddress(scratch + 8);
                CmEvent e = CmEvent.read(ev);
                CmTarget t = ids.get(e.type() == Abi.EV_CONNECT_REQUEST ? e.listenId() : e.id());
                libs.cm.rdma_ack_cm_event(ev);                 // rdma_destroy_id waits for this ack
                dispatch(e, t);
            }
        } finally {
            Native.free(scratch);
        }
    }

    private void dispatch(CmEvent e, CmTarget t) {
        if (t == null) {
            if (e.type() == Abi.EV_CONNECT_REQUEST) {         // the listener is gone
                libs.cm.rdma_reject(e.id(), 0, 0);
                libs.cm.rdma_destroy_id(e.id());
            }
            return;
        }
        try {
            t.onCmEvent(e);
        } catch (RuntimeException | Error x) {
            LOG.log(System.Logger.Level.WARNING, "verbs: handling rdma_cm " + e.describe() + " failed", x);
        }
    }

    // ---- close

    /**
     * Stops listening, ends every connection (bounded by the disconnect wait), then frees the
     * devices' protection domains (deregistering what is still registered), the completion
     * channels and the event channel.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closing) {
                return;
            }
            closing = true;
        }
        for (VerbsListener l : listeners.toArray(new VerbsListener[0])) {
            l.close();
        }
        for (CmTarget t : ids.values().toArray(new CmTarget[0])) {
            if (t instanceof VerbsConnectRequest r) {
                r.shutdown();
            }
        }
        for (VerbsConnection c : connections) {
            c.shutdown(new IOException("the verbs provider was closed"));
        }
        long deadline = System.nanoTime() + (AbstractRdmaConnection.QUIET_WAIT_MS + 2000) * 1_000_000L;
        while (!connections.isEmpty() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        stopped = true;
        synchronized (this) {
            for (CompletionChannel c : channels.values()) {
                c.stop();
            }
        }
        if (Thread.currentThread() != cmThread) {
            try {
                cmThread.join(4 * POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (this) {
            for (CompletionChannel c : channels.values()) {
                c.close();
            }
            channels.clear();
            for (VerbsDevice d : devices.values()) {
                d.close();
            }
            devices.clear();
        }
        if (!cmThread.isAlive()) {
            libs.cm.rdma_destroy_event_channel(channel);
        }
    }

    @Override
    public String toString() {
        return "verbs provider" + (busyPoll ? " (busy poll)" : "");
    }

    /** {@code verbs} as a provider type, found by {@link io.nvmeof.fabric.rdma.RdmaProviders} (busy polling as {@link io.nvmeof.fabric.rdma.RdmaTuning#busyPoll} says). */
    public static final class Type extends RdmaProviderType {
        public Type() {
            super("verbs", (group, tuning) -> VerbsProvider.open(group, tuning.busyPoll()));
        }
    }
}
