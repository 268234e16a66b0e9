package io.nvmeof.initiator;

import io.nvmeof.protocol.Nqn;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;

/**
 * An NVMe-oF address: {@code nvme+tcp://HOST:PORT/<subsystem NQN>[?nsid=N]}. The port
 * defaults to 4420 (8009 for the discovery subsystem); the NSID to the first active one.
 */
public final class NvmeofUri {
    public static final int DEFAULT_PORT = 4420;
    public static final int DISCOVERY_PORT = 8009;
    private final String transport;
    private final String host;
    private final int port;
    private final String subsystemNqn;
    private final int nsid;

    private NvmeofUri(String transport, String host, int port, String subsystemNqn, int nsid) {
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
        if (scheme == null || !scheme.equals("nvme+tcp")) {
            throw new IllegalArgumentException("bad URI '" + text + "': the scheme must be nvme+tcp"
                    + " (nvme+tcp://HOST:PORT/<subsystem NQN>)");
        }
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
        int port = uri.getPort() > 0 ? uri.getPort() : nqn.equals(Nqn.DISCOVERY) ? DISCOVERY_PORT : DEFAULT_PORT;
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
                } else {
                    throw new IllegalArgumentException("bad URI '" + text + "': unknown parameter '" + kv + "'");
                }
            }
        }
        return new NvmeofUri(scheme.substring(5), host, port, nqn, nsid);
    }

    /** "tcp" */
    public String transport() {
        return transport;
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
        return "nvme+" + transport + "://" + h + ":" + port + "/" + subsystemNqn + (nsid != 0 ? "?nsid=" + Integer.toUnsignedString(nsid) : "");
    }
}
