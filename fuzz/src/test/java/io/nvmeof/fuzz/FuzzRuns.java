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
    /** The saved inputs' folder of the fuzz test ({@code <Class>Inputs/<method>} beside the class), or null if none. */
    private final java.net.URL inputs;
    private final String inputsName;
    private final AtomicLong count = new AtomicLong();
    private final AtomicLong inTarget = new AtomicLong();
    private final long started = System.nanoTime();

    /** Counts the runs of {@code test}'s fuzz test {@code method}, whose saved inputs Jazzer replays. */
    public FuzzRuns(String target, Class<?> test, String method) {
        this.target = target;
        this.inputsName = test.getPackageName().replace('.', '/') + "/" + test.getSimpleName() + "Inputs/" + method;
        this.inputs = test.getResource(test.getSimpleName() + "Inputs/" + method);
    }

    /** The saved inputs in {@code folder} (null: none): files, not folders. */
    static long inputCount(java.net.URL folder) {
        if (folder == null || !"file".equals(folder.getProtocol())) {
            return 0;
        }
        try (var files = java.nio.file.Files.list(java.nio.file.Path.of(folder.toURI()))) {
            return files.filter(java.nio.file.Files::isRegularFile).count();
        } catch (java.io.IOException | java.net.URISyntaxException e) {
            return 0;
        }
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
        } else {
            // replaying: the seeds and past findings must be where Jazzer looks, and each must have run
            long saved = inputCount(inputs);
            assertTrue(saved > 0, "fuzz target " + target + " has no saved inputs in " + inputsName
                    + ": its corpus is not replayed (moved with the class?)");
            assertTrue(n >= saved, "fuzz target " + target + " replayed " + n + " of the " + saved + " inputs in "
                    + inputsName);
        }
    }
}
