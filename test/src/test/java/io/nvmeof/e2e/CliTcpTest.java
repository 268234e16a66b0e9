package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link CliSuite} over NVMe/TCP. */
class CliTcpTest extends CliSuite {
    @Override
    Fabric fabric() {
        return Fabric.TCP;
    }

    /**
     * Netty's io_uring transport, chosen by the target's io_engine setting and by the host's
     * --io-engine, moves data like epoll.
     */
    @Test
    void ioUringOnBothSidesMovesData() throws Exception {
        try (TargetProcess t = TargetProcess.start(fabric(), dir, "--listen", fabric().listen(), "--subsystem", NQN,
                "--namespace", "ram:4M", "--io-engine", "io_uring")) {
            assumeTrue(t.err().contains("event loops on io_uring"), "io_uring is not available here: " + t.err());
            byte[] data = new byte[300_000];
            new Random(11).nextBytes(data);
            Path in = dir.resolve("uring-in.bin");
            Path out = dir.resolve("uring-out.bin");
            Files.write(in, data);
            TargetProcess.Run w = TargetProcess.cli(60, "write", t.uri(NQN), "--io-engine", "io_uring",
                    "--offset", "8192", "--input", in.toString());
            assertEquals(0, w.exit(), w.err());
            TargetProcess.Run r = TargetProcess.cli(60, "read", t.uri(NQN), "--io-engine", "io_uring",
                    "--offset", "8192", "--length", Integer.toString(data.length), "--output", out.toString());
            assertEquals(0, r.exit(), r.err());
            assertArrayEquals(data, Files.readAllBytes(out));
            assertEquals(0, t.stop());
            t.assertNoLeaks();
        }
    }

    @Test
    void anUnknownIoEngineIsNamed() throws Exception {
        TargetProcess.Run t = TargetProcess.cli(30, "target", "--listen", "tcp://127.0.0.1:0", "--subsystem",
                NQN, "--namespace", "ram:1M", "--io-engine", "dpdk");
        assertEquals(1, t.exit(), t.err());
        assertTrue(t.err().contains("--io-engine must be epoll, io_uring or nio, not 'dpdk'"), t.err());
        TargetProcess.Run r = TargetProcess.cli(30, "read", fabric().uri(1, NQN), "--io-engine", "dpdk",
                "--offset", "0", "--length", "4096", "--output", dir.resolve("never.bin").toString());
        assertNotEquals(0, r.exit());
        assertTrue(r.err().contains("--io-engine: expected epoll, io_uring or nio: 'dpdk'"), r.err());
    }
}
