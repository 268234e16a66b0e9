package io.nvmeof.e2e;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.NvmeofUri;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Wire-format oracle: Wireshark's own NVMe/TCP dissector reads a capture of a real session
 * (target process, initiator, loopback) and must find no malformed PDU, no expert error and
 * no bad digest, in plain and in digest-protected connections.
 */
class WireOracleTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:oracle";

    @TempDir
    Path dir;

    static boolean haveTshark() {
        try {
            return new ProcessBuilder("tshark", "--version").redirectErrorStream(true).start().waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void everyPduDecodesClean() throws Exception {
        if (System.getenv("CI") != null) {
            assertTrue(haveTshark(), "CI must have tshark (.ci/run installs it)");
        }
        assumeTrue(haveTshark(), "tshark is not installed");
        Path pcap = dir.resolve("session.pcapng");
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, "--listen", "tcp://127.0.0.1:0", "--subsystem", NQN,
                "--namespace", "ram:64M", "--namespace", "file:" + dir.resolve("d.img") + ",size=16M")) {
            Path tsharkErr = dir.resolve("tshark.err");
            Process tshark = new ProcessBuilder("tshark", "-i", "lo", "-f", "tcp port " + t.port, "-w", pcap.toString(), "-q")
                    .redirectErrorStream(true).redirectOutput(tsharkErr.toFile()).start();
            try {
                await("tshark capturing").atMost(TargetProcess.PATIENCE)
                        .failFast("tshark died", () -> !tshark.isAlive())
                        .until(() -> Files.readString(tsharkErr).contains("Capturing on"));
                Thread.sleep(300);
                session(t, false, false);
                session(t, true, true);
                session(t, true, false);
                Thread.sleep(500);
            } finally {
                tshark.destroy();
                tshark.waitFor(20, TimeUnit.SECONDS);
            }
            assertEquals(0, t.stop());
            t.assertNoLeaks();
        }
        assertTrue(Files.size(pcap) > 0, "capture is empty");
        int port = portOf(pcap);
        String decode = "tcp.port==" + port + ",nvme-tcp";
        List<String> bad = tshark("-r", pcap.toString(), "-d", decode, "-o", "nvme-tcp.check_hdgst:TRUE",
                "-o", "nvme-tcp.check_ddgst:TRUE", "-Y", "_ws.malformed || _ws.expert.severity >= error",
                "-T", "fields", "-e", "frame.number", "-e", "_ws.expert.message");
        assertTrue(bad.isEmpty(), "tshark flagged frames:\n" + String.join("\n", bad));
        List<String> types = tshark("-r", pcap.toString(), "-d", decode, "-Y", "nvme-tcp", "-T", "fields", "-e",
                "nvme-tcp.type");
        Set<Integer> seen = new TreeSet<>();
        for (String line : types) {
            for (String v : line.split(",")) {
                if (!v.isBlank()) {
                    seen.add(Integer.decode(v.trim()));
                }
            }
        }
        // ICReq, ICResp, CapsuleCmd, CapsuleResp, H2CData, C2HData, R2T all on the wire and dissected
        assertTrue(seen.containsAll(Set.of(0, 1, 4, 5, 6, 7, 9)), "PDU types dissected: " + seen);
        List<String> digests = tshark("-r", pcap.toString(), "-d", decode, "-o", "nvme-tcp.check_hdgst:TRUE",
                "-o", "nvme-tcp.check_ddgst:TRUE", "-Y", "nvme-tcp.hdgst && nvme-tcp.ddgst", "-T", "fields", "-e", "frame.number");
        assertTrue(!digests.isEmpty(), "no PDU with both digests was dissected");
    }

    private static int portOf(Path pcap) throws Exception {
        List<String> ports = tshark("-r", pcap.toString(), "-Y", "tcp.flags.syn==1 && tcp.flags.ack==0", "-T", "fields",
                "-e", "tcp.dstport", "-c", "1");
        assertTrue(!ports.isEmpty(), "no TCP connection in the capture");
        return Integer.parseInt(ports.get(0).trim());
    }

    /** Connect, small (in-capsule) and large (R2T, several H2CData) writes, reads, flush, shutdown. */
    private static void session(TargetProcess t, boolean hd, boolean dd) throws Exception {
        ConnectOptions o = ConnectOptions.defaults().ioQueues(2).headerDigest(hd).dataDigest(dd);
        try (Controller c = Controller.connect(NvmeofUri.parse(t.uri(NQN)), o)) {
            for (BlockDevice dev : c.namespaces()) {
                Random rnd = new Random(hd ? 1 : 2);
                for (int size : new int[] {4096, 8192, 65536, 512 * 1024}) {
                    ByteBuffer out = ByteBuffer.allocateDirect(size);
                    byte[] b = new byte[size];
                    rnd.nextBytes(b);
                    out.put(b).flip();
                    dev.write(size * 2L, out);
                    ByteBuffer in = ByteBuffer.allocateDirect(size);
                    dev.read(size * 2L, in);
                    assertEquals(out.flip(), in.flip());
                }
                dev.flush();
            }
        }
    }

    private static List<String> tshark(String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add("tshark");
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), "tshark " + String.join(" ", args));
        return out.lines().filter(l -> !l.isBlank()).toList();
    }
}
