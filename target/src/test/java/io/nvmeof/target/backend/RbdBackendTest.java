package io.nvmeof.target.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * An RBD image as a backend, against a real one-node Ceph cluster: what it writes is what
 * Ceph's own {@code rbd export} reads and the other way round, Write Zeroes and deallocate,
 * resize both ways and a resize by {@code rbd resize}, the image-derived identity, and the
 * errors for a missing image and an unreachable cluster.
 */
class RbdBackendTest {
    @org.junit.jupiter.api.extension.RegisterExtension
    static final CephCluster.PerClass CEPH = new CephCluster.PerClass();

    private static ByteBuffer pattern(int len, int seed) {
        ByteBuffer b = ByteBuffer.allocateDirect(len);
        for (int i = 0; i < len; i++) {
            b.put((byte) (i * 31 + seed));
        }
        return b.flip();
    }

    private static String spec(String image) {
        return "rbd:rbd/" + image + ",conf=" + CEPH.get().conf();
    }

    @Test
    void whatItWritesRbdExportReadsAndWhatRbdImportWroteItReads() throws Exception {
        CEPH.get().rbd("create", "--size", "16M", "rbd/a");
        byte[] expected = new byte[16 << 20];
        try (Backend b = BackendSpec.open(spec("a"))) {
            assertEquals(16 << 20, b.size());
            assertEquals(512, b.blockSize(), "512-byte blocks unless asked, as SPDK's bdev_rbd");
            for (int i = 0; i < 8; i++) {
                ByteBuffer p = pattern(64 << 10, i);
                long at = i * (2L << 20) + 4096;
                p.duplicate().get(expected, (int) at, p.remaining());
                b.write(at, p);
            }
            b.flush();
        }
        Path out = CEPH.dir().resolve("a.export");
        CEPH.get().rbd("export", "rbd/a", out.toString());
        assertArrayEquals(expected, Files.readAllBytes(out), "rbd export reads what the backend wrote");

        byte[] imported = new byte[4 << 20];
        new java.util.Random(7).nextBytes(imported);
        Path in = CEPH.dir().resolve("b.import");
        Files.write(in, imported);
        CEPH.get().rbd("import", in.toString(), "rbd/b");
        try (Backend b = BackendSpec.open(spec("b") + ",bs=4096")) {
            assertEquals(4096, b.blockSize());
            ByteBuffer back = ByteBuffer.allocateDirect(imported.length);
            b.read(0, back);
            byte[] got = new byte[imported.length];
            back.flip().get(got);
            assertArrayEquals(imported, got, "the backend reads what rbd import wrote");
        }
    }

    @Test
    void zeroesDeallocateAndResizeBothWays() throws Exception {
        CEPH.get().rbd("create", "--size", "8M", "rbd/c");
        try (Backend b = BackendSpec.open(spec("c"))) {
            b.write(0, pattern(1 << 20, 5));
            b.writeZeroes(4096, 8192);
            ByteBuffer back = ByteBuffer.allocateDirect(16384);
            b.read(0, back);
            back.flip();
            for (int i = 4096; i < 4096 + 8192; i++) {
                assertEquals(0, back.get(i), "zeroed at " + i);
            }
            assertEquals(pattern(1 << 20, 5).get(100), back.get(100), "before the range kept");
            b.deallocate(0, 4 << 20); // whole objects: they read as zeroes
            back.clear();
            b.read(0, back);
            assertEquals(ByteBuffer.allocateDirect(16384), back.flip());

            b.resize(16 << 20);
            assertEquals(16 << 20, b.size());
            assertTrue(CEPH.get().rbd("info", "rbd/c").contains("16 MiB"), CEPH.get().rbd("info", "rbd/c"));
            b.resize(4 << 20);
            assertEquals(4 << 20, b.storageSize());
            CEPH.get().rbd("resize", "--size", "32M", "rbd/c");
            assertEquals(32 << 20, b.storageSize(), "a resize by rbd is seen");
        }
    }

    @Test
    void theIdentityComesFromTheImage() throws Exception {
        CEPH.get().rbd("create", "--size", "4M", "rbd/d");
        CEPH.get().rbd("create", "--size", "4M", "rbd/e");
        try (Backend one = BackendSpec.open(spec("d")); Backend two = BackendSpec.open(spec("d"));
             Backend other = BackendSpec.open(spec("e"))) {
            assertEquals(one.identity(), two.identity(), "two openers of one image: one identity");
            assertNotEquals(one.identity(), other.identity());
        }
    }

    @Test
    void aMissingImageAndAnUnreachableClusterAreNamed() throws Exception {
        IOException e = assertThrows(IOException.class, () -> BackendSpec.open(spec("nonesuch")));
        assertTrue(e.getMessage().contains("rbd:rbd/nonesuch") && e.getMessage().contains("No such file"), e.getMessage());
        Path dead = CEPH.dir().resolve("dead.conf");
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Files.writeString(dead, Files.readString(CEPH.get().conf()).replaceAll("v2:127\\.0\\.0\\.1:[0-9]+", "v2:127.0.0.1:" + port));
        long connect = RbdCluster.connectTimeoutMs;
        long op = RbdCluster.opTimeoutMs;
        RbdCluster.timeouts(3000, 3000);
        try {
            long start = System.nanoTime();
            IOException down = assertThrows(IOException.class, () -> BackendSpec.open("rbd:rbd/d,conf=" + dead));
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(down.getMessage().contains(dead.toString()) && down.getMessage().contains("cannot connect"),
                    down.getMessage());
            assertTrue(ms < 30_000, "gave up after " + ms + " ms, not within the connect timeout");
        } finally {
            RbdCluster.timeouts(connect, op);
        }
    }
}
