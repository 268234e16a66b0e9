package io.nvmeof.tools;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** When the automatic warm-up calls the rate settled: steady windows and a quiet JIT, nothing less. */
class BenchRampTest {
    @Test
    void settlesOnSteadyWindowsWithAQuietJit() {
        long[] quiet = {0, 0, 0, 0, 0, 0};
        assertTrue(Bench.settled(new long[] {100, 104, 98, 101}, quiet, 4), "four steady windows, the JIT idle");
        assertFalse(Bench.settled(new long[] {100, 104, 98}, quiet, 3), "three windows are too few");
        assertFalse(Bench.settled(new long[] {60, 80, 95, 110}, quiet, 4), "a rising rate: something still compiles");
        assertFalse(Bench.settled(new long[] {100, 104, 98, 101}, new long[] {0, 0, 0, 40}, 4),
                "the JIT compiled for 40 ms of the last 250");
        assertFalse(Bench.settled(new long[] {100, 104, 98, 101}, new long[] {0, 0, 40, 0}, 4), "nor of the one before");
        assertTrue(Bench.settled(new long[] {20, 50, 100, 104, 98, 101}, new long[] {300, 200, 40, 12, 0, 0}, 6),
                "the last four count, not the first");
        assertFalse(Bench.settled(new long[] {0, 0, 0, 0}, quiet, 4), "no I/O completes: nothing to measure yet");
    }
}
