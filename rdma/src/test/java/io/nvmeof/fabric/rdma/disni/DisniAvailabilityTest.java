package io.nvmeof.fabric.rdma.disni;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.fabric.rdma.RdmaUnavailableException;
import org.junit.jupiter.api.Test;

class DisniAvailabilityTest {
    private static final String PATH = "/usr/java/packages/lib:/usr/lib/x86_64-linux-gnu/jni:/lib";

    @Test
    void libraryNotOnThePath() {
        String m = DisniAvailability.describe(new UnsatisfiedLinkError("no disni in java.library.path: " + PATH), PATH);
        assertEquals("DiSNI provider: libdisni not found on java.library.path (" + PATH + "): build it from DiSNI 2.1's "
                + "sources (libdisni, needs rdma-core's librdmacm/libibverbs dev packages) and put libdisni.so on "
                + "LD_LIBRARY_PATH or -Djava.library.path; on Java 17 also run with --add-exports "
                + "java.base/sun.nio.ch=ALL-UNNAMED; or use --rdma-provider verbs (rdma-core only) or soft", m);
    }

    @Test
    void laterAttemptsCarryTheFirstFailureInTheirCause() {
        // what Java 17 throws on the second use of a class whose static initializer failed
        NoClassDefFoundError e = new NoClassDefFoundError("Could not initialize class com.ibm.disni.verbs.impl.NativeDispatcher");
        e.initCause(new ExceptionInInitializerError("Exception java.lang.UnsatisfiedLinkError: no disni in "
                + "java.library.path: " + PATH + " [in thread \"main\"]"));
        assertTrue(DisniAvailability.describe(e, PATH).startsWith("DiSNI provider: libdisni not found on java.library.path ("
                + PATH + "): build it"));
    }

    @Test
    void libraryFoundButRdmaCoreMissing() {
        String m = DisniAvailability.describe(new UnsatisfiedLinkError("/opt/disni/libdisni.so: librdmacm.so.1: cannot "
                + "open shared object file: No such file or directory"), PATH);
        assertTrue(m.startsWith("DiSNI provider: libdisni could not be loaded (/opt/disni/libdisni.so: librdmacm.so.1: "
                + "cannot open shared object file: No such file or directory): it needs rdma-core's librdmacm and "
                + "libibverbs"), m);
        assertTrue(m.contains("apt install librdmacm1 libibverbs1 ibverbs-providers"), m);
        assertTrue(m.endsWith("or use --rdma-provider verbs (rdma-core only) or soft"), m);
    }

    @Test
    void laterAttemptsQuoteTheFirstFailure() {
        NoClassDefFoundError e = new NoClassDefFoundError("Could not initialize class com.ibm.disni.verbs.impl.NativeDispatcher");
        e.initCause(new ExceptionInInitializerError("Exception java.lang.UnsatisfiedLinkError: /opt/disni/libdisni.so: "
                + "libibverbs.so.1: cannot open shared object file: No such file or directory [in thread \"main\"]"));
        assertTrue(DisniAvailability.describe(e, PATH).startsWith("DiSNI provider: libdisni could not be loaded "
                + "(/opt/disni/libdisni.so: libibverbs.so.1: cannot open shared object file: No such file or directory): "),
                DisniAvailability.describe(e, PATH));
    }

    @Test
    void libraryOfAnotherDisniVersion() {
        String m = DisniAvailability.describe(new UnsatisfiedLinkError(
                "'int com.ibm.disni.verbs.impl.NativeDispatcher._getVersion()'"), PATH);
        assertTrue(m.startsWith("DiSNI provider: the libdisni found does not match the DiSNI 2.1 jar"), m);
        assertTrue(DisniAvailability.versionMismatch("jverbs outdated, version found 31, version required 32")
                .contains("(jverbs outdated, version found 31, version required 32): rebuild libdisni from DiSNI 2.1's "
                        + "sources"));
    }

    @Test
    void missingJars() {
        assertTrue(DisniAvailability.describe(new NoClassDefFoundError("org/slf4j/LoggerFactory"), PATH)
                .startsWith("DiSNI provider: DiSNI needs slf4j-api on the class path (java.lang.NoClassDefFoundError: "
                        + "org/slf4j/LoggerFactory)"));
        assertTrue(DisniAvailability.describe(new NoClassDefFoundError("com/ibm/disni/verbs/RdmaProvider"), PATH)
                .startsWith("DiSNI provider: the DiSNI jar (com.ibm.disni:disni 2.1) is not on the class path"));
    }

    /**
     * DiSNI's MemoryUtils casts to sun.nio.ch.DirectBuffer: without the add-exports flag (as in
     * this test JVM, unless someone adds it) that is an IllegalAccessError, reported with its own
     * message.
     */
    @Test
    void directBufferAccessNeedsTheAddExportsFlag() {
        boolean exported = Object.class.getModule().isExported("sun.nio.ch", DisniAvailabilityTest.class.getModule());
        if (exported) {
            assertDoesNotThrow(DisniAvailability::checkDirectBufferAccess);
            return;
        }
        RdmaUnavailableException e = assertThrows(RdmaUnavailableException.class, DisniAvailability::checkDirectBufferAccess);
        assertTrue(e.getCause() instanceof IllegalAccessError, String.valueOf(e.getCause()));
        assertTrue(e.getMessage().startsWith("DiSNI provider: DiSNI reads buffer addresses through sun.nio.ch.DirectBuffer, "
                + "which Java " + Runtime.version().feature() + " does not export: run java with --add-exports "
                + "java.base/sun.nio.ch=ALL-UNNAMED"), e.getMessage());
        assertTrue(e.getMessage().endsWith("or use --rdma-provider verbs (rdma-core only) or soft"), e.getMessage());
        assertEquals(-1, e.getMessage().indexOf('\n'));
    }
}
