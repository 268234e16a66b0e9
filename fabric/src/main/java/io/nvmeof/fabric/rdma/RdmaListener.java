package io.nvmeof.fabric.rdma;

import java.net.InetSocketAddress;

/** A listening connection manager id. */
public interface RdmaListener extends AutoCloseable {
    /** The address bound (the port filled in when 0 was asked for). */
    InetSocketAddress localAddress();

    /** Stops listening; established connections stay. */
    @Override
    void close();
}
