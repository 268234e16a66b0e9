package io.nvmeof.fabric.rdma.verbs;

import io.nvmeof.fabric.rdma.AbstractConnectRequest;
import io.nvmeof.fabric.rdma.ConnectRequest;
import io.nvmeof.fabric.rdma.RdmaConnection;
import io.nvmeof.fabric.rdma.RdmaHandler;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * A CONNECT_REQUEST: the new rdma_cm id, waiting for {@link #accept} or {@link #reject}. It stays
 * the id's CM target: events before the answer (the requester gave up) are remembered, events
 * after an accept are passed on to the connection.
 */
final class VerbsConnectRequest extends AbstractConnectRequest implements VerbsProvider.CmTarget {
    private static final System.Logger LOG = System.getLogger(VerbsConnectRequest.class.getName());
    private final VerbsProvider provider;
    private final VerbsDevice device;
    final long id;
    private final int responderResources;
    private CmEvent gone;
    private VerbsConnection connection;

    /** RDMA hosts give up on a connect that is not answered soon: SPDK waits 1 s for ESTABLISHED. */
    static final long SLOW_ACCEPT_MS = 500;
    private final long received = System.nanoTime();

    VerbsConnectRequest(VerbsProvider provider, VerbsDevice device, CmEvent e) {
        super(SockAddr.read(e.id() + Abi.CM_ID_DST_ADDR), SockAddr.read(e.id() + Abi.CM_ID_SRC_ADDR),
                e.privateDataBuffer(), Math.min(e.initiatorDepth(), device.maxQpInitRdAtom));
        this.provider = provider;
        this.device = device;
        this.id = e.id();
        this.responderResources = Math.min(e.responderResources(), device.maxQpRdAtom);
    }

    @Override
    public RdmaConnection accept(ByteBuffer acceptData, int sendDepth, int recvDepth, int initiatorDepth,
                                 RdmaHandler handler, Consumer<RdmaConnection> beforeAccept) throws IOException {
        VerbsConnection c;
        synchronized (this) {
            answer();
            if (gone != null) {
                provider.forget(id);
                provider.libs.cm.rdma_destroy_id(id);
                throw new IOException("RDMA connect request from " + peer() + " ended before the accept: rdma_cm "
                        + gone.describe());
            }
            int depth = Math.max(0, Math.min(initiatorDepth, initiatorDepth()));
            c = new VerbsConnection(provider, provider.nextLoop(), handler, id, privateData(), depth);
            long[] t = new long[3];
            provider.track(c);
            try {
                t[0] = System.nanoTime();
                c.createQueuePair(device, sendDepth, recvDepth);
                t[1] = System.nanoTime();
                ConnectRequest.runBeforeAccept(c, beforeAccept);
                t[2] = System.nanoTime();
                connection = c;                  // from here on, CM events of the id go to the connection
                c.accept(acceptData, responderResources, depth);
                long total = (System.nanoTime() - received) / 1_000_000;
                LOG.log(total > SLOW_ACCEPT_MS ? System.Logger.Level.WARNING : System.Logger.Level.DEBUG,
                        "verbs: accepted {0} {1}{2}", peer(), timing(t),
                        total > SLOW_ACCEPT_MS ? "; hosts such as SPDK give up after 1 s" : "");
            } catch (IOException | RuntimeException e) {
                connection = null;
                provider.libs.cm.rdma_reject(id, 0, 0);
                c.destroy();
                LOG.log(System.Logger.Level.WARNING, "verbs: refused the connection from {0} {1}: {2}", peer(), timing(t),
                        e.getMessage());
                throw e;
            }
        }
        return c;
    }

    @Override
    public void reject(ByteBuffer rejectData) {
        synchronized (this) {
            answer();
            byte[] b = new byte[rejectData == null ? 0 : rejectData.remaining()];
            if (b.length > 0) {
                rejectData.duplicate().get(b);
            }
            long p = b.length == 0 ? 0 : Native.calloc(b.length);
            try {
                if (p != 0) {
                    Native.MEM.putByteArray(p, b, 0, b.length);
                }
                provider.libs.cm.rdma_reject(id, p, b.length);
            } finally {
                Native.free(p);
            }
            provider.forget(id);
            provider.libs.cm.rdma_destroy_id(id);
        }
    }

    /** "N ms after its request (acceptor, queue pair, receive ring)" from the marks set so far. */
    private String timing(long[] t) {
        long now = System.nanoTime();
        StringBuilder b = new StringBuilder().append((now - received) / 1_000_000).append(" ms after its request (acceptor ");
        long prev = received;
        String[] names = {"", ", queue pair ", ", receive ring "};
        for (int i = 0; i < t.length && t[i] != 0; i++) {
            b.append(names[i]).append((t[i] - prev) / 1_000_000).append(" ms");
            prev = t[i];
        }
        return b.append(", then ").append((now - prev) / 1_000_000).append(" ms)").toString();
    }

    @Override
    public void onCmEvent(CmEvent e) {
        VerbsConnection c;
        synchronized (this) {
            c = connection;
            if (c == null) {
                if (gone == null && e.type() != Abi.EV_TIMEWAIT_EXIT) {
                    gone = e;
                }
                return;
            }
        }
        c.onCmEvent(e);
    }

    /** The provider closes before an answer came: reject. */
    void shutdown() {
        if (answered()) {
            return;
        }
        try {
            reject(null);
        } catch (IllegalStateException raced) {
            // answered meanwhile
        }
    }

    @Override
    public String toString() {
        return "verbs connect request " + peer() + " -> " + localAddress() + " on " + device.name;
    }
}
