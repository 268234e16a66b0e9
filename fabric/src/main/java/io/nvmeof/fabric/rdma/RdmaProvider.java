package io.nvmeof.fabric.rdma;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

/**
 * One RDMA implementation: connection management (the rdma_cm part) for both sides. A provider
 * is opened once per process or component and closed when its connections are gone.
 */
public interface RdmaProvider extends AutoCloseable {
    /** {@code verbs}, {@code disni} or {@code soft}. */
    String name();

    /**
     * Listens for connect requests on {@code address}; every request goes to {@code acceptor},
     * which must answer it ({@link ConnectRequest#accept} or {@link ConnectRequest#reject}).
     */
    RdmaListener listen(InetSocketAddress address, ConnectAcceptor acceptor) throws IOException;

    /**
     * Resolves {@code address}, creates a queue pair and connects with {@code params}' private
     * data. The future completes once the connection is established, or fails with an
     * {@link RdmaRejectedException} (carrying the peer's reject private data) or an
     * {@link IOException}.
     */
    CompletableFuture<RdmaConnection> connect(InetSocketAddress address, ConnectParams params, RdmaHandler handler);

    @Override
    void close();
}
