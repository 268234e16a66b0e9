package io.nvmeof.target.backend;

import java.io.IOException;
import java.nio.file.Path;

/** Opens the backend a namespace configuration names: the one place that maps kinds to classes. */
final class Backends {
    private Backends() {
    }

    static Backend open(BackendSpec ns) throws IOException {
        return open(ns, null);
    }

    /** {@code pin} (null: none) holds the file or device that {@code ns}'s path resolved to; the backend owns it. */
    static Backend open(BackendSpec ns, PinnedPath pin) throws IOException {
        int bs = ns.blockSize() == 0 ? 4096 : ns.blockSize();
        if (pin != null) {
            // its type from the descriptor held, before any open that could block (a FIFO) or act (a device)
            boolean block;
            try {
                block = pin.blockDevice();
            } catch (IOException e) {
                pin.close();
                throw e;
            }
            if (block != ns.kind().equals("block") || !ns.kind().equals("file") && !ns.kind().equals("block")) {
                pin.close();
                throw new IOException(pin.path() + " is " + (block ? "a block device" : "a regular file") + ", not what a "
                        + ns.kind() + " namespace takes");
            }
        }
        switch (ns.kind()) {
            case "ram":
                return new RamBackend(ns.size(), bs);
            case "null":
                return new NullBackend(ns.size(), bs);
            case "file":
                return pin != null ? FileBackend.open(pin, ns.size(), bs, ns.readOnly(), ns.directIo())
                        : FileBackend.open(Path.of(ns.path()), ns.size(), bs, ns.readOnly(), ns.directIo());
            case "block":
                return pin != null ? BlockBackend.open(pin, ns.blockSize(), ns.readOnly(), ns.directIo())
                        : BlockBackend.open(Path.of(ns.path()), ns.blockSize(), ns.readOnly(), ns.directIo());
            case "rbd":
                return RbdBackend.open(RbdCluster.connect(ns.cluster(), RbdCluster.connectTimeoutMs,
                        RbdCluster.opTimeoutMs), ns.pool(), ns.image(), ns.blockSize(), ns.readOnly());
            default:
                throw new IllegalArgumentException("unknown backend " + ns.kind());
        }
    }
}
