package io.nvmeof.fabric.rdma;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * The two ends of an RDMA connection (or connect request) and what the peer said while
 * connecting: its private data (kept as given, handed out as read-only views) and how many
 * RDMA READs this side may have outstanding.
 */
public record RdmaEnds(InetSocketAddress peer, InetSocketAddress local, ByteBuffer privateData, int initiatorDepth) {
    /** Nothing known yet. */
    public static final RdmaEnds NONE = new RdmaEnds(null, null, null, 0);

    /** A read-only view of the private data with its own position, or null. */
    @Override
    public ByteBuffer privateData() {
        return privateData == null ? null : privateData.asReadOnlyBuffer().order(privateData.order());
    }

    public RdmaEnds withAddresses(InetSocketAddress peer, InetSocketAddress local) {
        return new RdmaEnds(peer, local, privateData, initiatorDepth);
    }

    public RdmaEnds withNegotiated(ByteBuffer privateData, int initiatorDepth) {
        return new RdmaEnds(peer, local, privateData, initiatorDepth);
    }

    /** What both connections and connect requests say about their ends. */
    public interface Known {
        RdmaEnds ends();

        default InetSocketAddress peer() {
            return ends().peer();
        }

        default InetSocketAddress localAddress() {
            return ends().local();
        }

        /**
         * Private data the peer sent with its accept (connecting side) or request (accepting
         * side), read-only, little-endian; null when none came or the provider cannot see it.
         */
        default ByteBuffer privateData() {
            return ends().privateData();
        }

        /** RDMA READs this side may have outstanding at once (for a request: the most it may ask for). */
        default int initiatorDepth() {
            return ends().initiatorDepth();
        }
    }
}
