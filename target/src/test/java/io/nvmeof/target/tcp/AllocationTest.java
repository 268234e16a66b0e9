package io.nvmeof.target.tcp;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.ResourceLeakDetector;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.SubmissionQueueEntry;
import io.nvmeof.target.LoopAllocation;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.RamBackend;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The target's data path allocates nothing per command in steady state: heap bytes
 * allocated by its event loop threads are counted (not timed) over many reads and writes.
 * The leak detector is off for the count, since its sampling records allocate by design.
 */
class AllocationTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:alloc";

    @Test
    void readsAndWritesAllocateNothingOnTheEventLoop() throws Exception {
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        Target.Options o = new Target.Options();
        o.eventLoopThreads = 1;
        try (Target target = new Target(o)) {
            Subsystem s = new Subsystem(NQN, "A1", "alloc", "1.0");
            s.addNamespace(new Namespace(NQN, 1, new RamBackend(16 << 20, 4096), false, null));
            target.addSubsystem(s);
            InetSocketAddress address = target.listenTcp(new InetSocketAddress("127.0.0.1", 0));
            try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
                int cntlid = admin.bringUpAdmin(NQN);
                io.bringUpIo(NQN, 1, cntlid);
                byte[] block = new byte[4096];
                Consumer<SubmissionQueueEntry> write = q -> q.opcode(NvmOpcode.WRITE.code).psdt(1).nsid(1).slba(3)
                        .blockCount(1).sgl(0, 4096, Sgl.IN_CAPSULE).cid(1);
                Consumer<SubmissionQueueEntry> read = q -> q.opcode(NvmOpcode.READ.code).psdt(1).nsid(1).slba(3)
                        .blockCount(1).sgl(0, 4096, Sgl.TCP_TRANSPORT).cid(2);
                ByteBuffer w = io.capsule(write, block);
                ByteBuffer r = io.capsule(read, null);
                ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
                int commands = 0;
                for (int i = 0; i < 5000; i++) { // warm up: pools, caches, JIT
                    io.send(w);
                    io.receive();
                    io.send(r);
                    io.receive();
                    io.receive();
                }
                long before = LoopAllocation.targetLoopBytes();
                for (int i = 0; i < 10000; i++) {
                    io.send(w);
                    io.receive();
                    io.send(r);
                    io.receive();
                    io.receive();
                    commands += 2;
                }
                long bytes = LoopAllocation.targetLoopBytes() - before;
                double perCommand = (double) bytes / commands;
                System.out.printf("event loop allocated %d bytes over %d commands (%.2f per command)%n", bytes,
                        commands, perCommand);
                assertTrue(perCommand < 8, "allocated " + perCommand + " bytes per command on the event loop");
            } finally {
                ResourceLeakDetector.setLevel(level);
            }
        }
    }
}
