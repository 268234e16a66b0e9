package io.nvmeof.fabric.rdma;

/**
 * Where an RDMA connection is in its life, the same for every provider, and what a post may
 * do there. A connection is CONNECTING until the CM exchange is done, ESTABLISHED while work
 * requests flow, DRAINING from the first sign of its end (a disconnect either way, an error
 * completion) until its queue pair is quiet and destroyed, then CLOSED once
 * {@link RdmaHandler#onDisconnected} has been called.
 */
public enum ConnectionState {
    CONNECTING, ESTABLISHED, DRAINING, CLOSED;

    /**
     * Whether a post may go to the queue pair: yes when ESTABLISHED, and while CONNECTING on
     * the accepting side, which posts its receive ring before it accepts; no while DRAINING
     * (the post is dropped: its buffers are not touched and the handler hears of the end
     * soon); a post on a CLOSED connection is a use after close, and throws, since the queue
     * pair and the provider's native memory for it are gone.
     */
    public boolean admitsPost(RdmaConnection connection) {
        switch (this) {
            case CONNECTING:
            case ESTABLISHED:
                return true;
            case CLOSED:
                throw new IllegalStateException(connection + " is closed: a post after the connection ended");
            default:
                return false;
        }
    }
}
