package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The I/O router prefers the queue on the caller's own event loop, and takes turns otherwise. */
class IoRouterTest {
    private final EventLoop a = new DefaultEventLoop();
    private final EventLoop b = new DefaultEventLoop();

    private static HostQueue on(EventLoop loop, int qid) {
        return new HostQueue(qid, 4, 0, TimeUnit.SECONDS.toNanos(1), 1000) {
            @Override
            protected void transmit(Command c) {
            }

            @Override
            protected void resetConnection() {
            }

            @Override
            public EventLoop eventLoop() {
                return loop;
            }

            @Override
            public boolean isOpen() {
                return true;
            }

            @Override
            public CompletableFuture<Void> close() {
                return CompletableFuture.completedFuture(null);
            }
        };
    }

    @AfterEach
    void stop() {
        a.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        b.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    @Test
    void theCallersLoopFirstThenInTurn() throws Exception {
        IoRouter r = new IoRouter();
        assertNull(r.pick(r.queues()));
        HostQueue qa = on(a, 1);
        HostQueue qb = on(b, 2);
        r.queues(new HostQueue[] {qa, qb});
        for (int i = 0; i < 10; i++) {
            assertSame(qb, b.submit(() -> r.pick(r.queues())).get(), "a command from b's loop stays on b");
            assertSame(qa, a.submit(() -> r.pick(r.queues())).get());
        }
        Set<HostQueue> seen = new HashSet<>();
        for (int i = 0; i < 4; i++) {
            seen.add(r.pick(r.queues()));
        }
        assertEquals(Set.of(qa, qb), seen, "from elsewhere: every queue in turn");
    }
}
