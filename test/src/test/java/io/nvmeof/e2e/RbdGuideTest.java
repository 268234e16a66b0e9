package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.backend.CephCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * docs/guide/rbd.md's copy-paste path, run as it is written: its section "From nothing to a host
 * reading an image", every {@code sh} block in order, in one bash with {@code -e}, from the
 * repository's root, with the launcher and a throwaway cluster. Root only (it installs packages,
 * which .ci/run has installed already), and where Ceph's packages are there.
 */
class RbdGuideTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void theGuidesPathFromNothingToAHostReadingAnImageRuns() throws Exception {
        Assumptions.assumeTrue(CephCluster.available(), "skipped: Ceph's packages are not installed; .ci/run installs them");
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "skipped: the guide's path runs as root");
        String guide = Files.readString(ROOT.resolve("docs/guide/rbd.md"));
        int from = guide.indexOf("## From nothing to a host reading an image");
        int to = guide.indexOf("\n## ", from + 1);
        List<String> blocks = new ArrayList<>();
        Matcher m = Pattern.compile("```sh\n(.*?)```", Pattern.DOTALL).matcher(guide.substring(from, to));
        while (m.find()) {
            blocks.add(m.group(1));
        }
        assertEquals(3, blocks.size(), "the section's sh blocks");
        // a failing step leaves nothing running: the target and the cluster end with the shell
        String cleanup = "trap 'kill ${target:-} 2>/dev/null || true; if [ -n \"${lab:-}\" ]; then"
                + " test/ceph/ceph-cluster.sh stop \"$lab/ceph\" >/dev/null 2>&1 || true; fi' EXIT\n";
        ProcessBuilder pb = new ProcessBuilder("bash", "-euo", "pipefail", "-c", cleanup + String.join("\n", blocks))
                .directory(ROOT.toFile()).redirectErrorStream(true);
        pb.environment().put("NVMEOF_NO_BUILD", "1"); // the jar this build made
        pb.environment().put("DEBIAN_FRONTEND", "noninteractive");
        Process p = pb.start();
        byte[][] out = new byte[1][];
        Thread reader = new Thread(() -> {
            try {
                out[0] = p.getInputStream().readAllBytes();
            } catch (java.io.IOException e) {
                out[0] = new byte[0];
            }
        });
        reader.start();
        boolean ended = p.waitFor(300, TimeUnit.SECONDS);
        if (!ended) {
            p.destroyForcibly();
        }
        reader.join(10_000);
        String text = out[0] == null ? "" : new String(out[0], StandardCharsets.UTF_8);
        assertTrue(ended, "the guide's path did not end within 300 s:\n" + text);
        assertEquals(0, p.exitValue(), text);
        assertTrue(text.contains("read back what rbd import wrote"), text);
    }
}
