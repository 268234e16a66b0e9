package io.nvmeof.target;

import io.nvmeof.protocol.Status;
import io.nvmeof.target.backend.Rbd;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.AccessDeniedException;

/** The one place where exceptions from storage become NVMe status. */
final class StorageErrors {
    private StorageErrors() {
    }

    /**
     * The status of command {@code r} that storage failed with {@code t}. Where the path has lost
     * the namespace's ANA group while the command ran (a gateway past its lease, or fenced), the
     * group's state answers (Asymmetric Access Inaccessible, a path error), so that the host retries
     * through another gateway rather than reporting the failure.
     */
    static Status toStatus(Request r, Throwable t, boolean write) {
        Port port = r.queue.port();
        Namespace ns = r.namespace;
        Status path = port != null && ns != null ? port.anaState(ns.anaGroup()).ioStatus : null;
        return path != null ? path : toStatus(t, write);
    }

    public static Status toStatus(Throwable t, boolean write) {
        if (t instanceof AccessDeniedException) {
            return Status.ACCESS_DENIED;
        }
        if (t instanceof Rbd.Fenced) {
            // fenced from the storage: this path is done, another gateway's is not
            return Status.INTERNAL_PATH_ERROR;
        }
        if (t instanceof ClosedChannelException || t instanceof Rbd.Unavailable) {
            // closing, or a cluster that does not answer now: the host retries (no Do Not Retry)
            return Status.NAMESPACE_NOT_READY;
        }
        if (t instanceof IOException) {
            return write ? Status.WRITE_FAULT : Status.UNRECOVERED_READ_ERROR;
        }
        return Status.INTERNAL_ERROR;
    }
}
