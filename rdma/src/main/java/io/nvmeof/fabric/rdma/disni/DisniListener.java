package io.nvmeof.fabric.rdma.disni;

import com.ibm.disni.verbs.RdmaCmId;
import io.nvmeof.fabric.rdma.ConnectAcceptor;
import io.nvmeof.fabric.rdma.RdmaListener;
import java.io.IOException;
import java.net.InetSocketAddress;

/** A listening CM id. Connect requests go to the acceptor on the CM thread. */
final class DisniListener implements RdmaListener, DisniProvider.CmEndpoint {
    private static final System.Logger LOG = System.getLogger(DisniListener.class.getName());

    private final DisniProvider provider;
    private final RdmaCmId id;
    private final ConnectAcceptor acceptor;
    private final InetSocketAddress local;
    private volatile boolean closed;

    DisniListener(DisniProvider provider, RdmaCmId id, ConnectAcceptor acceptor, InetSocketAddress local) {
        this.provider = provider;
        this.id = id;
        this.acceptor = acceptor;
        this.local = local;
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    /** CM thread. */
    void onConnectRequest(RdmaCmId connId) {
        if (closed) {
            DisniProvider.destroyQuietly(connId);
            return;
        }
        InetSocketAddress peer;
        InetSocketAddress at;
        try {
            peer = DisniProvider.socketAddress(connId.getDestination(), null);
            at = DisniProvider.socketAddress(connId.getSource(), local);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "connect request on {0} without addresses ({1}): dropped", local,
                    e.getMessage());
            DisniProvider.destroyQuietly(connId);
            return;
        }
        DisniConnectRequest r = new DisniConnectRequest(provider, connId, peer, at);
        provider.register(connId, r);
        try {
            acceptor.onConnectRequest(r);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "acceptor failed on the connect request from " + peer + "; rejecting", e);
            r.rejectIfOpen();
        }
    }

    @Override
    public void onCmEvent(int event) {
        LOG.log(event == CmEvents.DEVICE_REMOVAL ? System.Logger.Level.WARNING : System.Logger.Level.DEBUG,
                "{0} on the listener at {1}", CmEvents.name(event), local);
    }

    @Override
    public void abandonOnClose() {
        close();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            provider.cmCall(() -> {
                provider.forget(id, this);
                DisniProvider.destroyQuietly(id);
                return null;
            });
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing the listener at {0}: {1}", local, e.getMessage());
        }
    }

    @Override
    public String toString() {
        return "DiSNI listener at " + local;
    }
}
