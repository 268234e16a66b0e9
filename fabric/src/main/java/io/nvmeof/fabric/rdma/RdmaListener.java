package io.nvmeof.fabric.rdma;

import java.net.InetSocketAddress;

/** A listening connection manager id. */
public interface RdmaListener extends AutoCloseable {
    /** The address bound (the port filled in when 0 was asked for). */
    InetSocketAddress localAddress();

    /**
     * The protection domain of the connections this listener will accept, when it is known
     * before the first request (a listener bound to one device's address); else null.
     */
    default ProtectionDomain pd() {
        return null;
    }

    /** Stops listening; established connections stay. */
    @Override
    void close();
}
