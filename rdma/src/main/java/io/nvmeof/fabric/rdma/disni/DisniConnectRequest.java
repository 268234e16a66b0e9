package io.nvmeof.fabric.rdma.disni;

import com.ibm.disni.verbs.RdmaCmId;
import io.nvmeof.fabric.rdma.AbstractConnectRequest;
import io.nvmeof.fabric.rdma.RdmaConnection;
import io.nvmeof.fabric.rdma.RdmaHandler;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * A connect request as DiSNI shows it: only the ids. The requester's private data, its responder
 * resources and initiator depth are not visible ({@link #privateData()} is null, {@link
 * #initiatorDepth()} an assumption), the accept carries no private data, and there is no reject:
 * {@link #reject} destroys the request's CM id.
 */
final class DisniConnectRequest extends AbstractConnectRequest implements DisniProvider.CmEndpoint {
    private static final System.Logger LOG = System.getLogger(DisniConnectRequest.class.getName());

    private final DisniProvider provider;
    final RdmaCmId id;

    /** Private data is always null: DiSNI copies only the event type and the ids of a CM event to Java. */
    DisniConnectRequest(DisniProvider provider, RdmaCmId id, InetSocketAddress peer, InetSocketAddress local) {
        super(peer, local, null, provider.assumedInitiatorDepth);
        this.provider = provider;
        this.id = id;
    }

    @Override
    public RdmaConnection accept(ByteBuffer privateData, int sendDepth, int recvDepth, int initiatorDepth,
                                 RdmaHandler handler, Consumer<RdmaConnection> beforeAccept) throws IOException {
        if (sendDepth <= 0 || recvDepth <= 0) {
            throw new IllegalArgumentException("send and receive depth must be positive: " + sendDepth + ", " + recvDepth);
        }
        if (initiatorDepth < 0) {
            throw new IllegalArgumentException("initiator depth " + initiatorDepth);
        }
        answer();
        if (privateData != null && privateData.hasRemaining()) {
            provider.warnAcceptPrivateData(privateData.remaining(), peer());
        }
        return provider.accept(this, sendDepth, recvDepth, Math.min(initiatorDepth, initiatorDepth()), handler, beforeAccept);
    }

    @Override
    public void reject(ByteBuffer privateData) {
        answer();
        provider.warnReject(peer(), privateData == null ? 0 : privateData.remaining());
        destroyOnCmThread();
    }

    /** Rejects unless answered already (the acceptor failed). */
    void rejectIfOpen() {
        if (answerIfOpen()) {
            provider.warnReject(peer(), 0);
            destroyOnCmThread();
        }
    }

    private void destroyOnCmThread() {
        provider.cmExecute(() -> {
            provider.forget(id, this);
            DisniProvider.destroyQuietly(id);
        });
    }

    @Override
    public void onCmEvent(int event) {
        LOG.log(System.Logger.Level.DEBUG, "{0} for the unanswered connect request from {1}", CmEvents.name(event), peer());
        if (CmEvents.isConnectFailure(event) || event == CmEvents.DISCONNECTED) {
            answerIfOpen();
            provider.forget(id, this);
            DisniProvider.destroyQuietly(id);
        }
    }

    @Override
    public void abandonOnClose() {
        if (answerIfOpen()) {
            provider.forget(id, this);
            DisniProvider.destroyQuietly(id);
        }
    }

    @Override
    public String toString() {
        return "DiSNI connect request from " + peer() + " to " + localAddress();
    }
}
