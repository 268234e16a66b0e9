package io.nvmeof.fabric.rdma.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.fabric.rdma.RdmaProvider;
import io.nvmeof.fabric.rdma.RdmaProviders;
import io.nvmeof.fabric.rdma.RdmaUnavailableException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Without libdisni (it cannot be built on the development machines) opening the provider fails
 * at once with one message that names libdisni and says how to get it. Skipped where libdisni
 * loads.
 */
class DisniProviderTest {
    private static EventLoopGroup group;

    @BeforeAll
    static void start() {
        group = EventLoops.newGroup(1, "disni-test");
    }

    @AfterAll
    static void stop() {
        group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
    }

    private static RdmaUnavailableException openFails() {
        try {
            RdmaProvider p = DisniProvider.open(group);
            p.close();
            Assumptions.abort("libdisni loads here");
            return null;
        } catch (RdmaUnavailableException e) {
            return e;
        }
    }

    @Test
    void missingLibdisniIsOneClearMessage() {
        RdmaUnavailableException e = openFails();
        String m = e.getMessage();
        assertTrue(m.startsWith("DiSNI provider: libdisni not found on java.library.path ("
                + System.getProperty("java.library.path") + "): "), m);
        assertTrue(m.contains("build it from DiSNI 2.1's sources (libdisni, needs rdma-core's librdmacm/libibverbs dev "
                + "packages) and put libdisni.so on LD_LIBRARY_PATH or -Djava.library.path"), m);
        assertTrue(m.contains("on Java 17 also run with --add-exports java.base/sun.nio.ch=ALL-UNNAMED"), m);
        assertTrue(m.endsWith("or use --rdma-provider verbs (rdma-core only) or soft"), m);
        assertEquals(-1, m.indexOf('\n'), "one line");
        // what DiSNI itself threw: the UnsatisfiedLinkError of System.loadLibrary("disni") in
        // NativeDispatcher's static initializer (or, after the first attempt, the
        // NoClassDefFoundError that carries it)
        assertTrue(e.getCause() instanceof UnsatisfiedLinkError || e.getCause() instanceof NoClassDefFoundError,
                String.valueOf(e.getCause()));
    }

    @Test
    void everyAttemptFailsTheSameWay() {
        RdmaUnavailableException first = openFails();
        RdmaUnavailableException second = openFails();
        assertEquals(first.getMessage(), second.getMessage());
    }

    @Test
    void providersOpenDisniTheSameWay() {
        RdmaUnavailableException direct = openFails();
        RdmaUnavailableException byName = assertThrows(RdmaUnavailableException.class,
                () -> RdmaProviders.open("disni", group));
        assertEquals(direct.getMessage(), byName.getMessage());
    }

    /** Repeated loads after the first failure: DiSNI's class is then unusable, and says so differently. */
    @Test
    void disniItselfFailsWithLinkageErrors() {
        Assumptions.assumeTrue(openFails() != null);
        LinkageError e = assertThrows(LinkageError.class, () -> com.ibm.disni.verbs.RdmaProvider.provider());
        assertTrue(e instanceof NoClassDefFoundError || e instanceof UnsatisfiedLinkError, e.toString());
        assertTrue(DisniAvailability.describe(e, "/x").startsWith("DiSNI provider: libdisni not found on "
                + "java.library.path (/x): "), DisniAvailability.describe(e, "/x"));
    }
}
