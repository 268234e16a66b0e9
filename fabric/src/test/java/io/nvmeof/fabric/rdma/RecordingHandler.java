package io.nvmeof.fabric.rdma;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Test handler: completions into a queue, the disconnect into a future. */
public final class RecordingHandler implements RdmaHandler {
    /** One completion. */
    public record Completion(long wrId, int opcode, int status, int byteLength, long invalidatedRkey) {
    }

    public final BlockingQueue<Completion> completions = new LinkedBlockingQueue<>();
    public final CompletableFuture<Throwable> disconnected = new CompletableFuture<>();
    private final AtomicInteger disconnects = new AtomicInteger();
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    /** Completed by the first callback that comes after onDisconnected (there must be none). */
    private final CompletableFuture<Void> afterDisconnect = new CompletableFuture<>();

    @Override
    public void onCompletion(long wrId, int opcode, int status, int byteLength, long invalidatedRkey) {
        threads.add(Thread.currentThread());
        if (disconnects.get() > 0) {
            violations.add("completion of " + wrId + " after onDisconnected");
            afterDisconnect.complete(null);
        }
        completions.add(new Completion(wrId, opcode, status, byteLength, invalidatedRkey));
    }

    @Override
    public void onDisconnected(Throwable cause) {
        threads.add(Thread.currentThread());
        if (disconnects.incrementAndGet() > 1) {
            violations.add("onDisconnected called " + disconnects.get() + " times");
            afterDisconnect.complete(null);
        }
        disconnected.complete(cause);
    }

    /**
     * The lifecycle's promises, once the connection has ended: {@code onDisconnected} exactly
     * once, nothing after it, every call on {@code c}'s event loop.
     */
    public void assertLifecycle(RdmaConnection c) throws InterruptedException {
        try {
            afterDisconnect.get(100, TimeUnit.MILLISECONDS); // (a second onDisconnected would come soon after the first)
        } catch (TimeoutException quiet) {
            // nothing came after the disconnect, as it should be
        } catch (ExecutionException e) {
            throw new AssertionError(e);
        }
        if (disconnects.get() != 1) {
            violations.add("onDisconnected called " + disconnects.get() + " times");
        }
        for (Thread t : threads) {
            if (!c.eventLoop().inEventLoop(t)) {
                violations.add("a callback on " + t.getName() + ", not the connection's loop");
            }
        }
        if (!violations.isEmpty()) {
            throw new AssertionError(c + ": " + violations);
        }
    }

    public Completion next() throws InterruptedException {
        Completion c = completions.poll(10, TimeUnit.SECONDS);
        if (c == null) {
            throw new AssertionError("no completion within 10 s");
        }
        return c;
    }
}
