package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.backend.CephCluster;
import io.nvmeof.target.backend.RbdCluster;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A gateway that the cluster fences and that cannot rejoin at once (its first new client fails)
 * retries on every tick, reports its groups inaccessible meanwhile, and counts the fencing once:
 * {@code times_fenced} is how often the cluster fenced it, not how often it tried to come back.
 */
class GatewayGroupRejoinTest {
    @RegisterExtension
    static final CephCluster.PerClass CEPH = new CephCluster.PerClass();

    @Test
    void aFailedRejoinIsRetriedAndCountsAsOneFencing() throws Exception {
        RbdCluster.Key key = new RbdCluster.Key(CEPH.get().conf().toString(), null);
        AtomicInteger attempts = new AtomicInteger();
        GatewayGroup.Rejoin rejoin = fenced -> {
            if (attempts.incrementAndGet() < 3) {
                throw new IOException("the cluster is not there yet (attempt " + attempts.get() + ")");
            }
            fenced.retire();
            return RbdCluster.connect(key, 10_000, 3_000);
        };
        GatewayGroup.Config config = new GatewayGroup.Config("rejoin", "a", Map.of("a", "127.0.0.1"), "rbd",
                new TreeMap<>(Map.of(1, "a")), false, 0, 2000);
        try (Target target = new Target();
             GatewayGroup group = new GatewayGroup(config, target, RbdCluster.connect(key, 10_000, 3_000), rejoin)) {
            Awaitility.await("the lease").atMost(Duration.ofSeconds(30))
                    .until(() -> group.states().get(0).role() == GatewayGroup.Role.OWNER);
            String client = group.events().get(0).what().replaceAll(".* through ", "");
            CEPH.get().ceph("osd", "blocklist", "add", client);
            Awaitility.await("fenced, two failed rejoins, then back").atMost(Duration.ofSeconds(60))
                    .until(() -> group.events().stream().anyMatch(e -> e.what().startsWith("rejoined through")));
            assertEquals(3, attempts.get(), "rejoined at the third attempt");
            assertEquals(1, group.timesFenced(), "one fencing, however many attempts: " + group.events());
            assertEquals(2, group.events().stream().filter(e -> e.what().startsWith("could not rejoin yet")).count(),
                    group.events().toString());
            assertEquals(1, group.events().stream().filter(e -> e.what().startsWith("fenced by the cluster")).count(),
                    group.events().toString());
            Awaitility.await("owner again, through the new client").atMost(Duration.ofSeconds(30))
                    .until(() -> group.states().get(0).role() == GatewayGroup.Role.OWNER);
            String back = group.events().stream().filter(e -> e.what().startsWith("rejoined through")).findFirst()
                    .orElseThrow().what();
            assertTrue(!back.contains(client), "a new client: " + back + ", not " + client);
        }
    }
}
