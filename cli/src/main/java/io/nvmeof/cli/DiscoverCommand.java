package io.nvmeof.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.initiator.DiscoveryEntry;
import io.nvmeof.initiator.Discovery;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.mdns.MdnsDiscovery;
import io.nvmeof.protocol.DiscoveryLogEntry;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code nvmeof discover -t tcp -a ADDR -s PORT [-o json]}: the discovery log, printed as nvme-cli prints it. */
@Command(name = "discover", mixinStandardHelpOptions = true,
        description = "Read the discovery log of an NVMe-oF discovery service.")
final class DiscoverCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = {"-t", "--transport"}, completionCandidates = Completions.Transports.class, defaultValue = "tcp", description = "Transport type (tcp or rdma).")
    String transport;

    @Option(names = "--rdma-provider", paramLabel = "verbs|disni|soft", description = "RDMA provider (default: verbs).")
    String rdmaProvider;

    @CommandLine.Parameters(index = "0", arity = "0..1", paramLabel = "URI", description = "The discovery service as the"
            + " other commands take a target: nvme+tcp://HOST[:PORT] (default port 8009) or nvme+rdma://HOST[:PORT];"
            + " instead of -t, -a and -s.")
    String uri;

    @Option(names = {"-a", "--traddr"}, description = "Transport address of the discovery service (nvme-cli's form;"
            + " or give a URI).")
    String traddr;

    @Option(names = {"-s", "--trsvcid"}, description = "Transport service id, the port (default: 8009 for tcp, 4420 for rdma).")
    Integer trsvcid;

    @Option(names = "--mdns", description = "Find the discovery services announced over mDNS/DNS-SD on this machine's"
            + " links (_nvme-disc._tcp and _nvme-disc._udp, TP8009) and read each one's log, instead of naming one.")
    boolean mdns;

    @Option(names = "--mdns-wait", paramLabel = "SECONDS", defaultValue = "3",
            description = "How long --mdns listens for announcements (default: ${DEFAULT-VALUE}).")
    int mdnsWait;

    @Mixin
    OutputFormat output;

    @Mixin
    ConnectionOptions connection;

    @Override
    public Integer call() throws Exception {
        if (mdns) {
            return browse();
        }
        String where;
        if (uri != null) {
            if (traddr != null || trsvcid != null) {
                throw new IllegalArgumentException("give the discovery service as a URI or with -a/-s, not both");
            }
            where = uri;
        } else if (traddr != null) {
            String host = traddr.contains(":") ? "[" + traddr + "]" : traddr;
            where = "nvme+" + transport + "://" + host + (trsvcid != null ? ":" + trsvcid : "")
                    + (rdmaProvider != null ? "/?provider=" + rdmaProvider : "");
        } else {
            throw new IllegalArgumentException("which discovery service? give a URI (nvme+tcp://HOST[:PORT]) or -a ADDRESS");
        }
        // the transport checks its own parameters and picks the discovery port when none is given
        Discovery.Log log = Nvmeof.discover(where, connection.toOptions());
        PrintWriter out = spec.commandLine().getOut();
        if (output.json()) {
            out.println(json(log).toPrettyString());
        } else {
            print(log, out);
        }
        out.flush();
        return 0;
    }

    /** --mdns: each discovery service announced, and its log; 1 when none is found. */
    private int browse() throws Exception {
        if (uri != null || traddr != null || trsvcid != null) {
            throw new IllegalArgumentException("--mdns finds the discovery services itself: give no URI, -a or -s");
        }
        if (mdnsWait < 1 || mdnsWait > 60) {
            throw new IllegalArgumentException("--mdns-wait must be 1..60 seconds, not " + mdnsWait);
        }
        List<MdnsDiscovery.Found> found = MdnsDiscovery.discover(Duration.ofSeconds(mdnsWait), connection.toOptions());
        PrintWriter out = spec.commandLine().getOut();
        if (output.json()) {
            ArrayNode all = new ObjectMapper().createArrayNode();
            for (MdnsDiscovery.Found f : found) {
                ObjectNode n = all.addObject();
                n.put("instance", f.announcement().instance());
                n.put("uri", f.announcement().uri());
                n.put("nqn", f.announcement().nqn());
                if (f.log() != null) {
                    n.set("log", json(f.log()));
                } else {
                    n.put("error", f.error());
                }
            }
            out.println(all.toPrettyString());
        } else {
            out.println("mDNS: " + found.size() + " discovery service(s) announced");
            for (MdnsDiscovery.Found f : found) {
                out.println();
                out.println("mDNS service '" + f.announcement().instance() + "' at " + f.announcement().uri() + " ("
                        + f.announcement().nqn() + ")");
                if (f.log() != null) {
                    print(f.log(), out);
                } else {
                    out.println("cannot read its discovery log: " + f.error());
                }
            }
        }
        out.flush();
        return found.isEmpty() ? 1 : 0;
    }

    static ObjectNode json(Discovery.Log log) {
        ObjectMapper m = new ObjectMapper();
        ObjectNode root = m.createObjectNode();
        root.put("genctr", log.generation());
        ArrayNode records = root.putArray("records");
        for (DiscoveryEntry e : log.entries()) {
            ObjectNode r = records.addObject();
            r.put("trtype", e.transportName());
            r.put("adrfam", e.addressFamilyName());
            r.put("subtype", e.subtypeName());
            r.put("treq", e.treqName());
            r.put("portid", e.portId());
            r.put("trsvcid", e.trsvcid());
            r.put("subnqn", e.subsystemNqn());
            r.put("traddr", e.traddr());
            r.put("eflags", eflags(e.eflags()));
            if (e.trtype() == 1) {
                r.put("rdma_prtype", e.rdmaPrtypeName());
                r.put("rdma_qptype", e.rdmaQptypeName());
                r.put("rdma_cms", e.rdmaCmsName());
                r.put("rdma_pkey", "0x0000");
            } else {
                r.put("sectype", sectype(e.sectype()));
            }
            r.put("uri", e.uri());
        }
        return root;
    }

    static void print(Discovery.Log log, PrintWriter out) {
        out.println();
        out.println("Discovery Log Number of Records " + log.entries().size() + ", Generation counter " + log.generation());
        int i = 0;
        for (DiscoveryEntry e : log.entries()) {
            out.println("=====Discovery Log Entry " + i++ + "======");
            out.println("trtype:  " + e.transportName());
            out.println("adrfam:  " + e.addressFamilyName());
            out.println("subtype: " + e.subtypeName());
            out.println("treq:    " + e.treqName());
            out.println("portid:  " + e.portId());
            out.println("trsvcid: " + e.trsvcid());
            out.println("subnqn:  " + e.subsystemNqn());
            out.println("traddr:  " + e.traddr());
            out.println("eflags:  " + eflags(e.eflags()));
            if (e.trtype() == 1) {
                out.println("rdma_prtype: " + e.rdmaPrtypeName());
                out.println("rdma_qptype: " + e.rdmaQptypeName());
                out.println("rdma_cms:    " + e.rdmaCmsName());
                out.println("rdma_pkey: 0x0000");
            } else {
                out.println("sectype: " + (sectype(e.sectype())));
            }
        }
    }

    /** nvme-cli's words for EFLAGS. */
    static String eflags(int eflags) {
        if (eflags == 0) {
            return "none";
        }
        StringBuilder b = new StringBuilder();
        if ((eflags & 1) != 0) {
            b.append("duplicate discovery information");
        }
        if ((eflags & DiscoveryLogEntry.EFLAGS_EPCSD) != 0) {
            b.append(b.length() > 0 ? ", " : "").append("explicit discovery connections");
        }
        if ((eflags & 4) != 0) {
            b.append(b.length() > 0 ? ", " : "").append("no cdc connectivity");
        }
        return b.toString();
    }

    /** TSAS SECTYPE as nvme-cli names it. */
    static String sectype(int v) {
        return switch (v) {
            case 0 -> "none";
            case 1 -> "tls1.2";
            case 2 -> "tls1.3";
            default -> Integer.toString(v);
        };
    }
}
