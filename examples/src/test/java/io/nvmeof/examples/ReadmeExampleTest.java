package io.nvmeof.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The example of docs/guide/embedded-target.md (it was the README's, hence the name) is this module's
 * application and test, word for word: what users copy is what runs.
 */
class ReadmeExampleTest {
    @Test
    void theReadmeShowsTheApplicationAndTheTestThatRun() throws IOException {
        String readme = Files.readString(Path.of("../docs/guide/embedded-target.md"));
        assertShown(readme, "public final class RecordStore", "src/main/java/io/nvmeof/examples/RecordStore.java");
        assertShown(readme, "@NvmeofTarget(namespaces", "src/test/java/io/nvmeof/examples/RecordStoreTest.java");
    }

    /** The page's Java block holding {@code marker} is the file after its package line: imports too, so it compiles as pasted. */
    private static void assertShown(String readme, String marker, String file) throws IOException {
        String source = Files.readString(Path.of(file));
        int example = readme.indexOf(marker);
        assertTrue(example > 0, "docs/guide/embedded-target.md does not show " + file);
        int at = readme.lastIndexOf("```java\n", example) + "```java\n".length();
        String shown = readme.substring(at, readme.indexOf("```", at)).strip();
        assertEquals(source.substring(source.indexOf("import ")).strip(), shown, file);
    }
}
