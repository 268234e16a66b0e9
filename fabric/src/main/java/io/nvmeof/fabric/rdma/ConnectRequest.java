package io.nvmeof.fabric.rdma;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/** An incoming connect request, to be accepted or rejected exactly once. */
public interface ConnectRequest {
    InetSocketAddress peer();

    InetSocketAddress localAddress();

    /**
     * The requester's private data (read-only, little-endian), or null when the provider cannot
     * see it (DiSNI hands none to Java).
     */
    ByteBuffer privateData();

    /**
     * How many RDMA READs this side may have outstanding toward the requester: the requester's
     * responder resources, already capped by this device.
     */
    int initiatorDepth();

    /**
     * Creates the queue pair ({@code sendDepth} send and {@code recvDepth} receive work
     * requests), accepts with {@code privateData} (null: none) and negotiates {@code
     * initiatorDepth} (at most {@link #initiatorDepth()}). Completions and the disconnect go to
     * {@code handler} on the connection's event loop; none comes before this returns.
     */
    RdmaConnection accept(ByteBuffer privateData, int sendDepth, int recvDepth, int initiatorDepth, RdmaHandler handler)
            throws IOException;

    /** Rejects with {@code privateData} (null: none). */
    void reject(ByteBuffer privateData);
}
