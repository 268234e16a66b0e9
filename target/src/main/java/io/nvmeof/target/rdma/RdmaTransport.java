package io.nvmeof.target.rdma;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.fabric.rdma.ConnectRequest;
import io.nvmeof.fabric.rdma.MemoryRegion;
import io.nvmeof.fabric.rdma.ProtectionDomain;
import io.nvmeof.fabric.rdma.RdmaConnection;
import io.nvmeof.fabric.rdma.RdmaListener;
import io.nvmeof.fabric.rdma.RdmaProvider;
import io.nvmeof.fabric.rdma.RdmaProviders;
import io.nvmeof.fabric.rdma.RegisteredBufferPool;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.SubmissionQueueEntry;
import io.nvmeof.protocol.rdma.RdmaCmAccept;
import io.nvmeof.protocol.rdma.RdmaCmReject;
import io.nvmeof.protocol.rdma.RdmaCmRequest;
import io.nvmeof.protocol.DiscoveryLogEntry;
import io.nvmeof.target.Port;
import io.nvmeof.target.PortOptionException;
import io.nvmeof.target.TargetTransport;
import io.nvmeof.target.PortListener;
import io.nvmeof.target.Target;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

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

    private final Target target;
    private final EventLoopGroup group;
    private final Map<String, RdmaProvider> providers = new ConcurrentHashMap<>();
    private final Map<ProtectionDomain, RegisteredBufferPool> pools = new ConcurrentHashMap<>();

    RdmaTransport(Target target, EventLoopGroup group) {
        this.target = target;
        this.group = group;
    }

    /** Starts listening for {@code port}. */
    @Override
    public PortListener listen(Port port) throws IOException {
        RdmaProvider provider = provider(port.option(Type.PROVIDER));
        Set<RdmaConnection> connections = ConcurrentHashMap.newKeySet();
        RdmaListener l = provider.listen(port.address(), req -> request(port, req, connections));
        warmUp(port, l);
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

    private synchronized RdmaProvider provider(String name) throws IOException {
        RdmaProvider p = providers.get(name);
        if (p == null) {
            p = RdmaProviders.open(name, group);
            providers.put(name, p);
        }
        return p;
    }

    private void request(Port port, ConnectRequest req, Set<RdmaConnection> connections) {
        ByteBuffer pd = req.privateData();
        int qid = -1;
        int size = target.maxQueueSize();
        if (pd != null) {
            if (pd.remaining() < RdmaCmRequest.SIZE) {
                reject(req, RdmaCmReject.INVALID_LENGTH, "private data of " + pd.remaining() + " bytes");
                return;
            }
            ByteBuffer copy = Flyweight.allocate(RdmaCmRequest.SIZE);
            copy.put(0, pd, pd.position(), RdmaCmRequest.SIZE);
            RdmaCmRequest cm = new RdmaCmRequest().wrap(copy, 0);
            int max = cm.qid() == 0 ? MAX_ADMIN_QUEUE : target.maxQueueSize();
            if (cm.recfmt() != RdmaCmRequest.RECFMT_1_0) {
                reject(req, RdmaCmReject.INVALID_RECFMT, "RECFMT " + cm.recfmt());
                return;
            }
            if (cm.qid() > target.maxIoQueues()) {
                reject(req, RdmaCmReject.INVALID_QID, "QID " + cm.qid());
                return;
            }
            if (cm.hsqsize() < 1 || cm.hsqsize() + 1 > max) {
                reject(req, RdmaCmReject.INVALID_HSQSIZE, "HSQSIZE " + cm.hsqsize() + " (queue of at most " + max + ")");
                return;
            }
            if (cm.hrqsize() < 1) {
                reject(req, RdmaCmReject.INVALID_HRQSIZE, "HRQSIZE " + cm.hrqsize());
                return;
            }
            qid = cm.qid();
            size = cm.hsqsize() + 1;
        }
        int capsule = SubmissionQueueEntry.SIZE + (qid == 0 ? 0 : target.inCapsuleDataSize());
        RdmaQueue queue = new RdmaQueue(target, port, qid, size, capsule);
        ByteBuffer accept = Flyweight.allocate(RdmaCmAccept.SIZE);
        new RdmaCmAccept().<RdmaCmAccept>wrap(accept, 0).encode(size);
        // registrations and the receive ring are in place before the accept leaves (as nvmet-rdma
        // posts its receives first): the host's Connect command, its first SEND, finds a buffer
        java.util.concurrent.atomic.AtomicReference<RdmaConnection> made = new java.util.concurrent.atomic.AtomicReference<>();
        try {
            req.accept(accept, queue.sendDepth(), queue.recvDepth(), Math.min(req.initiatorDepth(), MAX_INITIATOR_DEPTH),
                    queue, c -> {
                        made.set(c);
                        try {
                            queue.prepare(c.pd(), pool(c.pd()));
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException("no registered memory for the queue: " + e.getMessage(), e);
                        }
                        connections.add(c);
                        queue.start(c, () -> connections.remove(c));
                    });
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot accept RDMA connection from {0} (QID {1}, queue size {2}): {3}",
                    req.peer(), qid < 0 ? "unknown" : qid, size, e.getMessage());
            RdmaConnection c = made.get();
            if (c != null) {
                connections.remove(c);
            }
            queue.release();
        }
    }

    private RegisteredBufferPool pool(ProtectionDomain pd) {
        return pools.computeIfAbsent(pd, d -> new RegisteredBufferPool(d, target.maxTransferSize(),
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
     * NVMe/RDMA as a target transport type: {@code rdma}, with the port option {@code provider}
     * (the verbs provider: {@code verbs}, {@code disni} or {@code soft}; default {@value
     * RdmaProviders#DEFAULT}).
     */
    public static final class Type implements TargetTransport.Type {
        /** The port option naming the RDMA provider. */
        public static final String PROVIDER = "provider";

        @Override
        public String name() {
            return "rdma";
        }

        @Override
        public int code() {
            return DiscoveryLogEntry.TRTYPE_RDMA;
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
