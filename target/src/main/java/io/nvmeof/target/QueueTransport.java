package io.nvmeof.target;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.nvmeof.protocol.tls.PskIdentity;
import java.net.InetSocketAddress;

/**
 * What the transport-independent core needs from one queue's transport connection, in the
 * spirit of the kernel's {@code nvmet_fabrics_ops}: transports move data, the core owns
 * command semantics. Every method but {@link #abort()} is called on the queue's event loop.
 */
interface QueueTransport {
    /** The event loop that owns this queue. */
    EventLoop eventLoop();

    /**
     * Commands of this queue are about to complete from {@code ring}'s batch of completions: the
     * transport may hold its flush until the batch is over ({@link LoopRing#afterBatch}), so the
     * batch leaves in few writes. The default flushes as usual.
     */
    default void holdFlush(LoopRing ring) {
    }

    /**
     * A buffer for {@code length} bytes of command data, with whatever headroom the transport
     * wants in front of it; sets {@link Request#dataOffset}. Null when the transport has no
     * buffer to give now (registered memory exhausted): the command then completes with
     * Command Interrupted, which the host may retry.
     */
    ByteBuf allocateData(Request r, int length);

    /**
     * Pulls host-to-controller data that was not in the capsule into {@link Request#data};
     * calls {@link QueuePair#dataReceived(Request)} once it is all there.
     */
    void fetchData(Request r);

    /**
     * Pushes controller-to-host data (when the command succeeded and has some) and the response.
     * The data is in {@link Request#data}, or, when the transport {@link #sendsViews}, it may be a
     * view of the backend's memory in {@link Request#view}, sent as it is and released.
     */
    void sendCompletion(Request r);

    /** Whether a read's data may come as a view of the backend's memory ({@link Request#view}) instead of a buffer from {@link #allocateData}. */
    default boolean sendsViews() {
        return false;
    }

    /** Ends the connection. */
    void close();

    /**
     * Ends the connection from any thread, also one still being set up (an RDMA queue whose
     * accept is under way): the one call not made on the queue's event loop.
     */
    void abort();

    /** The peer's address for logs, e.g. {@code 127.0.0.1:50122}. */
    String peer();

    /** The local address of the connection (what the host reached). */
    InetSocketAddress localAddress();

    /** The peer's address, where the transport has one (a registration that names no address gets it). */
    default InetSocketAddress remoteAddress() {
        return null;
    }

    /** Whether SGL identifier {@code id} names data this transport moves (rather than in-capsule data). */
    boolean acceptsDataDescriptor(int id);

    /**
     * Checks a Connect for queue {@code qid} of {@code sqsize} entries (0's based) against what the
     * transport set up for the connection (NVMe/RDMA: the CM request's QID and HSQSIZE); null if
     * it fits, else a message for the host.
     */
    default String checkConnect(int qid, int sqsize) {
        return null;
    }

    /**
     * The TLS PSK identity the host opened this connection's secure channel with (NVMe/TCP), or
     * null when the connection is not secured: a Connect must name the same host and subsystem.
     */
    default PskIdentity tlsIdentity() {
        return null;
    }

    /** The largest in-capsule data this queue accepts, in bytes. */
    int inCapsuleDataSize();
}
