package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nvmeof.fabric.EventLoops;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.RamBackend;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The host's I/O engine is its connect options' ({@link ConnectOptions#ioEngine}), not the
 * process's: a host on NIO loops moves data with a target of the same process on the process's
 * engine (epoll here), over NVMe/TCP and over soft RDMA, whose host side takes its channels from
 * the host's loops too.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class HostIoEngineTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:host-engine";

    @ParameterizedTest
    @EnumSource(Fabric.class)
    void aHostOnNioLoopsMovesDataWithATargetOnTheProcessEngine(Fabric fabric) throws Exception {
        try (Target target = new Target()) {
            Subsystem s = new Subsystem(NQN, "HE0001", "host-engine", "1.0");
            s.addNamespace(new Namespace(NQN, 1, new RamBackend(4 << 20, 4096), false, null));
            target.addSubsystem(s);
            int port = fabric.listen(target, new InetSocketAddress("127.0.0.1", 0)).getPort();
            EventLoops.Engine targetEngine = EventLoops.engine();
            ConnectOptions o = ConnectOptions.defaults().ioQueues(2).ioEngine(EventLoops.Engine.NIO);
            try (Controller c = Nvmeof.connect(fabric.uri(port, NQN), o)) {
                BlockDevice dev = c.namespace(1);
                byte[] data = new byte[300 * 1024];
                new Random(50).nextBytes(data);
                dev.write(8192, ByteBuffer.wrap(data));
                ByteBuffer back = ByteBuffer.allocateDirect(data.length);
                dev.read(8192, back);
                assertEquals(ByteBuffer.wrap(data), back.flip());
            }
            assertEquals(targetEngine, EventLoops.engine(), "the host's loops leave the process's engine alone");
        }
    }
}
