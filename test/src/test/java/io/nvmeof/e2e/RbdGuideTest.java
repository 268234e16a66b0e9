package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docs/guide/rbd.md's copy-paste path, run as it is written: its section "From nothing to a host
 * reading an image", every {@code sh} block in order, in one bash with {@code -e}, from the
 * repository's root, with the launcher and a throwaway cluster. Root only (it installs packages,
 * which .ci/run has installed already), and where Ceph's packages are there.
 */
class RbdGuideTest {

    @Test
    void theGuidesPathFromNothingToAHostReadingAnImageRuns() throws Exception {
        GuidePath.assumeRootWithCeph();
        List<String> blocks = GuidePath.blocks("docs/guide/rbd.md", "## From nothing to a host reading an image");
        assertEquals(3, blocks.size(), "the section's sh blocks");
        // the cluster ends with the shell too
        String text = GuidePath.run(blocks, "if [ -n \"${lab:-}\" ]; then"
                + " test/ceph/ceph-cluster.sh stop \"$lab/ceph\" >/dev/null 2>&1 || true; fi", 300);
        assertTrue(text.contains("read back what rbd import wrote"), text);
    }
}
