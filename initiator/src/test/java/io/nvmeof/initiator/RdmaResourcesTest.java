package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.fabric.rdma.RdmaTuning;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Controllers on the same loops with the same settings share one provider and its buffers; the last one closes them. */
class RdmaResourcesTest {
    @Test
    void sharedByEveryControllerOfTheSameLoopsAndSettings() throws Exception {
        EventLoopGroup group = EventLoops.newGroup(1, "rdma-resources-test");
        EventLoopGroup other = EventLoops.newGroup(1, "rdma-resources-test-other");
        RdmaTuning tuning = ConnectOptions.defaults().rdmaTuning();
        try {
            RdmaResources a = RdmaResources.acquire("soft", group, tuning, false);
            RdmaResources b = RdmaResources.acquire("soft", group, ConnectOptions.defaults().rdmaTuning(), false);
            assertSame(a, b, "the same loops and settings: one provider");
            RdmaResources c = RdmaResources.acquire("soft", other, tuning, false);
            RdmaResources d = RdmaResources.acquire("soft", group, tuning, true);
            assertNotSame(a, c, "other loops: a provider of their own");
            assertNotSame(a, d, "registering user buffers or not: apart");
            a.release();
            assertSame(b, RdmaResources.acquire("soft", group, tuning, false), "one user left: still open");
            b.release();
            b.release();
            RdmaResources e = RdmaResources.acquire("soft", group, tuning, false);
            assertNotSame(a, e, "after the last release, a new one");
            e.release();
            c.release();
            d.release();
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            other.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
