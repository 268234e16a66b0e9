package io.nvmeof.fuzz;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.fabric.testing.FailingLeakDetector;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts one fuzz target's executions and says them at the end; with fuzzing on ({@code
 * JAZZER_FUZZ} set, as the target's own surefire execution sets it) a target that ran fewer
 * times than asked ({@code nvmeof.fuzz.runs}), because it was skipped or stopped early, fails
 * the build.
 */
public final class FuzzRuns {
    private final String target;
    private final AtomicLong count = new AtomicLong();
    private final AtomicLong inTarget = new AtomicLong();
    private final long started = System.nanoTime();

    public FuzzRuns(String target) {
        this.target = target;
    }

    public static boolean fuzzing() {
        String v = System.getenv("JAZZER_FUZZ");
        return v != null && !v.isEmpty();
    }

    /** One execution. */
    public void count() {
        count.incrementAndGet();
    }

    /**
     * Adds the time one execution spent in the code under test, and fails it on any buffer leak
     * Netty has reported meanwhile (the leak may come from an earlier input: its record says
     * where the buffer was last touched).
     */
    public void spent(long nanos) {
        inTarget.addAndGet(nanos);
        List<String> leaks = FailingLeakDetector.drain();
        if (!leaks.isEmpty()) {
            throw new AssertionError("Netty reported a leak:\n" + String.join("\n", leaks));
        }
    }

    /** Executions so far. */
    public long executions() {
        return count.get();
    }

    /** Prints the count (on the console, past surefire's redirection) and checks it when fuzzing. */
    public void report() {
        long n = count.get();
        double secs = (System.nanoTime() - started) / 1e9;
        String line = String.format("fuzz target %s: %,d executions in %.1f s, %.1f s of them in the target (%s)",
                target, n, secs, inTarget.get() / 1e9, fuzzing() ? "fuzzing" : "replaying saved inputs");
        System.err.println(line);
        System.out.println(line);
        if (fuzzing()) {
            long asked = Long.getLong("nvmeof.fuzz.runs", 1);
            assertTrue(n >= asked, "fuzz target " + target + " ran " + n + " times, " + asked + " asked: skipped or cut short");
        }
    }
}
