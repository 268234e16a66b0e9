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

    /**
     * The bytes {@code [offset, offset + length)} of the page {@code hostNqn} sees through
     * {@code current} (fewer where the page ends first), or null where {@code offset} is at or past
     * its end. Only the records in that window are written: a host that reads the header of a
     * large central discovery log (or a page of it at a time) costs what it reads, not the log.
     */
    static ByteBuffer window(Target target, String hostNqn, Port current, InetSocketAddress local, long offset, int length) {
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
        long size = DiscoveryLogEntry.HEADER_SIZE + (long) records * DiscoveryLogEntry.SIZE;
        if (offset < 0 || offset >= size) {
            return null;
        }
        ByteBuffer out = Flyweight.allocate((int) Math.min(length, size - offset));
        // scratch for one record at a time: on the heap, only the reply is direct
        ByteBuffer record = ByteBuffer.allocate(DiscoveryLogEntry.SIZE).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        long end = offset + out.capacity();
        if (offset < DiscoveryLogEntry.HEADER_SIZE) {
            ByteBuffer header = ByteBuffer.allocate(DiscoveryLogEntry.HEADER_SIZE).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            header.putLong(DiscoveryLogEntry.GENCTR_OFFSET, target.discoveryNotices().generation());
            header.putLong(DiscoveryLogEntry.NUMREC_OFFSET, records);
            header.putShort(DiscoveryLogEntry.RECFMT_OFFSET, (short) 0);
            copy(header, 0, out, offset);
        }
        // the records that overlap the window, each written whole in a scratch record and its part copied
        int first = (int) Math.max(0, (offset - DiscoveryLogEntry.HEADER_SIZE) / DiscoveryLogEntry.SIZE);
        DiscoveryLogEntry e = new DiscoveryLogEntry();
        for (int k = first; k < records; k++) {
            long at = DiscoveryLogEntry.HEADER_SIZE + (long) k * DiscoveryLogEntry.SIZE;
            if (at >= end) {
                break;
            }
            java.util.Arrays.fill(record.array(), (byte) 0);
            e.wrap(record, 0);
            if (k < entries.size()) {
                Port port = (Port) entries.get(k)[0];
                String nqn = (String) entries.get(k)[1];
                // a port on every address is reached, from this host, at the address it used to get here
                InetSocketAddress a = port.wildcard() ? new InetSocketAddress(local.getAddress(), port.bound().getPort())
                        : port.bound();
                entry(e, port, nqn, a.getAddress().getHostAddress(), a);
            } else if (k < entries.size() + registered.size()) {
                DiscoveryInformation.Entry r = registered.get(k - entries.size());
                e.encode(r.trtype(), r.adrfam(), r.subtype() == DiscoveryLogEntry.SUBTYPE_NVM ? DiscoveryLogEntry.SUBTYPE_NVM
                        : DiscoveryLogEntry.SUBTYPE_REFERRAL, r.treq(), r.portId(), r.cntlid(), r.asqsz(), 0, r.trsvcid(),
                        r.nqn(), r.traddr());
                e.tsas(r.tsas());
            } else {
                Port.Referral r = referrals.get(k - entries.size() - registered.size());
                e.encode(TargetTransports.type(r.trtype()).code(),
                        r.traddr().contains(":") ? DiscoveryLogEntry.ADRFAM_IPV6 : DiscoveryLogEntry.ADRFAM_IPV4,
                        DiscoveryLogEntry.SUBTYPE_REFERRAL, DiscoveryLogEntry.TREQ_SECURE_CHANNEL_NOT_REQUIRED, r.portid(),
                        0xffff, ADMIN_QUEUE_SIZE, 0, Integer.toString(r.trsvcid()), Nqn.DISCOVERY, r.traddr());
            }
            copy(record, at, out, offset);
        }
        return out;
    }

    /** Copies the part of {@code part} (at {@code partAt} in the page) that falls in {@code out} (at {@code outAt}). */
    private static void copy(ByteBuffer part, long partAt, ByteBuffer out, long outAt) {
        long from = Math.max(partAt, outAt);
        long to = Math.min(partAt + part.capacity(), outAt + out.capacity());
        if (from < to) {
            out.put((int) (from - outAt), part, (int) (from - partAt), (int) (to - from));
        }
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
