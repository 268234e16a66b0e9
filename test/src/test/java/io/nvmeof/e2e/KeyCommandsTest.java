package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The key tools of the real jar take a key from a file or standard input, so that it need not
 * be on a command line that {@code ps} shows; a file others could read or change is refused.
 */
class KeyCommandsTest {
    @TempDir
    Path dir;

    private static TargetProcess.Run withInput(Path input, String... args) throws Exception {
        Process p = new ProcessBuilder(TargetProcess.java(args)).redirectInput(input.toFile()).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "exited");
        return new TargetProcess.Run(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    @Test
    void checkCommandsReadTheKeyFromAPrivateFileOrStandardInput() throws Exception {
        TargetProcess.Run gen = TargetProcess.cli(60, "gen-dhchap-key", "--hmac", "2", "--nqn", "nqn.2026-11.io.nvmeof:k");
        assertEquals(0, gen.exit(), gen.err());
        String dhchap = gen.out().trim();
        TargetProcess.Run tls = TargetProcess.cli(60, "gen-tls-key");
        assertEquals(0, tls.exit(), tls.err());
        Path dk = Files.writeString(dir.resolve("dh.key"), dhchap + "\n");
        Path tk = Files.writeString(dir.resolve("tls.key"), tls.out().trim() + "\n");
        for (Path k : new Path[] {dk, tk}) {
            Files.setPosixFilePermissions(k, PosixFilePermissions.fromString("rw-------"));
        }
        TargetProcess.Run r = TargetProcess.cli(60, "check-dhchap-key", "--key-file", dk.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("Key is valid (transformed with hmac(sha384)"), r.out());
        r = withInput(dk, "check-dhchap-key", "--key-file", "-");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().startsWith("Key is valid"), r.out());
        r = TargetProcess.cli(60, "check-tls-key", "--key-file", tk.toString());
        assertEquals(0, r.exit(), r.err());
        r = withInput(tk, "check-tls-key", "--key-file", "-");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().startsWith("Key is valid (HMAC"), r.out());
        // a key others can change is no key to trust
        Files.setPosixFilePermissions(dk, PosixFilePermissions.fromString("rw-rw----"));
        r = TargetProcess.cli(60, "check-dhchap-key", "--key-file", dk.toString());
        assertEquals(1, r.exit(), r.out());
        assertTrue(r.err().contains("chmod g-w"), r.err());
        r = TargetProcess.cli(60, "check-dhchap-key");
        assertEquals(1, r.exit(), r.out());
        assertTrue(r.err().contains("exactly one of --key and --key-file"), r.err());
    }
}
