package io.nvmeof.fabric.rdma.disni;

import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvPd;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * One RDMA device as rdma_cm hands it out ({@code IbvContext}): its protection domain and the
 * completion queues its connections share. DiSNI tells neither the device's name nor its
 * limits, so a device is known by its command file descriptor. Created and changed on the CM
 * thread only.
 */
final class DisniDevice {
    private static final System.Logger LOG = System.getLogger(DisniDevice.class.getName());

    final int key;
    final String name;
    final IbvContext context;
    final IbvPd pd;
    final DisniDomain domain;
    private final int cqSize;
    private final List<CompletionQueue> cqs = new ArrayList<>();

    DisniDevice(IbvContext context, int key, int cqSize) throws IOException {
        this.context = context;
        this.key = key;
        this.name = "RDMA device #" + key;
        this.cqSize = cqSize;
        this.pd = context.allocPd();
        this.domain = new DisniDomain(pd, name);
    }

    /** A completion queue with room for {@code cqes} more entries, created if none has. */
    CompletionQueue reserve(int cqes) throws IOException {
        for (CompletionQueue q : cqs) {
            if (q.capacity - q.reserved >= cqes && q.hasFreeSlot()) {
                q.reserved += cqes;
                return q;
            }
        }
        int size = Math.max(cqSize, cqes);
        while (true) {
            try {
                CompletionQueue q = new CompletionQueue(this, size, "disni-cq-" + key + "-" + cqs.size());
                cqs.add(q);
                q.reserved += cqes;
                return q;
            } catch (IOException e) {
                if (size <= cqes) {
                    throw e;
                }
                size = Math.max(cqes, size / 2);
                LOG.log(System.Logger.Level.DEBUG, "completion queue creation failed ({0}); trying {1} entries",
                        e.getMessage(), size);
            }
        }
    }

    void release(CompletionQueue q, int cqes) {
        q.reserved -= cqes;
    }

    /** Stops and destroys the completion queues and deallocates the protection domain. */
    void close() {
        for (CompletionQueue q : cqs) {
            q.close();
        }
        cqs.clear();
        if (domain.registrations() > 0) {
            LOG.log(System.Logger.Level.DEBUG, "{0}: {1} memory regions still registered; the protection domain stays",
                    name, domain.registrations());
            return;
        }
        try {
            pd.deallocPd();
        } catch (Exception e) {
            LOG.log(System.Logger.Level.DEBUG, "{0}: deallocating the protection domain failed: {1}", name, e.getMessage());
        }
    }
}
