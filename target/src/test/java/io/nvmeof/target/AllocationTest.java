package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.ResourceLeakDetector;
import io.nvmeof.fabric.tls.NvmeTls;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.SubmissionQueueEntry;
import io.nvmeof.protocol.tls.TlsPsk;
import io.nvmeof.target.backend.Backend;
import io.nvmeof.target.backend.FileBackend;
import io.nvmeof.target.backend.RamBackend;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The target's data path allocates nothing per command in steady state: heap bytes
 * allocated by its event loop threads are counted (not timed) over many reads and writes.
 * The leak detector is off for the count, since its sampling records allocate by design.
 */
class AllocationTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:alloc";

    @Test
    void readsAndWritesAllocateNothingOnTheEventLoop() throws Exception {
        double perCommand = measure(false);
        assertTrue(perCommand < 8, "allocated " + perCommand + " bytes per command on the event loop");
    }

    /**
     * Over TLS, Bouncy Castle does the handshake and our own record layer the records, sealed and
     * opened by OpenSSL's AES-GCM on pooled buffers: nothing allocated per record either. (Where
     * libcrypto cannot be loaded the JDK's AES-GCM allocates about a kilobyte per record; the bound
     * then is the one the issue sets for TLS, 512 bytes per command, which that fallback misses.)
     */
    @Test
    void overTlsTheRecordsAllocateNothingOnTheEventLoop() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(NvmeTls.openSslMissing() == null,
                "libcrypto is not loadable here: " + NvmeTls.openSslMissing());
        double perCommand = measure(true);
        assertTrue(perCommand < 8, "allocated " + perCommand + " bytes per command on the event loop over TLS");
    }

    /** An O_DIRECT file namespace's reads and writes go through the loop's AIO context: nothing allocated per command there either. */
    @Test
    void fileReadsAndWritesThroughTheRingAllocateNothingOnTheEventLoop(@TempDir Path dir) throws Exception {
        double perCommand = measure(false, FileBackend.open(dir.resolve("ns"), 16 << 20, 4096, false, true));
        assertTrue(perCommand < 8, "allocated " + perCommand + " bytes per command on the event loop (O_DIRECT file, AIO)");
    }

    /**
     * An RBD namespace's reads and writes go to librbd from the event loop, and their completions
     * come back through the image's eventfd: nothing allocated per command on the loops (librbd's
     * completions are native). Against a real one-node Ceph cluster.
     */
    @Test
    void rbdReadsAndWritesThroughLibrbdAllocateNothingOnTheEventLoop(@TempDir Path dir) throws Exception {
        try (io.nvmeof.target.backend.CephCluster ceph = io.nvmeof.target.backend.CephCluster.start(dir.resolve("ceph"))) {
            ceph.rbd("create", "--size", "16M", "rbd/alloc");
            io.nvmeof.target.backend.RbdBackend rbd = (io.nvmeof.target.backend.RbdBackend)
                    io.nvmeof.target.backend.BackendSpec.open("rbd:rbd/alloc,conf=" + ceph.conf() + ",bs=4096");
            double perCommand = measure(false, rbd);
            assertTrue(rbd.aio() != null && rbd.aio().watcher() != null, "the commands went through librbd's aio");
            assertTrue(perCommand < 8, "allocated " + perCommand + " bytes per command on the event loop (RBD)");
        }
    }

    private static double measure(boolean tls) throws Exception {
        return measure(tls, new RamBackend(16 << 20, 4096));
    }

    private static double measure(boolean tls, Backend backend) throws Exception {
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        Target.Options o = Target.Options.defaults();
        o = o.with(Settings.EVENT_LOOP_THREADS, 1);
        try (Target target = new Target(o)) {
            Subsystem s = new Subsystem(NQN, "A1", "alloc", "1.0");
            s.addNamespace(new Namespace(NQN, 1, backend, false, null));
            target.addSubsystem(s);
            TlsPsk key = TlsPsk.create(new byte[32], 1);
            if (tls) {
                target.hostSecurity(List.of(HostSecurity.tls(RawHost.HOST_NQN, key)));
            }
            InetSocketAddress address = target.addPort(new Port(target.nextPortId(), "tcp",
                    Map.of("tls", tls ? "required" : "none"), new InetSocketAddress("127.0.0.1", 0), true, List.of(NQN)))
                    .bound();
            // off from the connections on: their long-lived buffers made under paranoid tracking (TLS's
            // record assembly buffer) would record a trace at every access
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
            try (RawHost admin = new RawHost(address, tls ? NvmeTls.client(key, RawHost.HOST_NQN, NQN, 0,
                    TlsPsk.Derivation.RFC8446) : null);
                 RawHost io = new RawHost(address, tls ? NvmeTls.client(key, RawHost.HOST_NQN, NQN, 0,
                         TlsPsk.Derivation.RFC8446) : null)) {
                int cntlid = admin.bringUpAdmin(NQN);
                io.bringUpIo(NQN, 1, cntlid);
                byte[] block = new byte[4096];
                Consumer<SubmissionQueueEntry> write = q -> q.opcode(NvmOpcode.WRITE.code).psdt(1).nsid(1).slba(3)
                        .blockCount(1).sgl(0, 4096, Sgl.IN_CAPSULE).cid(1);
                Consumer<SubmissionQueueEntry> read = q -> q.opcode(NvmOpcode.READ.code).psdt(1).nsid(1).slba(3)
                        .blockCount(1).sgl(0, 4096, Sgl.TCP_TRANSPORT).cid(2);
                ByteBuffer w = io.capsule(write, block);
                ByteBuffer r = io.capsule(read, null);
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
                System.out.printf("%s: event loop allocated %d bytes over %d commands (%.2f per command)%n",
                        tls ? "TLS" : "clear", bytes, commands, perCommand);
                return perCommand;
            } finally {
                ResourceLeakDetector.setLevel(level);
            }
        }
    }
}
