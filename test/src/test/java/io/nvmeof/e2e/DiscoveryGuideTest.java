package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/guide/discovery.md's copy-paste lab "A discovery lab on one machine, from nothing", run as
 * it is written: every {@code sh} block in order, in one bash with {@code -e}, from the
 * repository's root, with the launcher: a CDC announced over mDNS and two targets registering
 * with it in network namespaces; a host finds both volumes having been told nothing, and the
 * killed target's volume leaves the CDC's log. Root only.
 */
class DiscoveryGuideTest {
    private static final String CLEANUP = "kill ${cdc:-} ${t1:-} ${t2:-} 2>/dev/null || true; sleep 1; "
            + "test/net/netns-lab.sh destroy disco >/dev/null 2>&1 || true";

    @Test
    void aDiscoveryLabOnOneMachineFromNothing() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "skipped: the guide's path runs as root");
        List<String> blocks = GuidePath.blocks("docs/guide/discovery.md", "## A discovery lab on one machine, from nothing");
        assertEquals(5, blocks.size(), "the section's sh blocks");
        GuidePath.run(List.of("test/net/netns-lab.sh destroy disco"), "true", 60); // a killed run's namespaces
        String text = GuidePath.run(blocks, CLEANUP, 240);
        System.out.println(text);
        assertTrue(text.contains("mDNS service 'nvmeof ") && text.contains("at nvme+tcp://10.78.0.11:8009"), text);
        assertTrue(text.contains("IOPS="), "the host used vol1 through what it found: " + text);
        // the mDNS block lists both volumes; after the kill, the CDC lists vol1 alone
        assertEquals(2, count(text, "subnqn:  nqn.2026-12.io.example:vol1"), text);
        assertEquals(1, count(text, "subnqn:  nqn.2026-12.io.example:vol2"), text);
    }

    private static int count(String text, String what) {
        return (int) Pattern.compile(Pattern.quote(what)).matcher(text).results().count();
    }
}
