package io.nvmeof.fabric.rdma.verbs;

import com.kenai.jffi.CallContext;
import com.kenai.jffi.CallingConvention;
import com.kenai.jffi.Invoker;
import com.kenai.jffi.MemoryIO;
import com.kenai.jffi.Type;
import io.nvmeof.fabric.rdma.RdmaUnavailableException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;

/**
 * The native side: librdmacm and libibverbs through jnr-ffi (pointers travel as {@code long}),
 * native memory through jffi's {@link MemoryIO}, and the four fast-path verbs that verbs.h
 * defines {@code static inline} (ibv_post_send, ibv_post_recv, ibv_poll_cq,
 * ibv_req_notify_cq) called through the function pointers of the device context's ops table
 * with jffi's {@link Invoker}. None of these calls allocates on the Java heap.
 */
final class Native {
    static final String LIBRDMACM = "librdmacm.so.1";
    static final String LIBIBVERBS = "libibverbs.so.1";
    static final String MISSING_LIBRARIES = "rdma-core libraries not found (" + LIBRDMACM + ", " + LIBIBVERBS
            + "): install the Debian/Ubuntu packages librdmacm1 libibverbs1 ibverbs-providers (rdma-core on RHEL/Fedora)";

    static final MemoryIO MEM = MemoryIO.getInstance();
    private static final Invoker INVOKER = Invoker.getInstance();
    /** int (*)(void *, void *, void *): post_send, post_recv. */
    private static final CallContext PTR3 = CallContext.getCallContext(Type.SINT32,
            new Type[] {Type.POINTER, Type.POINTER, Type.POINTER}, CallingConvention.DEFAULT, false);
    /** int (*)(struct ibv_cq *, int, struct ibv_wc *): poll_cq. */
    private static final CallContext POLL = CallContext.getCallContext(Type.SINT32,
            new Type[] {Type.POINTER, Type.SINT32, Type.POINTER}, CallingConvention.DEFAULT, false);
    /** int (*)(struct ibv_cq *, int): req_notify_cq. */
    private static final CallContext NOTIFY = CallContext.getCallContext(Type.SINT32,
            new Type[] {Type.POINTER, Type.SINT32}, CallingConvention.DEFAULT, false);

    /** librdmacm.so.1, as far as this provider uses it. */
    public interface RdmaCm {
        long rdma_create_event_channel();

        void rdma_destroy_event_channel(long channel);

        int rdma_create_id(long channel, long idOut, long context, int portSpace);

        int rdma_destroy_id(long id);

        int rdma_bind_addr(long id, long sockaddr);

        int rdma_listen(long id, int backlog);

        int rdma_resolve_addr(long id, long src, long dst, int timeoutMs);

        int rdma_resolve_route(long id, int timeoutMs);

        int rdma_create_qp(long id, long pd, long qpInitAttr);

        void rdma_destroy_qp(long id);

        int rdma_connect(long id, long connParam);

        int rdma_accept(long id, long connParam);

        int rdma_reject(long id, long privateData, int privateDataLen);

        int rdma_disconnect(long id);

        int rdma_get_cm_event(long channel, long eventOut);

        int rdma_ack_cm_event(long event);

        int rdma_notify(long id, int event);
    }

    /** libibverbs.so.1, the exported part. */
    public interface IbVerbs {
        long ibv_get_device_list(long numDevicesOut);

        void ibv_free_device_list(long list);

        String ibv_get_device_name(long device);

        int ibv_query_device(long context, long deviceAttr);

        long ibv_alloc_pd(long context);

        int ibv_dealloc_pd(long pd);

        long ibv_reg_mr(long pd, long addr, long length, int access);

        int ibv_dereg_mr(long mr);

        long ibv_create_comp_channel(long context);

        int ibv_destroy_comp_channel(long channel);

        long ibv_create_cq(long context, int cqe, long cqContext, long channel, int compVector);

        int ibv_destroy_cq(long cq);

        int ibv_get_cq_event(long channel, long cqOut, long cqContextOut);

        void ibv_ack_cq_events(long cq, int nevents);

        int ibv_get_async_event(long context, long event);

        void ibv_ack_async_event(long event);

        String ibv_event_type_str(int event);
    }

    /** The two libc calls the event threads need. */
    public interface LibC {
        int poll(long fds, long nfds, int timeoutMs);

        String strerror(int errnum);
    }

    static final class Libs {
        final RdmaCm cm;
        final IbVerbs ib;
        final LibC c;
        private final Runtime runtime;

        Libs(RdmaCm cm, IbVerbs ib, LibC c) {
            this.cm = cm;
            this.ib = ib;
            this.c = c;
            this.runtime = Runtime.getRuntime(cm);
        }

        /** errno of the last call made through jnr-ffi on this thread. */
        int errno() {
            return runtime.getLastError();
        }

        /** "what: strerror(errno)" for the failed call just made on this thread. */
        String error(String what) {
            return describe(what, errno());
        }

        /** "what: strerror(err)"; {@code err} may be negative (a -errno). */
        String describe(String what, int err) {
            int e = Math.abs(err);
            return what + ": " + c.strerror(e) + " (errno " + e + ")";
        }
    }

    private static volatile Libs libs;

    private Native() {
    }

    /** Loads the libraries once; fails with the one message that names the packages. */
    static Libs libs() throws RdmaUnavailableException {
        Libs l = libs;
        if (l != null) {
            return l;
        }
        synchronized (Native.class) {
            if (libs == null) {
                libs = load(LIBRDMACM, LIBIBVERBS);
            }
            return libs;
        }
    }

    /** Loads {@code rdmacm} and {@code ibverbs} (names or paths), for tests of the failure path too. */
    static Libs load(String rdmacm, String ibverbs) throws RdmaUnavailableException {
        try {
            IbVerbs ib = LibraryLoader.create(IbVerbs.class).failImmediately().load(ibverbs);
            RdmaCm cm = LibraryLoader.create(RdmaCm.class).failImmediately().load(rdmacm);
            LibC c = LibraryLoader.create(LibC.class).failImmediately().load("c");
            return new Libs(cm, ib, c);
        } catch (LinkageError | RuntimeException e) {
            throw new RdmaUnavailableException(MISSING_LIBRARIES, e);
        }
    }

    /** Whether the rdma-core runtime libraries are installed where the dynamic linker looks. */
    static boolean librariesInstalled() {
        for (String dir : new String[] {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/lib64", "/usr/lib", "/lib",
                                        "/usr/lib/aarch64-linux-gnu", "/lib/x86_64-linux-gnu"}) {
            if (Files.exists(Path.of(dir, LIBRDMACM)) && Files.exists(Path.of(dir, LIBIBVERBS))) {
                return true;
            }
        }
        return false;
    }

    // ---- the static inline verbs, through the context's ops table

    /** The function pointer at {@code opsOffset} of {@code context}'s ibv_context_ops. */
    static long op(long context, int opsOffset) {
        long fn = MEM.getAddress(context + Abi.CONTEXT_OPS + opsOffset);
        if (fn == 0) {
            throw new IllegalStateException("the device's ibv_context_ops has no entry at " + opsOffset);
        }
        return fn;
    }

    /** ibv_post_send / ibv_post_recv: 0 or an errno value. */
    static int post(long fn, long qp, long wr, long badWrOut) {
        return (int) INVOKER.invokeN3(PTR3, fn, qp, wr, badWrOut);
    }

    /** ibv_poll_cq: the number of completions written to {@code wc}, or negative on error. */
    static int pollCq(long fn, long cq, int max, long wc) {
        return (int) INVOKER.invokeN3(POLL, fn, cq, max, wc);
    }

    /** ibv_req_notify_cq(cq, 0): 0 or an errno value. */
    static int reqNotifyCq(long fn, long cq) {
        return (int) INVOKER.invokeN2(NOTIFY, fn, cq, 0);
    }

    // ---- native memory

    /**
     * The address of every live block of {@link #calloc}: a free of an
     * address that is not live (freed twice, or never ours) throws instead of corrupting the
     * heap, and tests check that a provider's blocks all return after it closes. Allocation
     * is for setup only, never per command.
     */
    private static final Set<Long> LIVE = ConcurrentHashMap.newKeySet();

    static long calloc(long size) {
        long a = MEM.allocateMemory(size, true);
        if (a == 0) {
            throw new OutOfMemoryError("native allocation of " + size + " bytes failed");
        }
        LIVE.add(a);
        return a;
    }

    /** Frees a block of {@link #calloc}; 0 is ignored. */
    static void free(long address) {
        if (address == 0) {
            return;
        }
        if (!LIVE.remove(address)) {
            throw new IllegalStateException("native block 0x" + Long.toHexString(address)
                    + " is not live: freed twice, or not allocated here");
        }
        MEM.freeMemory(address);
    }

    /** Native blocks allocated and not yet freed, in this process. */
    static int liveAllocations() {
        return LIVE.size();
    }

    static byte[] bytes(long address, int length) {
        byte[] b = new byte[length];
        if (length > 0) {
            MEM.getByteArray(address, b, 0, length);
        }
        return b;
    }
}
