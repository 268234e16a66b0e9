package io.nvmeof.fabric.rdma.disni;

import com.ibm.disni.util.MemoryUtils;
import com.ibm.disni.verbs.RdmaProvider;
import io.nvmeof.fabric.rdma.RdmaUnavailableException;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Whether DiSNI can run in this JVM, found out once, with one message that says what is missing
 * and how to get it. DiSNI's {@code com.ibm.disni.verbs.impl.NativeDispatcher} loads {@code
 * libdisni} ({@code System.loadLibrary("disni")}) in its static initializer: the first attempt
 * fails with {@link UnsatisfiedLinkError}, every later one with {@link NoClassDefFoundError}
 * ("Could not initialize class ...NativeDispatcher", caused by an {@link
 * ExceptionInInitializerError}). Its constructor then checks the library's version (32 for
 * DiSNI 2.1) with an {@link IOException}. Separately, {@code com.ibm.disni.util.MemoryUtils}
 * casts buffers to {@code sun.nio.ch.DirectBuffer}, which Java 17 allows only with {@code
 * --add-exports java.base/sun.nio.ch=ALL-UNNAMED} ({@link IllegalAccessError} otherwise).
 */
final class DisniAvailability {
    static final String ALTERNATIVES = "or use --rdma-provider verbs (rdma-core only) or soft";
    static final String ADD_EXPORTS = "--add-exports java.base/sun.nio.ch=ALL-UNNAMED";
    static final String BUILD = "build it from DiSNI 2.1's sources (libdisni, needs rdma-core's librdmacm/libibverbs dev "
            + "packages) and put libdisni.so on LD_LIBRARY_PATH or -Djava.library.path; on Java 17 also run with "
            + ADD_EXPORTS + "; " + ALTERNATIVES;

    private static RdmaUnavailableException failure;
    private static boolean available;

    private DisniAvailability() {
    }

    /** Throws, with the same message every time, unless DiSNI's native library loads and can be used. */
    static synchronized void check() throws RdmaUnavailableException {
        if (available) {
            return;
        }
        if (failure == null) {
            failure = probe();
            available = failure == null;
            if (available) {
                return;
            }
        }
        throw new RdmaUnavailableException(failure.getMessage(), failure.getCause());
    }

    private static RdmaUnavailableException probe() {
        try {
            RdmaProvider.provider();
        } catch (LinkageError e) {
            return new RdmaUnavailableException(describe(e, System.getProperty("java.library.path")), e);
        } catch (IOException e) {
            return new RdmaUnavailableException(versionMismatch(e.getMessage()), e);
        }
        try {
            checkDirectBufferAccess();
        } catch (RdmaUnavailableException e) {
            return e;
        }
        return null;
    }

    /** Throws unless DiSNI may read a direct buffer's address (Java 9+ needs the add-exports flag). */
    static void checkDirectBufferAccess() throws RdmaUnavailableException {
        try {
            MemoryUtils.getAddress(ByteBuffer.allocateDirect(1));
        } catch (IllegalAccessError e) {
            throw new RdmaUnavailableException(addExportsMessage(), e);
        }
    }

    static String addExportsMessage() {
        return "DiSNI provider: DiSNI reads buffer addresses through sun.nio.ch.DirectBuffer, which Java "
                + Runtime.version().feature() + " does not export: run java with " + ADD_EXPORTS
                + " (for example JDK_JAVA_OPTIONS=\"" + ADD_EXPORTS + "\"); " + ALTERNATIVES;
    }

    static String versionMismatch(String detail) {
        return "DiSNI provider: the libdisni found does not match the DiSNI 2.1 jar (" + detail + "): rebuild libdisni "
                + "from DiSNI 2.1's sources (needs rdma-core's librdmacm/libibverbs dev packages) and put it on "
                + "LD_LIBRARY_PATH or -Djava.library.path; " + ALTERNATIVES;
    }

    /** The one message for a linkage failure {@code e} of DiSNI's native initialization. */
    static String describe(Throwable e, String libraryPath) {
        String text = chain(e);
        String detail = detail(e);
        if (text.contains("org/slf4j") || text.contains("org.slf4j")) {
            return "DiSNI provider: DiSNI needs slf4j-api on the class path (" + detail + "); " + ALTERNATIVES;
        }
        if (text.contains("com/ibm/disni") && !text.contains("NativeDispatcher")) {
            return "DiSNI provider: the DiSNI jar (com.ibm.disni:disni 2.1) is not on the class path (" + detail + "); "
                    + ALTERNATIVES;
        }
        if (text.contains("no disni in java.library.path")) {
            return "DiSNI provider: libdisni not found on java.library.path (" + libraryPath + "): " + BUILD;
        }
        if (text.contains("NativeDispatcher._")) {
            // the library loaded but lacks DiSNI 2.1's entry points: another DiSNI version's libdisni
            return versionMismatch(detail);
        }
        if (text.contains("UnsatisfiedLinkError")) {
            return "DiSNI provider: libdisni could not be loaded (" + detail + "): it needs rdma-core's librdmacm "
                    + "and libibverbs (Debian/Ubuntu: apt install librdmacm1 libibverbs1 ibverbs-providers; "
                    + "RHEL/Fedora: dnf install librdmacm libibverbs), or " + BUILD;
        }
        return "DiSNI provider: DiSNI cannot be initialized (" + detail + "): libdisni must be loadable: " + BUILD;
    }

    /** {@code e} and its causes, innermost last. */
    private static String chain(Throwable e) {
        StringBuilder b = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (b.length() > 0) {
                b.append(" <- ");
            }
            b.append(t);
        }
        return b.toString();
    }

    /**
     * What explains the failure best: the innermost cause; for a failed library load just the
     * loader's message (Java 17 quotes the first failure inside later ones: "Exception
     * java.lang.UnsatisfiedLinkError: ... [in thread "main"]").
     */
    private static String detail(Throwable e) {
        Throwable inner = e;
        while (inner.getCause() != null && inner.getCause() != inner) {
            inner = inner.getCause();
        }
        String m = inner.getMessage();
        if (m == null) {
            return inner.toString();
        }
        String ule = "UnsatisfiedLinkError: ";
        int u = m.indexOf(ule);
        if (u >= 0) {
            m = m.substring(u + ule.length());
            int t = m.indexOf(" [in thread");
            if (t >= 0) {
                m = m.substring(0, t);
            }
        } else if (!(inner instanceof UnsatisfiedLinkError)) {
            m = inner.toString();
        }
        int nl = m.indexOf('\n');
        return (nl < 0 ? m : m.substring(0, nl)).trim();
    }
}
