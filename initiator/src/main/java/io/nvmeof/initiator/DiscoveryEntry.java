package io.nvmeof.initiator;

import io.nvmeof.protocol.DiscoveryLogEntry;
import io.nvmeof.protocol.Nqn;
import java.util.Map;
import java.util.TreeMap;

/**
 * One entry of a discovery log (NVMe-oF 1.1, 5.3): where a subsystem can be reached.
 *
 * @param trtype  transport type (3 = TCP, 1 = RDMA)
 * @param adrfam  address family (1 = IPv4, 2 = IPv6)
 * @param subtype 1 referral, 2 NVM subsystem, 3 current discovery subsystem
 * @param tsas    the transport specific address subtype's first bytes: TCP SECTYPE; RDMA QPTYPE, PRTYPE, CMS
 * @param options the transport parameters of the URI the log was read through, kept in the URIs of
 *                entries of that same transport (NVMe/RDMA: the provider); empty for others
 */
public record DiscoveryEntry(int trtype, int adrfam, int subtype, int treq, int portId, int cntlid, int asqsz,
                             int eflags, String trsvcid, String subsystemNqn, String traddr, int[] tsas,
                             Map<String, String> options) {

    static DiscoveryEntry of(DiscoveryLogEntry e, NvmeofUri via) {
        DiscoveryEntry d = new DiscoveryEntry(e.trtype(), e.adrfam(), e.subtype(), e.treq(), e.portId(), e.cntlid(),
                e.asqsz(), e.eflags(), e.trsvcid(), e.subsystemNqn(), e.traddr(), new int[] {e.tsasByte(0),
                    e.tsasByte(1), e.tsasByte(2)}, Map.of());
        return d.transportName().equals(via.transport()) ? d.withOptions(via.options()) : d;
    }

    private DiscoveryEntry withOptions(Map<String, String> o) {
        return new DiscoveryEntry(trtype, adrfam, subtype, treq, portId, cntlid, asqsz, eflags, trsvcid, subsystemNqn,
                traddr, tsas, new TreeMap<>(o));
    }

    /** TCP: SECTYPE (0 = none). */
    public int sectype() {
        return trtype == DiscoveryLogEntry.TRTYPE_TCP ? tsas[0] : 0;
    }

    /** The entry as a URI this library connects to, e.g. {@code nvme+tcp://10.0.0.5:4420/<NQN>}. */
    public String uri() {
        String host = adrfam == DiscoveryLogEntry.ADRFAM_IPV6 ? "[" + traddr + "]" : traddr;
        StringBuilder q = new StringBuilder();
        options.forEach((k, v) -> q.append(q.length() == 0 ? '?' : '&').append(k).append('=').append(v));
        return "nvme+" + transportName() + "://" + host + ":" + trsvcid + "/" + subsystemNqn + q;
    }

    /** nvme-cli's names for the RDMA QPTYPE, PRTYPE and CMS of an RDMA entry. */
    public String rdmaQptypeName() {
        return tsas[0] == 1 ? "connected" : tsas[0] == 2 ? "datagram" : "unrecognized";
    }

    public String rdmaPrtypeName() {
        switch (tsas[1]) {
            case 1: return "not specified";
            case 2: return "infiniband";
            case 3: return "roce";
            case 4: return "roce-v2";
            case 5: return "iwarp";
            default: return "unrecognized";
        }
    }

    public String rdmaCmsName() {
        return tsas[2] == 1 ? "rdma-cm" : "unrecognized";
    }

    /** Whether this entry points at a discovery service rather than an NVM subsystem. */
    public boolean isDiscovery() {
        return subtype != DiscoveryLogEntry.SUBTYPE_NVM || Nqn.DISCOVERY.equals(subsystemNqn);
    }

    /** nvme-cli's names for TRTYPE. */
    public String transportName() {
        switch (trtype) {
            case DiscoveryLogEntry.TRTYPE_RDMA: return "rdma";
            case DiscoveryLogEntry.TRTYPE_FC: return "fc";
            case DiscoveryLogEntry.TRTYPE_TCP: return "tcp";
            case 254: return "loop";
            default: return "unrecognized";
        }
    }

    public String addressFamilyName() {
        switch (adrfam) {
            case 1: return "ipv4";
            case 2: return "ipv6";
            case 3: return "infiniband";
            case 4: return "fibre-channel";
            case 254: return "loop";
            default: return "unrecognized";
        }
    }

    public String subtypeName() {
        switch (subtype) {
            case DiscoveryLogEntry.SUBTYPE_REFERRAL: return "discovery subsystem referral";
            case DiscoveryLogEntry.SUBTYPE_NVM: return "nvme subsystem";
            case DiscoveryLogEntry.SUBTYPE_CURRENT_DISCOVERY: return "current discovery subsystem";
            default: return "unrecognized";
        }
    }

    public String treqName() {
        String secure;
        switch (treq & 3) {
            case 1: secure = "required"; break;
            case 2: secure = "not required"; break;
            default: secure = "not specified";
        }
        return (treq & DiscoveryLogEntry.TREQ_SQ_FLOW_CONTROL_DISABLE) != 0 ? secure + ", sq flow control disable supported"
                : secure;
    }
}
