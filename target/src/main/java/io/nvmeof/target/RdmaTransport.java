package io.nvmeof.target;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.fabric.rdma.ConnectParams;
import io.nvmeof.fabric.rdma.ConnectRequest;
import io.nvmeof.fabric.rdma.MemoryRegion;
import io.nvmeof.fabric.rdma.ProtectionDomain;
import io.nvmeof.fabric.rdma.RdmaConnection;
import io.nvmeof.fabric.rdma.RdmaHandler;
import io.nvmeof.fabric.rdma.RdmaListener;
import io.nvmeof.fabric.rdma.RdmaProvider;
import io.nvmeof.fabric.rdma.RdmaProviders;
import io.nvmeof.fabric.rdma.RegisteredBufferPool;
import io.nvmeof.fabric.rdma.WorkCompletion;
import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.CompletionQueueEntry;
import io.nvmeof.protocol.ConnectData;
import io.nvmeof.protocol.DiscoveryLogEntry;
import io.nvmeof.protocol.FabricsCommandType;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.SubmissionQueueEntry;
import io.nvmeof.protocol.rdma.RdmaCmAccept;
import io.nvmeof.protocol.rdma.RdmaCmReject;
import io.nvmeof.protocol.rdma.RdmaCmRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The target's NVMe/RDMA transport: providers opened as ports need them, one registered data
 * buffer pool per protection domain, and the listeners, which validate each connect request's
 * private data (NVMe/RDMA 1.0, 3.3) and accept with CRQSIZE or reject with the spec's status.
 */
public final class RdmaTransport implements TargetTransport {
    private static final System.Logger LOG = System.getLogger(RdmaTransport.class.getName());
    /** The Linux host's admin queue depth (NVME_AQ_DEPTH), the largest admin queue accepted. */
    static final int MAX_ADMIN_QUEUE = 32;
    /** RDMA READs a queue issues at once at most (the host's responder resources cap it further). */
    static final int MAX_INITIATOR_DEPTH = 16;
    /** The rehearsal's capsule area: the SQE, then room for the response. */
    private static final int REHEARSAL_CAPSULE = 128;

    private final Target target;
    private final EventLoopGroup group;
    private final Map<String, RdmaProvider> providers = new ConcurrentHashMap<>();
    private final Map<ProtectionDomain, RegisteredBufferPool> pools = new ConcurrentHashMap<>();

    /** Gives idle registered slabs back (see {@link Target#rdmaPoolIdleMillis}). */
    private final ScheduledFuture<?> trimming;

    RdmaTransport(Target target, EventLoopGroup group) {
        this.target = target;
        this.group = group;
        long idle = target.tuning().rdmaPoolIdleMillis();
        this.trimming = group.next().scheduleWithFixedDelay(() -> trimPools(TimeUnit.MILLISECONDS.toNanos(idle)),
                idle, idle, TimeUnit.MILLISECONDS);
    }

    /** Deregisters the slabs of every pool that have been idle for {@code idleNanos}; returns the bytes freed. */
    long trimPools(long idleNanos) {
        long freed = 0;
        for (RegisteredBufferPool p : pools.values()) {
            freed += p.trim(idleNanos);
        }
        if (freed > 0) {
            LOG.log(System.Logger.Level.DEBUG, "gave back {0} bytes of idle registered buffers", freed);
        }
        return freed;
    }


    /** Starts listening for {@code port}. */
    @Override
    public PortListener listen(Port port) throws IOException {
        RdmaProvider provider = provider(port.option(Type.PROVIDER));
        Set<RdmaConnection> connections = ConcurrentHashMap.newKeySet();
        RdmaListener l = provider.listen(port.address(), req -> request(port, req, connections));
        warmUp(port, l);
        rehearse(provider, l.localAddress());
        return new PortListener() {
            @Override
            public InetSocketAddress localAddress() {
                return l.localAddress();
            }

            @Override
            public void close() {
                l.close();
                for (RdmaConnection c : connections) {
                    c.close();
                }
            }
        };
    }

    /**
     * Runs the accept path once before any host comes: the CM request and accept layouts, a
     * queue's registrations and its data buffer pool on the listener's protection domain. A
     * cold JVM on a slow machine otherwise spends over a second on the first connect request,
     * and RDMA hosts give up on an unanswered connect soon (SPDK after 1 s of waiting for
     * ESTABLISHED). What fails here is left for the first request to meet and report.
     */
    private void warmUp(Port port, RdmaListener l) {
        ProtectionDomain pd = l.pd();
        RdmaQueue q = new RdmaQueue(target, port, 0, MAX_ADMIN_QUEUE, SubmissionQueueEntry.SIZE);
        try {
            new RdmaCmRequest().<RdmaCmRequest>wrap(Flyweight.allocate(RdmaCmRequest.SIZE), 0).hsqsize();
            new RdmaCmAccept().<RdmaCmAccept>wrap(Flyweight.allocate(RdmaCmAccept.SIZE), 0).encode(MAX_ADMIN_QUEUE);
            if (pd != null) {
                RegisteredBufferPool pool = pool(pd);
                q.prepare(pd, pool);
                pool.allocate(4096).release();
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "warming the RDMA accept path: {0}", e.getMessage());
        } finally {
            q.release();
        }
    }

    /**
     * Connects to the port just opened as a host's admin queue would, sends a Fabrics Connect
     * to the discovery subsystem (its data fetched by RDMA READ, its response a SEND), and
     * disconnects: the whole path of a host's first minute (connection manager, queue pair,
     * receive ring, accept, RDMA READ, Connect, controller, response, the end) runs once before
     * a host comes. A cold JVM on a slow or emulated machine otherwise answered the first host
     * after SPDK's host had given up (it waits 1 s for the accept and 500 ms for the Connect).
     * A port on every address is not rehearsed (no one address to reach it at); a rehearsal
     * that fails is logged and changes nothing.
     */
    private static void rehearse(RdmaProvider provider, InetSocketAddress at) {
        if (at == null || at.getAddress() == null || at.getAddress().isAnyLocalAddress()) {
            return;
        }
        ByteBuffer cm = Flyweight.allocate(RdmaCmRequest.SIZE);
        new RdmaCmRequest().<RdmaCmRequest>wrap(cm, 0).encode(0, MAX_ADMIN_QUEUE, MAX_ADMIN_QUEUE - 1, 0xffff);
        CompletableFuture<String> answered = new CompletableFuture<>();
        CompletableFuture<Throwable> ended = new CompletableFuture<>();
        ByteBuffer buf = Flyweight.allocate(REHEARSAL_CAPSULE + ConnectData.SIZE);
        RdmaHandler host = new RdmaHandler() {
            @Override
            public void onCompletion(long wrId, int opcode, int status, int byteLength, long invalidatedRkey) {
                if (opcode == WorkCompletion.RECV) {
                    answered.complete(status != WorkCompletion.SUCCESS ? WorkCompletion.statusName(status)
                            : new CompletionQueueEntry().<CompletionQueueEntry>wrap(buf, SubmissionQueueEntry.SIZE).status()
                                    .toString());
                }
            }

            @Override
            public void onDisconnected(Throwable cause) {
                ended.complete(cause);
            }
        };
        long t0 = System.nanoTime();
        MemoryRegion mr = null;
        RdmaConnection c = null;
        try {
            c = provider.connect(at, new ConnectParams(cm, 2, 2, 1, 1, 5000), host).get(10, TimeUnit.SECONDS);
            mr = c.pd().register(buf, MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_READ);
            UUID hostId = UUID.randomUUID();
            new ConnectData().<ConnectData>wrap(buf, REHEARSAL_CAPSULE).hostId(hostId).cntlid(ConnectData.CNTLID_DYNAMIC)
                    .subsystemNqn(Nqn.DISCOVERY).hostNqn("nqn.2014-08.org.nvmexpress:uuid:" + hostId);
            new SubmissionQueueEntry().<SubmissionQueueEntry>wrap(buf, 0).opcode(AdminOpcode.FABRICS.code)
                    .psdt(SubmissionQueueEntry.PSDT_SGL_MPTR_CONTIGUOUS).cid(1).fctype(FabricsCommandType.CONNECT.code)
                    .cdw(10, 0).cdw(11, MAX_ADMIN_QUEUE - 1)
                    .sglKeyed(mr.address() + REHEARSAL_CAPSULE, ConnectData.SIZE, mr.rkey(), Sgl.KEYED_ADDRESS);
            RdmaConnection conn = c;
            MemoryRegion region = mr;
            conn.eventLoop().submit(() -> {
                conn.postRecv(1, region, SubmissionQueueEntry.SIZE, CompletionQueueEntry.SIZE);
                conn.postSend(2, region, 0, SubmissionQueueEntry.SIZE, RdmaConnection.NO_INVALIDATE);
            }).get(10, TimeUnit.SECONDS);
            String status = answered.get(10, TimeUnit.SECONDS);
            LOG.log(System.Logger.Level.INFO, "rehearsed a host connecting to {0}: {1} ms (Connect: {2})", at,
                    (System.nanoTime() - t0) / 1_000_000, status);
        } catch (ExecutionException | TimeoutException | IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "rehearsing a host connecting to {0} failed: {1}", at, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (c != null) {
                c.close();
                try {
                    ended.get(10, TimeUnit.SECONDS);     // (the queue pair is quiet: the region may go)
                } catch (ExecutionException | TimeoutException e) {
                    LOG.log(System.Logger.Level.DEBUG, "the rehearsal connection did not end: {0}", e.toString());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                if (mr != null && ended.isDone()) {
                    c.pd().deregister(mr);
                }
            }
        }
    }

    private synchronized RdmaProvider provider(String name) throws IOException {
        RdmaProvider p = providers.get(name);
        if (p == null) {
            p = RdmaProviders.open(name, group, target.tuning().rdmaTuning());
            providers.put(name, p);
        }
        return p;
    }

    private void request(Port port, ConnectRequest req, Set<RdmaConnection> connections) {
        Admission.ConnectionSlot slot = target.admission().admitConnection();
        if (slot == null) {
            reject(req, RdmaCmReject.NO_RESOURCES, target.admission().countedConnections()
                    + " connections open besides discovery controllers, the most the target takes");
            return;
        }
        boolean accepted = false;
        try {
            accepted = answer(port, req, connections, slot);
        } finally {
            if (!accepted) {
                slot.end();
            }
        }
    }

    /**
     * Rejects or accepts a request (counted in by {@link Target#admitConnection()}); true when
     * accepted, and then {@code slot} ends once the connection has ended.
     */
    private boolean answer(Port port, ConnectRequest req, Set<RdmaConnection> connections, Admission.ConnectionSlot slot) {
        ByteBuffer pd = req.privateData();
        int qid = -1;
        int size = target.tuning().maxQueueSize();
        if (pd != null) {
            if (pd.remaining() < RdmaCmRequest.SIZE) {
                reject(req, RdmaCmReject.INVALID_LENGTH, "private data of " + pd.remaining() + " bytes");
                return false;
            }
            ByteBuffer copy = Flyweight.allocate(RdmaCmRequest.SIZE);
            copy.put(0, pd, pd.position(), RdmaCmRequest.SIZE);
            RdmaCmRequest cm = new RdmaCmRequest().wrap(copy, 0);
            int max = cm.qid() == 0 ? MAX_ADMIN_QUEUE : target.tuning().maxQueueSize();
            if (cm.recfmt() != RdmaCmRequest.RECFMT_1_0) {
                reject(req, RdmaCmReject.INVALID_RECFMT, "RECFMT " + cm.recfmt());
                return false;
            }
            if (cm.qid() > target.tuning().maxIoQueues()) {
                reject(req, RdmaCmReject.INVALID_QID, "QID " + cm.qid());
                return false;
            }
            if (cm.hsqsize() < 1 || cm.hsqsize() + 1 > max) {
                reject(req, RdmaCmReject.INVALID_HSQSIZE, "HSQSIZE " + cm.hsqsize() + " (queue of at most " + max + ")");
                return false;
            }
            if (cm.hrqsize() < 1) {
                reject(req, RdmaCmReject.INVALID_HRQSIZE, "HRQSIZE " + cm.hrqsize());
                return false;
            }
            qid = cm.qid();
            size = cm.hsqsize() + 1;
        }
        int capsule = SubmissionQueueEntry.SIZE + (qid == 0 ? 0 : target.tuning().inCapsuleDataSize());
        RdmaQueue queue = new RdmaQueue(target, port, qid, size, capsule);
        queue.slot(slot);
        if (req.peer() != null) {
            // at the cap, the address's oldest connection not yet connected makes room, as over TCP
            queue.admitFrom(req.peer().getAddress());
        }
        ByteBuffer accept = Flyweight.allocate(RdmaCmAccept.SIZE);
        new RdmaCmAccept().<RdmaCmAccept>wrap(accept, 0).encode(size);
        // registrations and the receive ring are in place before the accept leaves (as nvmet-rdma
        // posts its receives first): the host's Connect command, its first SEND, finds a buffer
        AtomicReference<RdmaConnection> made = new AtomicReference<>();
        try {
            req.accept(accept, queue.sendDepth(), queue.recvDepth(), Math.min(req.initiatorDepth(), MAX_INITIATOR_DEPTH),
                    queue, c -> {
                        made.set(c);
                        try {
                            queue.prepare(c.pd(), pool(c.pd()));
                        } catch (IOException e) {
                            throw new UncheckedIOException("no registered memory for the queue: " + e.getMessage(), e);
                        }
                        connections.add(c);
                        queue.start(c, () -> {
                            connections.remove(c);
                            slot.end();
                        });
                    });
            return true;
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot accept RDMA connection from {0} (QID {1}, queue size {2}): {3}",
                    req.peer(), qid < 0 ? "unknown" : qid, size, e.getMessage());
            RdmaConnection c = made.get();
            if (c != null) {
                connections.remove(c);
            }
            queue.release();
            queue.abandoned();
            return false;
        }
    }

    private RegisteredBufferPool pool(ProtectionDomain pd) {
        return pools.computeIfAbsent(pd, d -> new RegisteredBufferPool(d, target.tuning().maxTransferSize(),
                MemoryRegion.LOCAL_WRITE));
    }

    private static void reject(ConnectRequest req, int status, String why) {
        LOG.log(System.Logger.Level.WARNING, "rejected RDMA connect request from {0}: {1} ({2})", req.peer(),
                RdmaCmReject.name(status), why);
        ByteBuffer b = Flyweight.allocate(RdmaCmReject.SIZE);
        new RdmaCmReject().<RdmaCmReject>wrap(b, 0).encode(status);
        req.reject(b);
    }

    @Override
    public void close() {
        trimming.cancel(false);
        for (RegisteredBufferPool p : pools.values()) {
            p.close();
        }
        pools.clear();
        for (RdmaProvider p : providers.values()) {
            p.close();
        }
        providers.clear();
    }

    /**
     * NVMe/RDMA as a target transport type: {@code rdma}, with the port option {@code rdma_provider}
     * (the verbs provider: {@code verbs}, {@code disni} or {@code soft}; default {@value
     * RdmaProviders#DEFAULT}).
     */
    public static final class Type implements TargetTransport.Type {
        /** The port option naming the RDMA provider. */
        public static final String PROVIDER = "rdma_provider";

        @Override
        public String name() {
            return "rdma";
        }

        @Override
        public int code() {
            return DiscoveryLogEntry.TRTYPE_RDMA;
        }

        @Override
        public List<PortOption> portOptions() {
            return List.of(new PortOption(PROVIDER, String.join("|", RdmaProviders.NAMES), "Verbs provider of"
                    + " rdma ports: verbs (rdma-core, the default), disni (IBM DiSNI) or soft (RDMA semantics in software"
                    + " over TCP, to our own initiator only)."));
        }

        @Override
        public Map<String, String> options(Map<String, String> configured) {
            String provider = RdmaProviders.DEFAULT;
            for (Map.Entry<String, String> e : configured.entrySet()) {
                if (!PROVIDER.equals(e.getKey())) {
                    throw new PortOptionException(e.getKey(), "not an option of rdma ports (" + PROVIDER + " is)");
                }
                if (!RdmaProviders.NAMES.contains(e.getValue())) {
                    throw new PortOptionException(PROVIDER, "'" + e.getValue() + "' is not one of "
                            + String.join(", ", RdmaProviders.NAMES));
                }
                provider = e.getValue();
            }
            return Map.of(PROVIDER, provider);
        }

        /** TSAS: reliable connected, no provider type specified, RDMA CM (the kernel nvmet's defaults). */
        @Override
        public void describe(Port port, DiscoveryLogEntry e) {
            e.tsasByte(DiscoveryLogEntry.TSAS_RDMA_QPTYPE, DiscoveryLogEntry.RDMA_QPTYPE_CONNECTED);
            e.tsasByte(DiscoveryLogEntry.TSAS_RDMA_PRTYPE, DiscoveryLogEntry.RDMA_PRTYPE_NOT_SPECIFIED);
            e.tsasByte(DiscoveryLogEntry.TSAS_RDMA_CMS, DiscoveryLogEntry.RDMA_CMS_RDMA_CM);
        }

        @Override
        public TargetTransport create(Target target, EventLoopGroup group) {
            return new RdmaTransport(target, group);
        }
    }
}
