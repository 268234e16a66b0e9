package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.protocol.DiscoveryLogEntry;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Port;
import io.nvmeof.target.PortListener;
import io.nvmeof.target.PortOptionException;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.TargetTransport;
import io.nvmeof.target.TargetTransports;
import io.nvmeof.target.backend.RamBackend;
import io.nvmeof.target.TcpListener;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A transport plugs in by type on both sides without a line of the core changing: a fake
 * {@code loop} transport (TRTYPE 254, NVMe/TCP's wire underneath, one port option of its own)
 * is registered on the target and on the host; discovery reports it, a host discovers it,
 * connects through its URI, and moves data. (In package {@code io.nvmeof.initiator} for the
 * host side's queue type, which is not public API.)
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PluggableTransportTest {
    private static final String NQN = "nqn.2026-11.io.nvmeof:pluggable";
    private static final AtomicInteger targetQueuesOpened = new AtomicInteger();
    private static final AtomicInteger hostQueuesOpened = new AtomicInteger();

    /** The target's side: listens as NVMe/TCP does, with a "flavour" option to prove options reach it. */
    static final class LoopTarget implements TargetTransport.Type {
        @Override
        public String name() {
            return "loop";
        }

        @Override
        public int code() {
            return 254;
        }

        @Override
        public Map<String, String> options(Map<String, String> configured) {
            for (String k : configured.keySet()) {
                if (!k.equals("flavour")) {
                    throw new PortOptionException(k, "not an option of loop ports");
                }
            }
            return Map.of("flavour", configured.getOrDefault("flavour", "vanilla"));
        }

        @Override
        public void describe(Port port, DiscoveryLogEntry entry) {
            entry.tsasByte(0, port.option("flavour").length());
        }

        @Override
        public TargetTransport create(Target target, EventLoopGroup group) {
            return new TargetTransport() {
                @Override
                public PortListener listen(Port port) throws java.io.IOException, InterruptedException {
                    targetQueuesOpened.incrementAndGet();
                    return TcpListener.bind(target, group, port);
                }

                @Override
                public void close() {
                }
            };
        }
    }

    /** The host's side: opens NVMe/TCP queues under the name "loop". */
    static final class LoopHost extends FakeHostTransport {
        LoopHost() {
            super("loop");
        }

        @Override
        CompletableFuture<HostQueue> open(EventLoopGroup group, InetSocketAddress address, int qid, int depth, int inCapsule,
                                          ConnectOptions options) {
            hostQueuesOpened.incrementAndGet();
            return super.open(group, address, qid, depth, inCapsule, options);
        }
    }

    @Test
    void aFakeTransportServesDiscoveryAndIoOnBothSides() throws Exception {
        TargetTransports.register(new LoopTarget());
        HostTransports.register(new LoopHost());
        try (Target target = new Target()) {
            Subsystem s = new Subsystem(NQN, "LOOP1", "loop", "1.0");
            s.addNamespace(new Namespace(NQN, 1, new RamBackend(4 << 20, 4096), false, null));
            target.addSubsystem(s);
            assertThrows(PortOptionException.class, () -> new Port(9, "loop", Map.of("colour", "red"),
                    new InetSocketAddress("127.0.0.1", 0), true, List.of()), "the transport checks its options");
            Port port = target.addPort(new Port(1, "loop", Map.of("flavour", "mint"), new InetSocketAddress("127.0.0.1", 0),
                    false, List.of(NQN)));
            assertEquals(1, targetQueuesOpened.get());

            String base = "nvme+loop://127.0.0.1:" + port.bound().getPort();
            Discovery.Log log = Nvmeof.discover(base + "/?via=test");
            DiscoveryEntry nvm = log.entries().stream().filter(e -> NQN.equals(e.subsystemNqn())).findFirst().orElseThrow();
            assertEquals(254, nvm.trtype());
            assertEquals(4, nvm.tsas()[0], "the transport described its port (\"mint\")");
            assertEquals(base + "/" + NQN + "?via=test", nvm.uri(), "the host transport's parameters stay in its entries");

            try (Controller c = Nvmeof.connect(nvm.uri(), ConnectOptions.defaults().ioQueues(2))) {
                BlockDevice dev = c.namespace(1);
                ByteBuffer data = ByteBuffer.allocate(64 << 10);
                for (int i = 0; i < data.capacity(); i++) {
                    data.put(i, (byte) (i * 7));
                }
                dev.write(8192, data.duplicate());
                ByteBuffer back = ByteBuffer.allocate(64 << 10);
                dev.read(8192, back);
                assertEquals(data.clear(), back.flip());
            }
            assertTrue(hostQueuesOpened.get() >= 4, "admin queues of discovery and the controller, two I/O queues: "
                    + hostQueuesOpened.get());
        }
    }
}
