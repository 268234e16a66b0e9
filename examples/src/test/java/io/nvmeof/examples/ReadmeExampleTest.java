package io.nvmeof.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The README's example is this module's test, word for word: what users copy is what runs. */
class ReadmeExampleTest {
    @Test
    void theReadmeShowsTheTestThatRuns() throws IOException {
        String readme = Files.readString(Path.of("../README.md"));
        String test = Files.readString(Path.of("src/test/java/io/nvmeof/examples/RecordStoreTest.java"));
        String start = "@NvmeofTarget(namespaces";
        int at = readme.indexOf(start);
        assertTrue(at > 0, "the README has no @NvmeofTarget example");
        String shown = readme.substring(at, readme.indexOf("```", at)).strip();
        assertEquals(test.substring(test.indexOf(start)).strip(), shown);
    }
}
