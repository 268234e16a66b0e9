package io.nvmeof.fabric.rdma.disni;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.SVCRegMr;
import io.nvmeof.fabric.rdma.MemoryRegion;
import io.nvmeof.fabric.rdma.ProtectionDomain;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The protection domain of one device ({@code IbvPd}), shared by every connection on it.
 * Registration goes through DiSNI's {@code regMr}, which registers the buffer's whole capacity;
 * the region's remote key is always {@code IbvMr.getRkey()} (DiSNI's examples advertise the
 * local key, which works only where the two happen to be equal). Any thread.
 */
final class DisniDomain implements ProtectionDomain {
    private final IbvPd pd;
    private final String device;
    private final Set<IbvMr> live = ConcurrentHashMap.newKeySet();

    DisniDomain(IbvPd pd, String device) {
        this.pd = pd;
        this.device = device;
    }

    IbvPd pd() {
        return pd;
    }

    int registrations() {
        return live.size();
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, int access) throws IOException {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("only direct buffers can be registered");
        }
        ByteBuffer whole = buffer.duplicate().clear();
        SVCRegMr call = pd.regMr(whole, access);
        IbvMr mr;
        try {
            mr = call.execute().getMr();
        } catch (IOException e) {
            throw new IOException("cannot register " + whole.capacity() + " bytes on " + device + " (DiSNI): "
                    + e.getMessage().trim() + " (a non-root process needs a large enough locked-memory limit, ulimit -l)", e);
        } finally {
            call.free();
        }
        live.add(mr);
        return new MemoryRegion(this, whole.slice().order(buffer.order()), mr.getAddr(), mr.getLkey(), mr.getRkey(),
                access, mr);
    }

    @Override
    public void deregister(MemoryRegion region) {
        if (region.pd() != this || !(region.handle() instanceof IbvMr)) {
            throw new IllegalArgumentException("not a region of this protection domain: " + region);
        }
        IbvMr mr = (IbvMr) region.handle();
        region.markDeregistered();
        if (live.remove(mr)) {
            try {
                mr.deregMr().execute().free();
            } catch (IOException e) {
                System.getLogger(DisniDomain.class.getName()).log(System.Logger.Level.WARNING,
                        "cannot deregister " + region + ": " + e.getMessage());
            }
        }
    }

    @Override
    public String toString() {
        return "DiSNI protection domain of " + device;
    }
}
