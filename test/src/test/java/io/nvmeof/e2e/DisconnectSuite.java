package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.NvmeofUri;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.target.RawHost;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Hosts that vanish in the middle of commands cost the target nothing: it serves on, leak-free. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class DisconnectSuite {
    /** The fabric this run of the suite uses. */
    abstract Fabric fabric();

    static final String NQN = "nqn.2026-11.io.nvmeof:disconnect";

    @TempDir
    static Path dir;

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void targetSurvivesClientsThatDisconnectMidCommand() throws Exception {
        try (TargetProcess t = TargetProcess.start(fabric(), dir, "--listen", fabric().listen(), "--subsystem", NQN,
                "--namespace", "file:" + dir.resolve("disk.img") + ",size=64M", "--namespace", "ram:64M")) {
            InetSocketAddress address = new InetSocketAddress("127.0.0.1", t.port);

            if (!fabric().rdma()) {
                rawTcpHostsThatVanish(address);
            }

            // 4. A real client process killed (SIGKILL) in the middle of a queue-depth-64 write load.
            Process bench = new ProcessBuilder(TargetProcess.java("bench", t.uri(NQN, 1), "--rw", "randwrite",
                    "--iodepth", "64", "--bs", "16k", "--runtime", "60")).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("bench.out").toFile()).start();
            Thread.sleep(3000);
            assertTrue(bench.isAlive(), "bench ended early");
            bench.destroyForcibly();
            assertTrue(bench.waitFor(10, TimeUnit.SECONDS));

            // The target still serves: a new host writes and reads back on both namespaces.
            try (Controller c = Controller.connect(NvmeofUri.parse(t.uri(NQN)), ConnectOptions.defaults().ioQueues(2))) {
                for (BlockDevice dev : c.namespaces()) {
                    byte[] data = new byte[1 << 20];
                    new Random(dev.nsid()).nextBytes(data);
                    dev.write(4 << 20, ByteBuffer.wrap(data));
                    ByteBuffer back = ByteBuffer.allocate(data.length);
                    dev.read(4 << 20, back);
                    assertEquals(ByteBuffer.wrap(data), back.flip());
                }
            }
            assertEquals(0, t.stop());
            t.assertNoLeaks();
        }
    }

    /** NVMe/TCP hosts that leave mid-command, written at the PDU level. */
    private void rawTcpHostsThatVanish(InetSocketAddress address) throws Exception {
        // 1. A write whose data the target asked for (R2T) never comes: the host hangs up.
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            int cntlid = admin.bringUpAdmin(NQN);
            io.bringUpIo(NQN, 1, cntlid);
            io.send(io.capsule(s -> s.opcode(NvmOpcode.WRITE.code).psdt(1).nsid(1).slba(0).blockCount(16)
                    .sgl(0, 65536, Sgl.TCP_TRANSPORT), null));
            assertEquals(PduType.R2T, io.receive().type());
        }

        // 2. Half a capsule, then gone.
        try (RawHost h = new RawHost(address)) {
            h.icreq();
            ByteBuffer pdu = h.capsule(RawHost::keepAlive, null);
            h.send(pdu.limit(30));
        }

        // 3. Thirty-two reads and writes against the file namespace, nobody left to answer.
        try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
            int cntlid = admin.bringUpAdmin(NQN);
            io.bringUpIo(NQN, 1, cntlid);
            byte[] block = new byte[4096];
            for (int i = 0; i < 16; i++) {
                int lba = i;
                io.send(io.capsule(s -> s.opcode(NvmOpcode.READ.code).psdt(1).nsid(1).slba(lba).blockCount(64)
                        .sgl(0, 64 * 4096, Sgl.TCP_TRANSPORT), null));
                io.send(io.capsule(s -> s.opcode(NvmOpcode.WRITE.code).psdt(1).nsid(1).slba(1000 + lba).blockCount(1)
                        .sgl(0, 4096, Sgl.IN_CAPSULE), block));
            }
        }
    }
}
