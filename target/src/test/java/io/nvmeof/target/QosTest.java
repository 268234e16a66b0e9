package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.target.backend.RamBackend;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/**
 * QoS on the wire: commands over a namespace's or a host's limit are delayed, never failed, and a
 * write over the limit gets its R2T only when its turn comes. (The rate itself is measured by
 * `nvmeof bench`, not here: a limiter can only be slower than the limit, so the test asserts
 * that much and no more.)
 */
class QosTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:qos";

    @Test
    void commandsOverTheLimitWaitAndAllSucceed() throws Exception {
        try (Target target = new Target()) {
            Subsystem s = new Subsystem(NQN, "Q1", "qos", "1.0");
            Namespace ns = new Namespace(NQN, 1, new RamBackend(1 << 20, 4096), false, null);
            s.addNamespace(ns);
            target.addSubsystem(s);
            ns.qos(new Qos.Limits(1000, 0, 0, 0)); // 1000 IOPS: 10 at once, then one a millisecond
            InetSocketAddress address = target.listenTcp(new InetSocketAddress("127.0.0.1", 0));
            try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
                io.bringUpIo(NQN, 1, admin.bringUpAdmin(NQN));
                int n = 30;
                long start = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    int lba = i;
                    io.send(io.capsule(q -> q.blocks(NvmOpcode.READ, lba, 1).psdt(1).nsid(1).sgl(0, 4096, Sgl.TCP_TRANSPORT), null));
                }
                int done = 0;
                while (done < n) {
                    RawHost.Received r = io.receive();
                    if (r.type() == PduType.C2H_DATA) {
                        continue;
                    }
                    assertEquals(Status.SUCCESS, r.cqe().status());
                    done++;
                }
                long elapsed = System.nanoTime() - start;
                assertTrue(elapsed >= 19_000_000L, "30 reads at 1000 IOPS past a burst of 10 take at least 20 ms: " + elapsed);

                // a host limit too: this host's controllers, whatever namespace
                target.hostQos(RawHost.HOST_NQN, new Qos.Limits(0, 0, 0, 1 << 20)); // 1 MiB/s of writes
                ns.qos(Qos.Limits.NONE);
                start = System.nanoTime();
                for (int i = 0; i < 4; i++) {
                    io.send(io.capsule(q -> q.blocks(NvmOpcode.WRITE, 0, 4).psdt(1).nsid(1).sgl(0, 16384, Sgl.TCP_TRANSPORT),
                            null));
                }
                for (int i = 0; i < 4; i++) {
                    RawHost.Received r2t = io.receive();
                    assertEquals(PduType.R2T, r2t.type());
                    io.answer(r2t, new byte[16384]);
                    assertEquals(Status.SUCCESS, io.receive().cqe().status());
                }
                elapsed = System.nanoTime() - start;
                // 64 KiB at 1 MiB/s past a 10 KiB burst: at least 50 ms, each write's R2T only in its turn
                assertTrue(elapsed >= 50_000_000L, "4 x 16 KiB writes at 1 MiB/s took " + elapsed + " ns");
                assertTrue(target.hostQos(RawHost.HOST_NQN).throttledCommands() > 0, "the host's writes waited");
            }
        }
    }
}
