package io.nvmeof.initiator;

import io.nvmeof.protocol.Nqn;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;

/**
 * An NVMe-oF address: {@code nvme+tcp://HOST:PORT/<subsystem NQN>[?nsid=N]} or {@code
 * nvme+rdma://HOST:PORT/<subsystem NQN>[?nsid=N][&provider=verbs|disni|soft]}. The port
 * defaults to 4420 (8009 for the discovery subsystem over TCP); the NSID to the first active
 * one; the RDMA provider to {@code verbs}.
 */
public final class NvmeofUri {
    public static final int DEFAULT_PORT = 4420;
    public static final int DISCOVERY_PORT = 8009;
    private final String transport;
    private final String host;
    private final int port;
    private final String subsystemNqn;
    private final int nsid;
    private final String provider;

    private NvmeofUri(String transport, String host, int port, String subsystemNqn, int nsid, String provider) {
        this.provider = provider;
        this.transport = transport;
        this.host = host;
        this.port = port;
        this.subsystemNqn = subsystemNqn;
        this.nsid = nsid;
    }

    /** Parses a URI; the message of the {@link IllegalArgumentException} says what is wrong. */
    public static NvmeofUri parse(String text) {
        URI uri;
        try {
            uri = new URI(text);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("bad URI '" + text + "': " + e.getReason());
        }
        String scheme = uri.getScheme();
        if (scheme == null || !scheme.equals("nvme+tcp") && !scheme.equals("nvme+rdma")) {
            throw new IllegalArgumentException("bad URI '" + text + "': the scheme must be nvme+tcp or nvme+rdma"
                    + " (nvme+tcp://HOST:PORT/<subsystem NQN>)");
        }
        boolean rdma = scheme.equals("nvme+rdma");
        String provider = null;
        String host = uri.getHost();
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException("bad URI '" + text + "': no host");
        }
        String path = uri.getPath();
        String nqn = path == null || path.length() <= 1 ? Nqn.DISCOVERY : path.substring(1);
        String problem = Nqn.problem(nqn);
        if (problem != null) {
            throw new IllegalArgumentException("bad URI '" + text + "': " + problem);
        }
        int port = uri.getPort() > 0 ? uri.getPort() : nqn.equals(Nqn.DISCOVERY) && !rdma ? DISCOVERY_PORT : DEFAULT_PORT;
        int nsid = 0;
        String query = uri.getQuery();
        if (query != null && !query.isEmpty()) {
            for (String kv : query.split("&")) {
                if (kv.startsWith("nsid=")) {
                    try {
                        nsid = Integer.parseUnsignedInt(kv.substring(5));
                    } catch (NumberFormatException e) {
                        nsid = 0;
                    }
                    if (nsid == 0 || nsid == -1) {
                        throw new IllegalArgumentException("bad URI '" + text + "': nsid must be 1..4294967294");
                    }
                } else if (kv.startsWith("provider=") && rdma) {
                    provider = kv.substring(9);
                    if (!io.nvmeof.fabric.rdma.RdmaProviders.NAMES.contains(provider)) {
                        throw new IllegalArgumentException("bad URI '" + text + "': provider must be one of "
                                + String.join(", ", io.nvmeof.fabric.rdma.RdmaProviders.NAMES));
                    }
                } else {
                    throw new IllegalArgumentException("bad URI '" + text + "': unknown parameter '" + kv + "'");
                }
            }
        }
        return new NvmeofUri(scheme.substring(5), host, port, nqn, nsid, provider);
    }

    /** "tcp" or "rdma" */
    public String transport() {
        return transport;
    }

    public boolean isRdma() {
        return "rdma".equals(transport);
    }

    /** The RDMA provider asked for, or null (the default; always null for TCP). */
    public String provider() {
        return provider;
    }


    public String host() {
        return host;
    }

    public int port() {
        return port;
    }

    public InetSocketAddress address() {
        return new InetSocketAddress(host, port);
    }

    public String subsystemNqn() {
        return subsystemNqn;
    }

    /** The NSID asked for, or 0 for "the first active namespace". */
    public int nsid() {
        return nsid;
    }

    @Override
    public String toString() {
        String h = host.contains(":") ? "[" + host + "]" : host;
        String q = (nsid != 0 ? "&nsid=" + Integer.toUnsignedString(nsid) : "") + (provider != null ? "&provider=" + provider : "");
        return "nvme+" + transport + "://" + h + ":" + port + "/" + subsystemNqn + (q.isEmpty() ? "" : "?" + q.substring(1));
    }
}
