package io.nvmeof.target;

import io.nvmeof.protocol.DiscoveryInformation;
import io.nvmeof.protocol.DiscoveryLogEntry;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.Nqn;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds the Discovery Log Page (NVMe-oF 1.1, 5.3) a host sees: first this discovery
 * subsystem on the port it asked through, then one entry per (port, NVM subsystem) the host
 * is allowed into, of the port it asked through if that port serves subsystems (what Linux
 * nvmet does), of every port if it is a discovery-only port. A port that listens on every
 * address reports the address the host used, as Linux nvmet does. A central discovery controller
 * lists what was registered with it next ({@link CentralDiscovery}), then the referrals.
 */
final class DiscoveryLog {
    /** ASQSZ: the admin queue size hosts should use (the kernel's NVME_AQ_DEPTH). */
    static final int ADMIN_QUEUE_SIZE = 32;

    private DiscoveryLog() {
    }

    static ByteBuffer build(Target target, String hostNqn, Port current, InetSocketAddress local) {
        List<Object[]> entries = new ArrayList<>();
        entries.add(new Object[] {current, Nqn.DISCOVERY});
        // a port that serves subsystems tells of itself only (as nvmet); a discovery-only port of every port
        boolean everyPort = current.discoveryOnly();
        for (Port port : target.ports()) {
            if (!everyPort && port.id() != current.id()) {
                continue;
            }
            for (Subsystem s : target.subsystems()) {
                if (port.serves(s.nqn()) && s.allows(hostNqn)) {
                    entries.add(new Object[] {port, s.nqn()});
                }
            }
        }
        // then the referrals of the port it asked through (nvmet lists those only)
        List<Port.Referral> referrals = current.referrals();
        // a central discovery controller's registered entries (TP8010); a registered discovery controller is a referral
        List<DiscoveryInformation.Entry> registered = target.centralDiscovery().served();
        int records = entries.size() + registered.size() + referrals.size();
        ByteBuffer page = Flyweight.allocate(DiscoveryLogEntry.HEADER_SIZE + records * DiscoveryLogEntry.SIZE);
        page.putLong(DiscoveryLogEntry.GENCTR_OFFSET, target.discoveryNotices().generation());
        page.putLong(DiscoveryLogEntry.NUMREC_OFFSET, records);
        page.putShort(DiscoveryLogEntry.RECFMT_OFFSET, (short) 0);
        DiscoveryLogEntry e = new DiscoveryLogEntry();
        int at = DiscoveryLogEntry.HEADER_SIZE;
        for (Object[] pair : entries) {
            Port port = (Port) pair[0];
            String nqn = (String) pair[1];
            // a port on every address is reached, from this host, at the address it used to get here
            InetSocketAddress a = port.wildcard() ? new InetSocketAddress(local.getAddress(), port.bound().getPort())
                    : port.bound();
            entry(e.wrap(page, at), port, nqn, a.getAddress().getHostAddress(), a);
            at += DiscoveryLogEntry.SIZE;
        }
        for (DiscoveryInformation.Entry r : registered) {
            e.wrap(page, at);
            e.encode(r.trtype(), r.adrfam(), r.subtype() == DiscoveryLogEntry.SUBTYPE_NVM ? DiscoveryLogEntry.SUBTYPE_NVM
                    : DiscoveryLogEntry.SUBTYPE_REFERRAL, r.treq(), r.portId(), r.cntlid(), r.asqsz(), 0, r.trsvcid(), r.nqn(),
                    r.traddr());
            e.tsas(r.tsas());
            at += DiscoveryLogEntry.SIZE;
        }
        for (Port.Referral r : referrals) {
            e.wrap(page, at);
            e.encode(TargetTransports.type(r.trtype()).code(),
                    r.traddr().contains(":") ? DiscoveryLogEntry.ADRFAM_IPV6 : DiscoveryLogEntry.ADRFAM_IPV4,
                    DiscoveryLogEntry.SUBTYPE_REFERRAL, DiscoveryLogEntry.TREQ_SECURE_CHANNEL_NOT_REQUIRED, r.portid(),
                    0xffff, ADMIN_QUEUE_SIZE, 0, Integer.toString(r.trsvcid()), Nqn.DISCOVERY, r.traddr());
            at += DiscoveryLogEntry.SIZE;
        }
        return page;
    }

    /**
     * Writes the entry of {@code nqn} on {@code port} at {@code traddr} ({@code a} gives its
     * family and service): this target's own entries, in its log and in what it registers.
     */
    static void entry(DiscoveryLogEntry e, Port port, String nqn, String traddr, InetSocketAddress a) {
        boolean self = Nqn.DISCOVERY.equals(nqn);
        e.encode(port.trtypeCode(),
                a.getAddress() instanceof Inet6Address ? DiscoveryLogEntry.ADRFAM_IPV6 : DiscoveryLogEntry.ADRFAM_IPV4,
                self ? DiscoveryLogEntry.SUBTYPE_CURRENT_DISCOVERY : DiscoveryLogEntry.SUBTYPE_NVM,
                DiscoveryLogEntry.TREQ_SECURE_CHANNEL_NOT_REQUIRED, port.id(), 0xffff, ADMIN_QUEUE_SIZE,
                self ? DiscoveryLogEntry.EFLAGS_EPCSD : 0, Integer.toString(a.getPort()), nqn, traddr);
        port.transport().describe(port, e);
    }

    /**
     * What this target registers with a central discovery controller: an entry per subsystem
     * per port that serves subsystems; a port on every address names none, so that the
     * controller takes the address the registration came from (TP8010).
     */
    static List<DiscoveryInformation.Entry> registration(Target target) {
        List<DiscoveryInformation.Entry> out = new ArrayList<>();
        DiscoveryLogEntry e = new DiscoveryLogEntry().wrap(Flyweight.allocate(DiscoveryLogEntry.SIZE), 0);
        for (Port port : target.ports()) {
            if (port.discoveryOnly()) {
                continue;
            }
            for (Subsystem s : target.subsystems()) {
                if (port.serves(s.nqn())) {
                    entry(e, port, s.nqn(), port.wildcard() ? "" : port.bound().getAddress().getHostAddress(), port.bound());
                    out.add(new DiscoveryInformation.Entry(e.trtype(), e.adrfam(), e.subtype(), e.treq(), e.portId(),
                            e.cntlid(), e.asqsz(), e.trsvcid(), e.subsystemNqn(), e.traddr(), e.tsas(), null, ""));
                }
            }
        }
        return out;
    }
}
