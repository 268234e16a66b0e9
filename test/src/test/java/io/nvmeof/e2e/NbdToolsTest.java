package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code nvmeof nbd} as users run it, a process beside a target process, with the NBD world's
 * own tools as clients: libnbd's nbdinfo, nbdcopy and nbdfuse, fio's nbd engine, qemu-img. Each
 * tool's test skips, saying so, where the tool is missing ({@code .ci/run} installs them).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NbdToolsTest {
    static final String NQN = "nqn.2026-12.io.nvmeof:nbd";
    @TempDir
    static Path dir;
    TargetProcess target;
    Process nbd;
    Path socket;
    String uri;
    final StringBuilder nbdOut = new StringBuilder();
    Thread reader;

    @BeforeAll
    void start() throws Exception {
        // 512-byte blocks, as a disk a filesystem is made on through FUSE expects
        target = TargetProcess.start(Fabric.TCP, dir, "--listen", "tcp://127.0.0.1:0", "--subsystem", NQN,
                "--namespace", "file:" + dir.resolve("disk.img") + ",size=256M,bs=512");
        socket = dir.resolve("vol.sock");
        List<String> cmd = new ArrayList<>(TargetProcess.java("nbd", target.uri(NQN), "--socket", socket.toString()));
        nbd = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        BufferedReader r = new BufferedReader(new InputStreamReader(nbd.getInputStream(), StandardCharsets.UTF_8));
        String line = r.readLine();
        assertTrue(line != null && line.startsWith("nbd: serving " + NQN + " namespace 1 (268435456 bytes, 512-byte blocks)"),
                String.valueOf(line));
        nbdOut.append(line).append('\n');
        reader = new Thread(() -> {
            try {
                for (String l; (l = r.readLine()) != null; ) {
                    synchronized (nbdOut) {
                        nbdOut.append(l).append('\n');
                    }
                }
            } catch (IOException e) {
                // ended
            }
        });
        reader.setDaemon(true);
        reader.start();
        uri = "nbd+unix:///?socket=" + socket;
    }

    @AfterAll
    void stop() throws Exception {
        if (nbd != null && nbd.isAlive()) {
            nbd.toHandle().destroy(); // SIGTERM, a clean stop (Process.destroy would close our end of its output too)
            assertTrue(nbd.waitFor(30, TimeUnit.SECONDS));
            reader.join(10_000); // its last lines
            assertEquals(0, nbd.exitValue(), nbdOut.toString());
            assertFalse(Files.exists(socket), "the socket goes with the server");
            assertTrue(nbdOut.toString().contains("nbd: stopped after"), "reader alive " + reader.isAlive() + ": " + nbdOut);
        }
        assertEquals(0, target.stop());
        target.close();
    }

    static boolean have(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            if (Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }

    static void need(String... tools) {
        for (String t : tools) {
            Assumptions.assumeTrue(have(t), "skipped: " + t + " is not installed here (Debian: libnbd-bin, nbdkit, fio,"
                    + " qemu-utils, fuse3)");
        }
    }

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Runs a command; returns its output, failing the test if it fails. */
    static String run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readNBytes(1 << 20);
        assertTrue(p.waitFor(240, TimeUnit.SECONDS), String.join(" ", cmd) + ": still running");
        String s = new String(out, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), String.join(" ", cmd) + ":\n" + s);
        return s;
    }

    @Test
    void nbdinfoSeesTheNamespace() throws Exception {
        need("nbdinfo");
        String info = run("nbdinfo", uri);
        for (String want : List.of("export-size: 268435456", "block_size_minimum: 512", "block_size_preferred: 4096",
                "can_flush: true", "can_fua: true", "can_trim: true", "can_zero: true", "can_multi_conn: true",
                "is_read_only: false", "description: " + NQN + " namespace 1", "using structured packets")) {
            assertTrue(info.contains(want), want + " in:\n" + info);
        }
        assertTrue(run("nbdinfo", "--list", uri).contains("description: " + NQN + " namespace 1"));
    }

    @Test
    void nbdcopyInAndOutAsTheInitiatorSeesIt() throws Exception {
        need("nbdcopy");
        byte[] data = random(256 << 20, 53);
        Path in = Files.write(dir.resolve("in.bin"), data);
        run("nbdcopy", in.toString(), uri);
        Path out = dir.resolve("out.bin");
        run("nbdcopy", uri, out.toString());
        assertEquals(-1, Files.mismatch(in, out), "256 MiB in and out again");
        // and through NVMe/TCP directly, not through NBD
        Path direct = dir.resolve("direct.bin");
        TargetProcess.Run r = TargetProcess.cli(60, "read", target.uri(NQN), "--offset", "200M", "--length", "1M",
                "--output", direct.toString());
        assertEquals(0, r.exit(), r.err());
        assertArrayEquals(Arrays.copyOfRange(data, 200 << 20, 201 << 20), Files.readAllBytes(direct));
        Files.delete(in);
        Files.delete(out);
    }

    @Test
    void fioVerifiesThroughItsNbdEngine() throws Exception {
        need("fio");
        String out = run("fio", "--name=verify", "--ioengine=nbd", "--uri=" + uri, "--rw=randwrite", "--bs=4k",
                "--iodepth=16", "--size=32m", "--offset=64m", "--verify=crc32c", "--verify_fatal=1", "--do_verify=1",
                "--output-format=json");
        assertTrue(out.contains("\"error\" : 0"), out);
        String sub = run("fio", "--name=small", "--ioengine=nbd", "--uri=" + uri, "--rw=randrw", "--bs=512",
                "--iodepth=8", "--size=4m", "--offset=128m", "--verify=crc32c", "--verify_fatal=1", "--do_verify=1",
                "--output-format=json");
        assertTrue(sub.contains("\"error\" : 0"), sub);
    }

    @Test
    void qemuImgConvertsToAndFromTheExport() throws Exception {
        need("qemu-img");
        byte[] data = random(16 << 20, 54);
        Path img = Files.write(dir.resolve("q.raw"), data);
        run("qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", img.toString(), uri);
        Path back = dir.resolve("q.out");
        run("qemu-img", "convert", "-f", "raw", "-O", "raw", uri, back.toString());
        byte[] got = Files.readAllBytes(back);
        assertEquals(256 << 20, got.length);
        assertArrayEquals(data, Arrays.copyOf(got, data.length));
        Files.delete(back);
    }

    @Test
    void anExt4FilesystemThroughNbdfuse() throws Exception {
        need("nbdfuse", "mkfs.ext4", "e2fsck", "fusermount3");
        Assumptions.assumeTrue(Files.exists(Path.of("/dev/fuse")), "skipped: no /dev/fuse here");
        Path mnt = Files.createDirectories(dir.resolve("fuse"));
        Path disk = mnt.resolve("disk");
        Process fuse = new ProcessBuilder("nbdfuse", disk.toString(), uri).redirectErrorStream(true).start();
        try {
            for (int i = 0; i < 100 && !Files.exists(disk); i++) {
                Thread.sleep(100);
            }
            assertTrue(Files.exists(disk), "nbdfuse made " + disk);
            run("mkfs.ext4", "-q", "-F", disk.toString());
            Path fs = Files.createDirectories(dir.resolve("ext4"));
            boolean mounted = false;
            if (new ProcessBuilder("mount", "-o", "loop", disk.toString(), fs.toString()).start().waitFor() == 0) {
                mounted = true;
                try {
                    byte[] file = random(3 << 20, 55);
                    for (int i = 0; i < 8; i++) {
                        Files.write(fs.resolve("f" + i), file);
                    }
                    run("sync");
                    assertArrayEquals(file, Files.readAllBytes(fs.resolve("f7")));
                } finally {
                    run("umount", fs.toString());
                }
            }
            String fsck = run("e2fsck", "-f", "-n", disk.toString());
            assertTrue(fsck.contains("clean") || fsck.contains("files"), fsck);
            Assumptions.assumeTrue(mounted, "made and checked the filesystem; no loop device here to mount it");
        } finally {
            new ProcessBuilder("fusermount3", "-u", mnt.toString()).start().waitFor(30, TimeUnit.SECONDS);
            fuse.waitFor(30, TimeUnit.SECONDS);
            if (fuse.isAlive()) {
                fuse.destroy();
            }
        }
    }
}
