package io.nvmeof.fabric.rdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import io.nvmeof.fabric.rdma.RdmaProviders;
import io.nvmeof.fabric.rdma.RdmaUnavailableException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Where verbs cannot run, opening it fails at once with the one message for what is missing:
 * the rdma-core packages, an RDMA device, or the rdma_cm device node. Skipped on a machine with
 * an RDMA device (VerbsSelfTest covers that, inside a guest with soft-RoCE).
 */
class VerbsUnavailableTest {
    private static EventLoopGroup group;

    @BeforeAll
    static void start() {
        group = new DefaultEventLoopGroup(1);
    }

    @AfterAll
    static void stop() {
        group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
    }

    private static boolean rdmaDeviceExists() throws IOException {
        Path sys = Path.of("/sys/class/infiniband");
        if (!Files.isDirectory(sys)) {
            return false;
        }
        try (Stream<Path> s = Files.list(sys)) {
            return s.findAny().isPresent();
        }
    }

    @Test
    void openNamesWhatIsMissing() throws IOException {
        boolean libraries = Native.librariesInstalled();
        Assumptions.assumeFalse(libraries && rdmaDeviceExists(), "an RDMA device exists here");
        RdmaUnavailableException e = assertThrows(RdmaUnavailableException.class, () -> VerbsProvider.open(group));
        if (!libraries) {
            assertEquals(Native.MISSING_LIBRARIES, e.getMessage());
            assertTrue(e.getMessage().contains("librdmacm1 libibverbs1 ibverbs-providers"), e.getMessage());
        } else {
            assertEquals(VerbsProvider.NO_DEVICE, e.getMessage());
            assertTrue(e.getMessage().contains("modprobe rdma_rxe"), e.getMessage());
        }
        assertEquals(-1, e.getMessage().indexOf('\n'), "one line");
    }

    @Test
    void providersOpenVerbsTheSameWay() throws IOException {
        Assumptions.assumeFalse(Native.librariesInstalled() && rdmaDeviceExists(), "an RDMA device exists here");
        RdmaUnavailableException direct = assertThrows(RdmaUnavailableException.class, () -> VerbsProvider.open(group));
        RdmaUnavailableException byName = assertThrows(RdmaUnavailableException.class,
                () -> RdmaProviders.open("verbs", group));
        assertEquals(direct.getMessage(), byName.getMessage());
    }

    @Test
    void missingLibrariesNameThePackages() {
        RdmaUnavailableException e = assertThrows(RdmaUnavailableException.class,
                () -> Native.load("librdmacm-not-installed.so.1", "libibverbs-not-installed.so.1"));
        assertEquals("rdma-core libraries not found (librdmacm.so.1, libibverbs.so.1): install the Debian/Ubuntu "
                + "packages librdmacm1 libibverbs1 ibverbs-providers (rdma-core on RHEL/Fedora)", e.getMessage());
    }
}
