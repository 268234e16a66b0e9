package io.nvmeof.initiator;

import io.nvmeof.protocol.Nqn;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * An NVMe-oF address: {@code nvme+<trtype>://HOST:PORT/<subsystem NQN>[?nsid=N][&<transport
 * parameter>=V...]}, e.g. {@code nvme+tcp://10.0.0.5:4420/<NQN>} or {@code
 * nvme+rdma://10.0.0.5:4420/<NQN>?provider=verbs}. The trtype is any registered host transport
 * ({@link HostTransports}), which also checks its parameters. The port defaults to 4420 (the
 * transport's discovery port for the discovery subsystem: 8009 over TCP); the NSID to the
 * first active one.
 */
public final class NvmeofUri {
    public static final int DEFAULT_PORT = 4420;
    public static final int DISCOVERY_PORT = 8009;
    private final HostTransport.Type type;
    private final String host;
    private final int port;
    private final String subsystemNqn;
    private final int nsid;
    private final SortedMap<String, String> options;

    private NvmeofUri(HostTransport.Type type, String host, int port, String subsystemNqn, int nsid,
                      Map<String, String> options) {
        this.type = type;
        this.host = host;
        this.port = port;
        this.subsystemNqn = subsystemNqn;
        this.nsid = nsid;
        this.options = Collections.unmodifiableSortedMap(new TreeMap<>(options));
    }

    /**
     * Parses a URI that may name several paths to one subsystem, {@code
     * nvme+tcp://h1:4420,h2:4420/<NQN>} (one URI per address, in order; the path, NSID and
     * transport parameters are every path's).
     */
    /** The transports this host speaks ({@code tcp}, {@code rdma}): what {@code nvme+TRTYPE} may name, sorted. */
    public static java.util.Set<String> transports() {
        return HostTransports.names();
    }

    public static List<NvmeofUri> parseAll(String text) {
        int s = text.indexOf("://");
        int slash = s < 0 ? -1 : text.indexOf('/', s + 3);
        int end = slash < 0 ? text.length() : slash;
        int q = text.indexOf('?', s + 3);
        if (q >= 0 && q < end) {
            end = q;
        }
        if (s < 0 || text.indexOf(',', s + 3) < 0 || text.indexOf(',', s + 3) > end) {
            return List.of(parse(text));
        }
        List<NvmeofUri> all = new ArrayList<>();
        for (String host : text.substring(s + 3, end).split(",", -1)) {
            if (host.isBlank()) {
                throw new IllegalArgumentException("bad URI '" + text + "': an empty address in the list");
            }
            all.add(parse(text.substring(0, s + 3) + host.trim() + text.substring(end)));
        }
        return List.copyOf(all);
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
        HostTransport.Type type = scheme != null && scheme.startsWith("nvme+") ? HostTransports.find(scheme.substring(5))
                : null;
        if (type == null) {
            StringBuilder known = new StringBuilder();
            for (String n : HostTransports.names()) {
                known.append(known.length() == 0 ? "" : " or ").append("nvme+").append(n);
            }
            throw new IllegalArgumentException("bad URI '" + text + "': the scheme must be " + known
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
        int port = uri.getPort() > 0 ? uri.getPort() : nqn.equals(Nqn.DISCOVERY) ? type.discoveryPort() : DEFAULT_PORT;
        int nsid = 0;
        Map<String, String> options = new TreeMap<>();
        String query = uri.getQuery();
        if (query != null && !query.isEmpty()) {
            for (String kv : query.split("&")) {
                int eq = kv.indexOf('=');
                if (kv.startsWith("nsid=")) {
                    try {
                        nsid = Integer.parseUnsignedInt(kv.substring(5));
                    } catch (NumberFormatException e) {
                        nsid = 0;
                    }
                    if (nsid == 0 || nsid == -1) {
                        throw new IllegalArgumentException("bad URI '" + text + "': nsid must be 1..4294967294");
                    }
                } else if (eq > 0) {
                    options.put(kv.substring(0, eq), kv.substring(eq + 1));
                } else {
                    throw new IllegalArgumentException("bad URI '" + text + "': unknown parameter '" + kv + "'");
                }
            }
        }
        try {
            options = type.options(options);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad URI '" + text + "': " + e.getMessage());
        }
        return new NvmeofUri(type, host, port, nqn, nsid, options);
    }

    /** The trtype: "tcp", "rdma", ... */
    public String transport() {
        return type.name();
    }

    HostTransport.Type transportType() {
        return type;
    }

    /** The transport's parameters (NVMe/RDMA: {@code provider}), as given. */
    public SortedMap<String, String> options() {
        return options;
    }

    /** One transport parameter, or null (the transport's default). */
    public String option(String name) {
        return options.get(name);
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
        StringBuilder q = new StringBuilder();
        if (nsid != 0) {
            q.append("&nsid=").append(Integer.toUnsignedString(nsid));
        }
        options.forEach((k, v) -> q.append('&').append(k).append('=').append(v));
        return "nvme+" + transport() + "://" + h + ":" + port + "/" + subsystemNqn + (q.length() == 0 ? "" : "?" + q.substring(1));
    }
}
