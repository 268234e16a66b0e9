package io.nvmeof.fabric.rdma;

/**
 * Receives a connection's work completions and its end, always on the connection's event loop.
 */
public interface RdmaHandler {
    /**
     * A work request completed.
     *
     * @param wrId             the id it was posted with
     * @param opcode           {@link WorkCompletion#SEND}, {@code RECV}, {@code RDMA_READ} or {@code RDMA_WRITE}
     * @param status           {@link WorkCompletion#SUCCESS} or an error status (ibv_wc_status numbers)
     * @param byteLength       bytes received (RECV) or read (RDMA READ)
     * @param invalidatedRkey  for a RECV of a SEND with Invalidate: the key the peer invalidated, else -1
     */
    void onCompletion(long wrId, int opcode, int status, int byteLength, long invalidatedRkey);

    /**
     * The connection ended (null: an orderly disconnect). Called once; afterwards no completion
     * is delivered and the connection touches no registered memory any more, so every buffer
     * that was posted may be reused.
     */
    void onDisconnected(Throwable cause);
}
