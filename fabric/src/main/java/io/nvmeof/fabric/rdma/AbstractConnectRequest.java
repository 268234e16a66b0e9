package io.nvmeof.fabric.rdma;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What every provider's connect request holds: the two addresses, the requester's private data
 * and the initiator depth this side may use, and whether the request has been answered (an
 * accept or a reject, exactly once).
 */
public abstract class AbstractConnectRequest implements ConnectRequest {
    private final RdmaEnds ends;
    private final AtomicBoolean answered = new AtomicBoolean();

    /**
     * @param privateData    the requester's private data (null: none, or not visible); kept, not copied
     * @param initiatorDepth the requester's responder resources, capped by this device
     */
    protected AbstractConnectRequest(InetSocketAddress peer, InetSocketAddress local, ByteBuffer privateData,
                                     int initiatorDepth) {
        this.ends = new RdmaEnds(peer, local, privateData, initiatorDepth);
    }

    @Override
    public final RdmaEnds ends() {
        return ends;
    }

    /** Marks the request answered; the second answer throws {@link IllegalStateException}. */
    protected final void answer() {
        if (!answered.compareAndSet(false, true)) {
            throw new IllegalStateException("the connect request from " + peer() + " was already answered");
        }
    }

    /** Marks the request answered unless it was; true when this call did. */
    protected final boolean answerIfOpen() {
        return answered.compareAndSet(false, true);
    }

    /** Whether the request has been accepted or rejected. */
    public final boolean answered() {
        return answered.get();
    }
}
