package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.cli.CommandReference;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** docs/reference/commands.md is what the command line's own model makes, and the README and the target guide link it. */
class CommandReferenceTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void theCommandsPageIsTheGeneratedOne() throws IOException {
        Path file = ROOT.resolve("docs/reference/commands.md");
        String made = CommandReference.markdown();
        String now = Files.exists(file) ? Files.readString(file) : "";
        if (!now.equals(made) && Boolean.getBoolean("nvmeof.writeDocs")) {
            Files.writeString(file, made);
            now = made;
        }
        assertEquals(made, now, "docs/reference/commands.md differs from what the commands make; run this test with"
                + " -Dnvmeof.writeDocs=true to write it");
        for (String command : new String[] {"## `nvmeof target`", "## `nvmeof ns add`", "## `nvmeof qos set`",
            "## `nvmeof ana set`", "--rw-ios-per-second"}) {
            assertTrue(made.contains(command), command);
        }
        assertTrue(Files.readString(ROOT.resolve("README.md")).contains("(docs/reference/commands.md)"),
                "README.md links docs/reference/commands.md");
        assertTrue(Files.readString(ROOT.resolve("docs/guide/target.md")).contains("(../reference/commands.md)"),
                "docs/guide/target.md links docs/reference/commands.md");
    }
}
