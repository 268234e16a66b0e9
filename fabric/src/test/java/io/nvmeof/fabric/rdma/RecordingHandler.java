package io.nvmeof.fabric.rdma;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** Test handler: completions into a queue, the disconnect into a future. */
public final class RecordingHandler implements RdmaHandler {
    /** One completion. */
    public record Completion(long wrId, int opcode, int status, int byteLength, long invalidatedRkey) {
    }

    public final BlockingQueue<Completion> completions = new LinkedBlockingQueue<>();
    public final CompletableFuture<Throwable> disconnected = new CompletableFuture<>();

    @Override
    public void onCompletion(long wrId, int opcode, int status, int byteLength, long invalidatedRkey) {
        completions.add(new Completion(wrId, opcode, status, byteLength, invalidatedRkey));
    }

    @Override
    public void onDisconnected(Throwable cause) {
        disconnected.complete(cause);
    }

    public Completion next() throws InterruptedException {
        Completion c = completions.poll(10, TimeUnit.SECONDS);
        if (c == null) {
            throw new AssertionError("no completion within 10 s");
        }
        return c;
    }
}
