package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command line prints no warning of the JDK's on any Java it runs on (17, 21, 25: whichever
 * of them this machine has under /usr/lib/jvm): not about Netty's and jnr-ffi's native calls
 * (restricted methods, JDK 22+), not about sun.misc.Unsafe's memory access (JDK 24+). Through
 * the launcher (./nvmeof, which runs the installed one: the systemd unit's), and through
 * {@code java -jar} (the jar's manifest allows native access). The run is the README's first
 * command, which loads the native transport and moves data both ways.
 */
class LauncherTest {
    @Test
    void noJdkWarnsOnAnyJavaWeRunOn(@TempDir Path dir) throws Exception {
        List<Path> homes = javaHomes();
        Assumptions.assumeFalse(homes.isEmpty(), "no Java 17, 21 or 25 under /usr/lib/jvm");
        List<String> ran = new ArrayList<>();
        for (Path home : homes) {
            String viaLauncher = run(dir, home, List.of("../nvmeof", "demo", "--runtime", "1"));
            String viaJar = run(dir, home, List.of(home.resolve("bin/java").toString(), "-jar",
                    TargetProcess.JAR.toString(), "demo", "--runtime", "1"));
            for (String err : List.of(viaLauncher, viaJar)) {
                assertFalse(err.contains("WARNING"), home + " printed a warning:\n" + err);
            }
            ran.add(home.getFileName().toString());
        }
        System.out.println("no JDK warning from ./nvmeof or java -jar on " + ran);
    }

    /** The JDKs of the versions we support that this machine has, one per feature version. */
    private static List<Path> javaHomes() throws IOException {
        List<Path> homes = new ArrayList<>();
        Path jvm = Path.of("/usr/lib/jvm");
        if (!Files.isDirectory(jvm)) {
            return homes;
        }
        List<String> seen = new ArrayList<>();
        try (Stream<Path> s = Files.list(jvm).sorted()) {
            for (Path home : s.toList()) {
                Path release = home.resolve("release");
                if (Files.isSymbolicLink(home) || !Files.isRegularFile(release) || !Files.isExecutable(home.resolve("bin/java"))) {
                    continue;
                }
                String feature = Files.readAllLines(release).stream().filter(l -> l.startsWith("JAVA_VERSION="))
                        .map(l -> l.replaceAll("JAVA_VERSION=\"(\\d+).*", "$1")).findFirst().orElse("");
                if (List.of("17", "21", "25").contains(feature) && !seen.contains(feature)) {
                    seen.add(feature);
                    homes.add(home);
                }
            }
        }
        return homes;
    }

    /** Runs {@code command} with {@code home} as JAVA_HOME; its stderr, after a clean exit. */
    private static String run(Path dir, Path home, List<String> command) throws Exception {
        Path err = Files.createTempFile(dir, "err", ".txt");
        ProcessBuilder pb = new ProcessBuilder(command).redirectError(err.toFile())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put("JAVA_HOME", home.toString());
        pb.environment().put("NVMEOF_JAR", TargetProcess.JAR.toString());
        pb.environment().put("NVMEOF_NO_BUILD", "1");
        Process p = pb.start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), command + " did not end");
        String text = Files.readString(err, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), command + " on " + home + ":\n" + text);
        return text;
    }
}
