package io.nvmeof.fabric.rdma;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/** An incoming connect request, to be accepted or rejected exactly once. */
public interface ConnectRequest extends RdmaEnds.Known {
    /**
     * Creates the queue pair ({@code sendDepth} send and {@code recvDepth} receive work
     * requests), accepts with {@code privateData} (null: none) and negotiates {@code
     * initiatorDepth} (at most {@link #initiatorDepth()}). Completions and the disconnect go to
     * {@code handler} on the connection's event loop; none comes before this returns.
     */
    default RdmaConnection accept(ByteBuffer privateData, int sendDepth, int recvDepth, int initiatorDepth,
                                  RdmaHandler handler) throws IOException {
        return accept(privateData, sendDepth, recvDepth, initiatorDepth, handler, null);
    }

    /**
     * As {@link #accept(ByteBuffer, int, int, int, RdmaHandler)}, with {@code beforeAccept}
     * run on the connection's event loop once the queue pair exists and before the accept
     * leaves: the place to post the receive ring, as nvmet-rdma does, so that the peer's
     * first SEND (its Connect command) finds a buffer. When it throws, the request is
     * rejected and this throws.
     */
    RdmaConnection accept(ByteBuffer privateData, int sendDepth, int recvDepth, int initiatorDepth, RdmaHandler handler,
                          Consumer<RdmaConnection> beforeAccept) throws IOException;

    /** Runs {@code hook} (if any) for {@code c} on its event loop and waits for it; a failure becomes an IOException. */
    static void runBeforeAccept(RdmaConnection c, Consumer<RdmaConnection> hook) throws IOException {
        if (hook == null) {
            return;
        }
        try {
            if (c.eventLoop().inEventLoop()) {
                hook.accept(c);
            } else {
                c.eventLoop().submit(() -> hook.accept(c)).get(30, TimeUnit.SECONDS);
            }
        } catch (ExecutionException e) {
            throw new IOException("preparing the connection from " + c.peer() + " failed: " + e.getCause(), e.getCause());
        } catch (RuntimeException e) {
            throw new IOException("preparing the connection from " + c.peer() + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while preparing the connection from " + c.peer(), e);
        } catch (TimeoutException e) {
            throw new IOException("preparing the connection from " + c.peer() + " took more than 30 s", e);
        }
    }

    /** Rejects with {@code privateData} (null: none). */
    void reject(ByteBuffer privateData);
}
