package io.nvmeof.fabric.rdma.verbs;

import static io.nvmeof.fabric.rdma.verbs.Native.MEM;

import io.netty.util.internal.PlatformDependent;
import io.nvmeof.fabric.rdma.MemoryRegion;
import io.nvmeof.fabric.rdma.ProtectionDomain;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One opened RDMA device (an {@code ibv_context*} that rdma_cm handed out): its limits, the
 * fast-path function pointers of its ops table, and the one protection domain this provider
 * allocates on it, shared by every queue pair and memory region on the device.
 */
final class VerbsDevice implements ProtectionDomain {
    private final Native.Libs libs;
    final long context;
    final long pd;
    final String name;
    final int maxQpWr;
    final int maxCqe;
    final int maxQpRdAtom;
    final int maxQpInitRdAtom;
    final long pollCqFn;
    final long reqNotifyCqFn;
    final long postSendFn;
    final long postRecvFn;
    /** The device's asynchronous events, read by a thread of their own. */
    final AsyncEvents events;
    /** ibv_mr* of the live registrations, so a double deregistration cannot free twice. */
    private final Set<Long> live = ConcurrentHashMap.newKeySet();

    private VerbsDevice(Native.Libs libs, long context, long pd, String name, long attr) {
        this.libs = libs;
        this.context = context;
        this.pd = pd;
        this.name = name;
        this.maxQpWr = MEM.getInt(attr + Abi.DEVICE_ATTR_MAX_QP_WR);
        this.maxCqe = MEM.getInt(attr + Abi.DEVICE_ATTR_MAX_CQE);
        this.maxQpRdAtom = MEM.getInt(attr + Abi.DEVICE_ATTR_MAX_QP_RD_ATOM);
        this.maxQpInitRdAtom = MEM.getInt(attr + Abi.DEVICE_ATTR_MAX_QP_INIT_RD_ATOM);
        this.pollCqFn = Native.op(context, Abi.OPS_POLL_CQ);
        this.reqNotifyCqFn = Native.op(context, Abi.OPS_REQ_NOTIFY_CQ);
        this.postSendFn = Native.op(context, Abi.OPS_POST_SEND);
        this.postRecvFn = Native.op(context, Abi.OPS_POST_RECV);
        this.events = new AsyncEvents(libs, this);
    }

    /** Queries {@code context} and allocates its protection domain. */
    static VerbsDevice open(Native.Libs libs, long context) throws IOException {
        String name = libs.ib.ibv_get_device_name(MEM.getAddress(context + Abi.CONTEXT_DEVICE));
        long attr = Native.calloc(Abi.DEVICE_ATTR_SIZE);
        try {
            int rc = libs.ib.ibv_query_device(context, attr);
            if (rc != 0) {
                throw new IOException(libs.describe("ibv_query_device(" + name + ")", rc));
            }
            long pd = libs.ib.ibv_alloc_pd(context);
            if (pd == 0) {
                throw new IOException(libs.error("ibv_alloc_pd(" + name + ")"));
            }
            return new VerbsDevice(libs, context, pd, name, attr);
        } finally {
            Native.free(attr);
        }
    }

    @Override
    public MemoryRegion register(ByteBuffer directBuffer, int access) throws IOException {
        if (!directBuffer.isDirect()) {
            throw new IllegalArgumentException("only direct buffers can be registered");
        }
        ByteBuffer whole = directBuffer.duplicate().clear().slice().order(directBuffer.order());
        long address = PlatformDependent.directBufferAddress(whole);
        long mr = libs.ib.ibv_reg_mr(pd, address, whole.capacity(), access);
        if (mr == 0) {
            throw new IOException(libs.error("ibv_reg_mr(" + name + ", " + whole.capacity() + " bytes, access " + access + ")"));
        }
        live.add(mr);
        return new MemoryRegion(this, whole, address, MEM.getInt(mr + Abi.MR_LKEY), MEM.getInt(mr + Abi.MR_RKEY),
                access, mr);
    }

    @Override
    public void deregister(MemoryRegion region) {
        if (region.pd() != this || !(region.handle() instanceof Long)) {
            throw new IllegalArgumentException(region + " is not registered with " + this);
        }
        long mr = (Long) region.handle();
        region.markDeregistered();
        if (live.remove(mr)) {
            int rc = libs.ib.ibv_dereg_mr(mr);
            if (rc != 0) {
                // EBUSY: still bound (memory windows); the keys stay valid, which is safe, not a leak to hide
                throw new IllegalStateException(libs.describe("ibv_dereg_mr(" + region + ")", rc));
            }
        }
    }

    /** Stops the event thread and frees the protection domain; regions still registered are deregistered first. */
    void close() {
        events.close();
        for (Long mr : live.toArray(new Long[0])) {
            if (live.remove(mr)) {
                libs.ib.ibv_dereg_mr(mr);
            }
        }
        libs.ib.ibv_dealloc_pd(pd);
    }

    @Override
    public String toString() {
        return "verbs PD of " + name;
    }
}
