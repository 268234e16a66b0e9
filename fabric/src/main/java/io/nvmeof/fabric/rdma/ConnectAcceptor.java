package io.nvmeof.fabric.rdma;

/** Receives connect requests of an {@link RdmaListener}. */
@FunctionalInterface
public interface ConnectAcceptor {
    /** Must accept or reject {@code request}, now or later; any thread. */
    void onConnectRequest(ConnectRequest request);
}
