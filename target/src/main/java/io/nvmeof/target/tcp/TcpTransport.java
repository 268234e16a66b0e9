package io.nvmeof.target.tcp;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.protocol.DiscoveryLogEntry;
import io.nvmeof.target.Port;
import io.nvmeof.target.PortListener;
import io.nvmeof.target.PortOptionException;
import io.nvmeof.target.Target;
import io.nvmeof.target.TargetTransport;
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
    public PortListener listen(Port port) throws InterruptedException {
        return TcpListener.bind(target, group, port);
    }

    @Override
    public void close() {
        // the listeners own their channels; nothing is shared across ports
    }

    /** NVMe/TCP as a target transport type: {@code tcp}, no port options. */
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
        public Map<String, String> options(Map<String, String> configured) {
            for (String k : configured.keySet()) {
                throw new PortOptionException(k, "not an option of tcp ports");
            }
            return Map.of();
        }

        @Override
        public void describe(Port port, DiscoveryLogEntry entry) {
            // TSAS for NVMe/TCP: SECTYPE 0, no security (the entry is zeroed)
        }

        @Override
        public TargetTransport create(Target target, EventLoopGroup group) {
            return new TcpTransport(target, group);
        }
    }
}
