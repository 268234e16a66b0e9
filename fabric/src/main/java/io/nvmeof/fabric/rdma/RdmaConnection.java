package io.nvmeof.fabric.rdma;

import io.netty.channel.EventLoop;

/**
 * One reliable-connected queue pair. Post methods are called on {@link #eventLoop()}; their
 * completions come back to the {@link RdmaHandler} there. A post on a connection that has
 * ended is dropped (the handler has been told, or is about to be).
 */
public interface RdmaConnection extends RdmaEnds.Known {
    /** No key to invalidate. */
    long NO_INVALIDATE = -1;

    EventLoop eventLoop();

    ProtectionDomain pd();

    /** Posts a receive buffer of {@code length} bytes at {@code offset} of {@code mr}. */
    void postRecv(long wrId, MemoryRegion mr, int offset, int length);

    /**
     * SENDs {@code length} bytes at {@code offset} of {@code mr}; with {@code invalidateRkey} >= 0
     * as SEND with Invalidate of that peer key.
     */
    void postSend(long wrId, MemoryRegion mr, int offset, int length, long invalidateRkey);

    /** Reads {@code length} bytes of the peer's memory at {@code remoteAddress}/{@code rkey} into {@code mr}. */
    void postRead(long wrId, MemoryRegion mr, int offset, int length, long remoteAddress, int rkey);

    /**
     * Writes {@code length} bytes of {@code mr} to the peer's memory at {@code remoteAddress}/{@code
     * rkey}, then SENDs {@code msgLength} bytes of {@code msg}: two work requests chained in one
     * post, so the SEND arrives after the data. One completion: the SEND's, with {@code wrId}.
     */
    void postWriteAndSend(long wrId, MemoryRegion mr, int offset, int length, long remoteAddress, int rkey,
                          MemoryRegion msg, int msgOffset, int msgLength, long invalidateRkey);

    /** Disconnects; the handler's {@code onDisconnected} follows once the queue pair is quiet. */
    void close();

    /** Whether the connection is established and not yet ended. */
    boolean isOpen();
}
