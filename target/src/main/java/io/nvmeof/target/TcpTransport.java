package io.nvmeof.target;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.protocol.DiscoveryLogEntry;
import java.util.List;
import java.util.Map;

/** The target's NVMe/TCP transport: a listener per port, a {@link TcpQueue} per connection. */
public final class TcpTransport implements TargetTransport {
    private final Target target;
    private final EventLoopGroup group;

    TcpTransport(Target target, EventLoopGroup group) {
        this.target = target;
        this.group = group;
    }

    @Override
    public PortListener listen(Port port) throws java.io.IOException, InterruptedException {
        return TcpListener.bind(target, group, port);
    }

    @Override
    public void close() {
        // the listeners own their channels; nothing is shared across ports
    }

    /** Port option {@code tls}: {@code none} (the default), {@code optional} or {@code required}. */
    public static final String TLS = "tls";

    /** NVMe/TCP as a target transport type: {@code tcp}; port option {@link #TLS}. */
    public static final class Type implements TargetTransport.Type {
        @Override
        public String name() {
            return "tcp";
        }

        @Override
        public int code() {
            return DiscoveryLogEntry.TRTYPE_TCP;
        }

        @Override
        public List<PortOption> portOptions() {
            return List.of(new PortOption(TLS, "none|optional|required", "NVMe/TCP over TLS 1.3 with a PSK:"
                    + " none (the default), optional (a host may use it) or required (every host must)."));
        }

        @Override
        public Map<String, String> options(Map<String, String> configured) {
            for (String k : configured.keySet()) {
                if (!k.equals(TLS)) {
                    throw new PortOptionException(k, "not an option of tcp ports (only " + TLS + ")");
                }
            }
            String tls = configured.getOrDefault(TLS, "none");
            if (!tls.equals("none") && !tls.equals("optional") && !tls.equals("required")) {
                throw new PortOptionException(TLS, "must be none, optional or required, not '" + tls + "'");
            }
            return Map.of(TLS, tls);
        }

        @Override
        public void describe(Port port, DiscoveryLogEntry entry) {
            // TSAS for NVMe/TCP: SECTYPE; TREQ bits 1:0 say whether the secure channel is required
            String tls = port.options().getOrDefault(TLS, "none");
            if (!tls.equals("none")) {
                entry.tsasByte(DiscoveryLogEntry.TSAS_TCP_SECTYPE, DiscoveryLogEntry.SECTYPE_TLS13);
                entry.treq(entry.treq() & ~3 | (tls.equals("required") ? DiscoveryLogEntry.TREQ_SECURE_CHANNEL_REQUIRED
                        : DiscoveryLogEntry.TREQ_SECURE_CHANNEL_NOT_REQUIRED));
            }
        }

        @Override
        public TargetTransport create(Target target, EventLoopGroup group) {
            return new TcpTransport(target, group);
        }
    }
}
