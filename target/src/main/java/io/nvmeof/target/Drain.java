package io.nvmeof.target;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Waits for a set of commands to leave the target's hands: each queue marks the commands it has
 * in a backend ({@link QueuePair#markForDrain}), each marked command counts down as it completes,
 * and {@code then} runs once every queue has looked and every marked command is done. A
 * preempt-and-abort waits so for the preempted hosts' commands already running, as nvmet does:
 * once it completes, nothing of theirs can still land.
 */
final class Drain {
    /** One for the caller until it has dispatched every queue's look, one per queue look, one per marked command. */
    private final AtomicInteger pending = new AtomicInteger(1);
    private final Runnable then;

    Drain(Runnable then) {
        this.then = then;
    }

    void add() {
        pending.incrementAndGet();
    }

    void done() {
        if (pending.decrementAndGet() == 0) {
            then.run();
        }
    }
}
