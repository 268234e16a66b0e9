package io.nvmeof.fabric.rdma.soft;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.fabric.rdma.RdmaProviderConformance;
import io.nvmeof.fabric.rdma.RdmaProviderConformance.Violation;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The provider conformance checks against the soft provider over loopback. */
class SoftProviderTest {
    private static EventLoopGroup group;
    private static SoftProvider provider;
    private static RdmaProviderConformance conformance;

    @BeforeAll
    static void start() {
        group = EventLoops.newGroup(2, "soft-rdma-test");
        provider = new SoftProvider(group);
        conformance = new RdmaProviderConformance(provider, new InetSocketAddress("127.0.0.1", 0));
    }

    @AfterAll
    static void stop() {
        provider.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    @Test
    void privateDataBothWays() throws Exception {
        conformance.privateDataBothWays();
    }

    @Test
    void rejectCarriesPrivateData() throws Exception {
        conformance.rejectCarriesPrivateData();
    }

    @Test
    void dataMovement() throws Exception {
        conformance.dataMovement();
    }

    @Test
    void useAfterCloseThrows() throws Exception {
        conformance.useAfterCloseThrows();
    }

    static Stream<Violation> violations() {
        return RdmaProviderConformance.violations().stream();
    }

    @ParameterizedTest
    @MethodSource("violations")
    void accessViolationFailsTheConnectionAndTouchesNothing(Violation v) throws Exception {
        conformance.accessViolation(v);
    }
}
