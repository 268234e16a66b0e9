package io.nvmeof.fabric.rdma;

import java.nio.ByteBuffer;

/**
 * What a connecting side asks for: queue pair sizes, RDMA READ depths and CM private data.
 *
 * @param privateData      sent with the connect request (null: none)
 * @param sendDepth        send work requests the queue pair holds
 * @param recvDepth        receive work requests the queue pair holds
 * @param responderResources RDMA READs the peer may have outstanding against this side
 * @param initiatorDepth   RDMA READs this side issues at most at once
 * @param timeoutMillis    bound on address/route resolution and the connect handshake
 */
public record ConnectParams(ByteBuffer privateData, int sendDepth, int recvDepth, int responderResources,
                            int initiatorDepth, int timeoutMillis) {
}
