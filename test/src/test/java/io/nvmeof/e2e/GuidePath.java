package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.backend.CephCluster;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;

/**
 * A guide page's copy-paste path, run as it is written: the {@code sh} blocks of one section, in
 * order, in one bash with {@code -euo pipefail}, from the repository's root, with the launcher and
 * the jar this build made. A failing step leaves nothing running: the shell's {@code $target}
 * process ends with it, and whatever {@code cleanup} adds.
 */
final class GuidePath {
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    private GuidePath() {
    }

    /** Skips the test unless it runs as root where Ceph's packages are (the Ceph guides' paths install packages). */
    static void assumeRootWithCeph() {
        Assumptions.assumeTrue(CephCluster.available(), "skipped: Ceph's packages are not installed; .ci/run installs them");
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "skipped: the guide's path runs as root");
    }

    /** The {@code sh} blocks of the section that starts with {@code heading} (up to the next "## "). */
    static List<String> blocks(String page, String heading) throws IOException {
        String guide = Files.readString(ROOT.resolve(page));
        int from = guide.indexOf("\n" + heading + "\n");
        assertTrue(from >= 0, page + " has no section " + heading);
        int to = guide.indexOf("\n## ", from + 1);
        List<String> blocks = new ArrayList<>();
        Matcher m = Pattern.compile("```sh\n(.*?)```", Pattern.DOTALL)
                .matcher(guide.substring(from, to < 0 ? guide.length() : to));
        while (m.find()) {
            blocks.add(m.group(1));
        }
        return blocks;
    }

    /** Runs the blocks; asserts that they end within {@code seconds}, with status 0; returns what they printed. */
    static String run(List<String> blocks, String cleanup, int seconds) throws Exception {
        String trap = "trap 'kill ${target:-} 2>/dev/null || true; " + cleanup + "' EXIT\n";
        ProcessBuilder pb = new ProcessBuilder("bash", "-euo", "pipefail", "-c", trap + String.join("\n", blocks))
                .directory(ROOT.toFile()).redirectErrorStream(true);
        pb.environment().put("NVMEOF_NO_BUILD", "1"); // the jar this build made
        pb.environment().put("DEBIAN_FRONTEND", "noninteractive");
        Process p = pb.start();
        byte[][] out = new byte[1][];
        Thread reader = new Thread(() -> {
            try {
                out[0] = p.getInputStream().readAllBytes();
            } catch (IOException e) {
                out[0] = new byte[0];
            }
        });
        reader.start();
        boolean ended = p.waitFor(seconds, TimeUnit.SECONDS);
        if (!ended) {
            p.destroyForcibly();
        }
        reader.join(10_000);
        String text = out[0] == null ? "" : new String(out[0], StandardCharsets.UTF_8);
        assertTrue(ended, "the guide's path did not end within " + seconds + " s:\n" + text);
        assertEquals(0, p.exitValue(), text);
        return text;
    }
}
