package io.nvmeof.target;

import java.net.InetSocketAddress;

/** A listening port of some transport. */
public interface PortListener extends AutoCloseable {
    InetSocketAddress localAddress();

    /** Stops listening and drops the port's connections. */
    @Override
    void close();
}
