package io.nvmeof.target;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Collection;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;

/**
 * A port of the target, as in Linux nvmet: a transport address hosts connect to and the
 * subsystems reachable through it. Every port also serves the discovery subsystem; a port
 * with no subsystems is a discovery-only port (8009 by convention for NVMe/TCP).
 */
public final class Port {
    private final int id;
    private final String trtype;
    private final InetSocketAddress address;
    private final boolean allSubsystems;
    private final Set<String> subsystems = new CopyOnWriteArraySet<>();
    private final String rdmaProvider;
    private volatile InetSocketAddress bound;

    /**
     * @param id            PORTID as reported in discovery log entries (1..65535)
     * @param address       address to listen on; port 0 picks a free one
     * @param allSubsystems whether every subsystem of the target is reachable here
     * @param subsystems    the NQNs reachable here otherwise
     */
    public Port(int id, String trtype, InetSocketAddress address, boolean allSubsystems, Collection<String> subsystems) {
        this(id, trtype, null, address, allSubsystems, subsystems);
    }

    /**
     * @param trtype       {@code tcp} or {@code rdma}
     * @param rdmaProvider for {@code rdma}: the verbs provider ({@code verbs}, {@code disni},
     *                     {@code soft}; null: the default)
     */
    public Port(int id, String trtype, String rdmaProvider, InetSocketAddress address, boolean allSubsystems,
                Collection<String> subsystems) {
        if (id < 1 || id > 0xffff) {
            throw new IllegalArgumentException("portid must be 1..65535: " + id);
        }
        if (!"tcp".equals(trtype) && !"rdma".equals(trtype)) {
            throw new IllegalArgumentException("trtype must be tcp or rdma: " + trtype);
        }
        if (rdmaProvider != null && !"rdma".equals(trtype)) {
            throw new IllegalArgumentException("an RDMA provider for a " + trtype + " port");
        }
        this.id = id;
        this.trtype = trtype;
        this.rdmaProvider = "rdma".equals(trtype)
                ? (rdmaProvider != null ? rdmaProvider : io.nvmeof.fabric.rdma.RdmaProviders.DEFAULT) : null;
        this.address = address;
        this.allSubsystems = allSubsystems;
        this.subsystems.addAll(subsystems);
    }

    public int id() {
        return id;
    }

    public String trtype() {
        return trtype;
    }

    public boolean isRdma() {
        return "rdma".equals(trtype);
    }

    /** The RDMA provider of an {@code rdma} port, else null. */
    public String rdmaProvider() {
        return rdmaProvider;
    }

    /** TRTYPE as discovery log entries and error log entries number it. */
    public int trtypeCode() {
        return isRdma() ? io.nvmeof.protocol.DiscoveryLogEntry.TRTYPE_RDMA : io.nvmeof.protocol.DiscoveryLogEntry.TRTYPE_TCP;
    }

    /** The address asked for. */
    public InetSocketAddress address() {
        return address;
    }

    /** The address bound, once listening (its port is the real one when 0 was asked for). */
    public InetSocketAddress bound() {
        return bound;
    }

    void bound(InetSocketAddress a) {
        this.bound = a;
    }

    /** Whether hosts may reach {@code nqn} through this port. */
    public boolean serves(String nqn) {
        return allSubsystems || subsystems.contains(nqn);
    }

    public boolean servesAll() {
        return allSubsystems;
    }

    public Set<String> subsystems() {
        return subsystems;
    }

    /** Whether the port listens on every local address (the discovery log then names the address a host reached). */
    public boolean wildcard() {
        InetAddress a = address.getAddress();
        return a != null && a.isAnyLocalAddress();
    }

    @Override
    public String toString() {
        InetSocketAddress a = bound != null ? bound : address;
        return "port " + id + " " + trtype + "://" + a.getHostString() + ":" + a.getPort()
                + (rdmaProvider != null ? " (" + rdmaProvider + ")" : "");
    }
}
