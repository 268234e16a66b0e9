package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The guide pages' copy-paste paths that run on one machine as any user, as they are written (the
 * RBD page's is {@link RbdGuideTest}; the embedded target's is the examples module's
 * ReadmeExampleTest). Each starts the launcher on port 4420 of loopback.
 */
class GuidePathsTest {

    @Test
    void aFirstTargetServesAndAnswersIdentify() throws Exception {
        List<String> blocks = GuidePath.blocks("docs/guide/target.md", "## A first target");
        assertEquals(2, blocks.size(), "the section's sh blocks");
        String text = GuidePath.run(blocks, "if [ -n \"${lab:-}\" ]; then rm -rf \"$lab\"; fi", 120);
        assertTrue(text.contains("nqn.2026-11.io.example:disk1"), text);
    }

    @Test
    void aFirstBenchmarkWritesReadsBackAndMeasures() throws Exception {
        List<String> blocks = GuidePath.blocks("docs/guide/benchmarking.md", "## A first benchmark");
        assertEquals(2, blocks.size(), "the section's sh blocks");
        String text = GuidePath.run(blocks, "if [ -n \"${lab:-}\" ]; then rm -rf \"$lab\"; fi", 120);
        assertTrue(text.contains("read back what was written"), text);
        assertTrue(text.contains("IOPS"), text);
    }
}
