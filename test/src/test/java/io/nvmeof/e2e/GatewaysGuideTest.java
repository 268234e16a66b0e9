package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/guide/gateways.md's copy-paste path "Two gateways on separate machines, from nothing", run
 * as it is written: every {@code sh} block in order, in one bash with {@code -e}, from the
 * repository's root: the namespaced machines, a throwaway cluster, two gateways with the
 * launcher, a host benchmarking through both while the owner is killed. Root only, and where
 * Ceph's packages are there.
 */
class GatewaysGuideTest {
    private static final String CLEANUP = "kill ${a:-} ${b:-} ${bench:-} 2>/dev/null || true; sleep 1; "
            + "if [ -n \"${lab:-}\" ]; then ip netns exec gwguide-ceph test/ceph/ceph-cluster.sh stop \"$lab/ceph\""
            + " >/dev/null 2>&1 || true; fi; test/net/netns-lab.sh destroy gwguide >/dev/null 2>&1 || true";

    @Test
    void twoGatewaysOnSeparateMachinesFromNothing() throws Exception {
        GuidePath.assumeRootWithCeph();
        List<String> blocks = GuidePath.blocks("docs/guide/gateways.md", "### Two gateways on separate machines, from nothing");
        assertEquals(4, blocks.size(), "the section's sh blocks");
        GuidePath.run(List.of("test/net/netns-lab.sh destroy gwguide"), "true", 60); // a killed run's namespaces
        String text = GuidePath.run(blocks, CLEANUP, 300);
        System.out.println(text);
        assertTrue(text.contains("b owns group 1"), text);
        assertTrue(text.matches("(?s).*fenced a \\(client 10\\.77\\.0\\.11:0/\\d+\\).*"), "b fenced a's client: " + text);
        Matcher listed = Pattern.compile("10\\.77\\.0\\.11:0/\\d+ \\d{4}-").matcher(text);
        assertTrue(listed.find(), "Ceph's blocklist holds a's client: " + text);
        assertTrue(text.contains(", 0 bad"), "every block the host wrote verified: " + text);
    }
}
