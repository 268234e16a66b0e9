package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bash completion from a source tree, as a user gets it ({@code source <(nvmeof completion)}):
 * the script bash runs offers the words an option takes and a configuration's subsystems; and
 * {@code nvmeof} alone says how to get completion and the man pages.
 */
class CompletionTest {
    @TempDir
    Path dir;

    /** What bash's completion of nvmeof offers after {@code words} (the last one being completed). */
    private String complete(Path script, String... words) throws Exception {
        StringBuilder argv = new StringBuilder();
        for (String w : words) {
            argv.append(" '").append(w).append("'");
        }
        String program = "source " + script + "\nCOMP_WORDS=(" + argv + ")\nCOMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n"
                + "COMP_LINE=\"${COMP_WORDS[*]}\"\nCOMP_POINT=${#COMP_LINE}\nCOMPREPLY=()\n_complete_nvmeof 2>/dev/null\n"
                + "echo \"${COMPREPLY[*]}\"\n";
        Process p = new ProcessBuilder("bash", "-c", program).redirectErrorStream(false).start();
        String out = new String(p.getInputStream().readAllBytes()).trim();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), new String(p.getErrorStream().readAllBytes()));
        return out;
    }

    @Test
    void completionOffersValuesAndTheSubsystemsOfAConfiguration() throws Exception {
        Path config = Files.writeString(dir.resolve("target.json"), "{\"subsystems\": [{\"nqn\": \"nqn.2026-12.io.example:vol1\","
                + " \"namespaces\": []}, {\"nqn\": \"nqn.2026-12.io.example:vol2\"}]}");
        TargetProcess.Run r = TargetProcess.cli(60, "completion", "--config", config.toString());
        assertEquals(0, r.exit(), r.err());
        Path script = Files.writeString(dir.resolve("nvmeof.bash"), r.out());
        assertEquals("read write randread randwrite rw randrw", complete(script, "nvmeof", "bench", "--rw", ""));
        assertEquals("randread randwrite randrw", complete(script, "nvmeof", "bench", "--rw", "rand"));
        assertEquals("rdma tcp", complete(script, "nvmeof", "discover", "-t", ""));
        assertEquals("adaptive always off", complete(script, "nvmeof", "bench", "--busy-poll", ""));
        assertEquals("normal json json+", complete(script, "nvmeof", "bench", "-o", ""));
        assertEquals("numa round-robin queue-depth", complete(script, "nvmeof", "id-ctrl", "--iopolicy", ""));
        assertEquals("crc32c md5 pattern", complete(script, "nvmeof", "bench", "--verify", ""));
        assertEquals("nqn.2026-12.io.example:vol1 nqn.2026-12.io.example:vol2",
                complete(script, "nvmeof", "ns", "add", "--subsystem", ""));
        assertEquals("bench", complete(script, "nvmeof", "benc"));

        // without a configuration, no subsystem is offered (and none of the machine's leaks in)
        TargetProcess.Run plain = TargetProcess.cli(60, "completion");
        Path bare = Files.writeString(dir.resolve("bare.bash"), plain.out());
        assertTrue(!complete(bare, "nvmeof", "ns", "add", "--subsystem", "").contains("nqn."));

        TargetProcess.Run usage = TargetProcess.cli(60);
        assertEquals(0, usage.exit(), usage.err());
        String said = usage.out().replaceAll("\\s+", " ");
        assertTrue(said.contains("source <(nvmeof completion)") && said.contains("man -l packaging/build/man/nvmeof-bench.1.gz"),
                usage.out());
    }
}
