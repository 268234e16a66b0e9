package io.nvmeof.daemon.config;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.nvmeof.fuzz.FuzzRuns;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;

/**
 * The config loader with arbitrary documents, ours and nvmetcli's (seeds: a valid one of each):
 * a config, or a {@link ConfigException} naming the field in error; never another exception.
 */
class ConfigLoaderFuzzTest {
    private static final FuzzRuns RUNS = new FuzzRuns("config loader",
            ConfigLoaderFuzzTest.class, "anyDocumentGivesAConfigOrAnErrorNamingAField");

    @FuzzTest(maxDuration = "10m")
    void anyDocumentGivesAConfigOrAnErrorNamingAField(byte[] data) {
        RUNS.count();
        long t0 = System.nanoTime();
        String text = new String(data, StandardCharsets.UTF_8);
        try {
            assertNotNull(ConfigLoader.parse(text));
        } catch (ConfigException e) {
            assertNotNull(e.field());
            assertFalse(e.field().isBlank(), "an error names its field: " + e.getMessage());
            assertTrue(e.getMessage().startsWith(e.field() + ": "), e.getMessage());
        }
        RUNS.spent(System.nanoTime() - t0);
    }

    @AfterAll
    static void report() {
        RUNS.report();
    }
}
