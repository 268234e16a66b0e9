package io.nvmeof.initiator;

import io.netty.channel.EventLoop;
import java.util.concurrent.CompletableFuture;

/** One queue of a host controller, whatever the transport. */
interface Queue {
    int qid();

    EventLoop eventLoop();

    boolean isOpen();

    /** Sends {@code c}; its future completes with the response. Any thread. */
    void submit(Command c);

    CompletableFuture<Void> close();
}
