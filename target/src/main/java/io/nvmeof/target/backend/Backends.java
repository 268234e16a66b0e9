package io.nvmeof.target.backend;

import java.io.IOException;
import java.nio.file.Path;

/** Opens the backend a namespace configuration names: the one place that maps kinds to classes. */
final class Backends {
    private Backends() {
    }

    static Backend open(BackendSpec ns) throws IOException {
        int bs = ns.blockSize() == 0 ? 4096 : ns.blockSize();
        switch (ns.kind()) {
            case "ram":
                return new RamBackend(ns.size(), bs);
            case "null":
                return new NullBackend(ns.size(), bs);
            case "file":
                return FileBackend.open(Path.of(ns.path()), ns.size(), bs, ns.readOnly(), ns.directIo());
            case "block":
                return BlockBackend.open(Path.of(ns.path()), ns.blockSize(), ns.readOnly(), ns.directIo());
            default:
                throw new IllegalArgumentException("unknown backend " + ns.kind());
        }
    }
}
