package io.nvmeof.cli;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Multipath;
import io.nvmeof.initiator.NvmeofUri;
import io.nvmeof.protocol.Nqn;
import java.io.IOException;
import java.util.List;

/** Opens the namespace a URI names: its ?nsid=, or the first active one. */
final class Devices {
    private Devices() {
    }

    static NvmeofUri parse(String uri) {
        NvmeofUri u = NvmeofUri.parse(uri);
        if (u.subsystemNqn().equals(Nqn.DISCOVERY)) {
            throw new IllegalArgumentException("bad URI '" + uri + "': name a subsystem NQN after the port");
        }
        return u;
    }

    /** One URI per path of a URI that may list several addresses. */
    static List<NvmeofUri> parseAll(String uri) {
        List<NvmeofUri> all = NvmeofUri.parseAll(uri);
        if (all.get(0).subsystemNqn().equals(Nqn.DISCOVERY)) {
            throw new IllegalArgumentException("bad URI '" + uri + "': name a subsystem NQN after the port");
        }
        return all;
    }

    /** The namespace of a multipath set the URI names: its ?nsid=, or the first active one. */
    static BlockDevice open(Multipath m) throws IOException {
        return m.namespace(m.paths().get(0).uri().nsid());
    }

    static BlockDevice open(Controller c) throws IOException {
        int nsid = c.uri().nsid();
        if (nsid != 0) {
            return c.namespace(nsid);
        }
        List<Integer> active = c.activeNamespaces();
        if (active.isEmpty()) {
            throw new IOException(c.uri().subsystemNqn() + " has no active namespace");
        }
        return c.namespace(active.get(0));
    }
}
