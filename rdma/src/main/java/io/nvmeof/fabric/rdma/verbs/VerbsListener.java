package io.nvmeof.fabric.rdma.verbs;

import io.nvmeof.fabric.rdma.ConnectAcceptor;
import io.nvmeof.fabric.rdma.ProtectionDomain;
import io.nvmeof.fabric.rdma.RdmaListener;
import java.net.InetSocketAddress;

/** A listening rdma_cm id. Connect requests are handed to the acceptor on the provider's CM thread. */
final class VerbsListener implements RdmaListener, VerbsProvider.CmTarget {
    private static final System.Logger LOG = System.getLogger(VerbsListener.class.getName());

    private final VerbsProvider provider;
    final long id;
    private final ConnectAcceptor acceptor;
    private final InetSocketAddress local;
    private final VerbsDevice device;
    private boolean closed;

    VerbsListener(VerbsProvider provider, long id, ConnectAcceptor acceptor, InetSocketAddress local, VerbsDevice device) {
        this.device = device;
        this.provider = provider;
        this.id = id;
        this.acceptor = acceptor;
        this.local = local;
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public ProtectionDomain pd() {
        return device;
    }

    @Override
    public void onCmEvent(CmEvent e) {
        if (e.type() != Abi.EV_CONNECT_REQUEST) {
            LOG.log(System.Logger.Level.DEBUG, "verbs listener {0}: rdma_cm {1}", local, e.describe());
            return;
        }
        VerbsConnectRequest request;
        try {
            VerbsDevice dev = provider.device(Native.MEM.getAddress(e.id() + Abi.CM_ID_VERBS));
            request = new VerbsConnectRequest(provider, dev, e);
        } catch (Exception x) {
            LOG.log(System.Logger.Level.WARNING, "verbs listener " + local + ": cannot take a connect request", x);
            provider.libs.cm.rdma_reject(e.id(), 0, 0);
            provider.libs.cm.rdma_destroy_id(e.id());
            return;
        }
        provider.register(e.id(), request);
        try {
            acceptor.onConnectRequest(request);
        } catch (RuntimeException | Error x) {
            LOG.log(System.Logger.Level.WARNING, "verbs listener " + local + ": the acceptor threw; rejecting", x);
            request.shutdown();
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        provider.forget(id);
        provider.untrack(this);
        provider.libs.cm.rdma_destroy_id(id);
    }

    @Override
    public String toString() {
        return "verbs listener " + local;
    }
}
