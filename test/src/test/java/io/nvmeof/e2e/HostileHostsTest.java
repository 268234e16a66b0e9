package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.FileBackend;
import io.nvmeof.target.backend.RamBackend;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A target under load keeps serving a well-behaved host, byte for byte, while other "hosts"
 * send garbage: random bytes, malformed headers, truncated PDUs, huge PLENs. Bounded: 4
 * hostile threads for 6 seconds.
 */
class HostileHostsTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:hostile";

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void garbageFromSomeHostsHarmsNoOther() throws Exception {
        try (Target target = new Target()) {
            Subsystem s = new Subsystem(NQN, "H1", "hostile", "1.0");
            s.addNamespace(new Namespace(NQN, 1, new RamBackend(32 << 20, 4096), false, null));
            s.addNamespace(new Namespace(NQN, 2, FileBackend.open(dir.resolve("d.img"), 32 << 20, 4096, false), false, null));
            target.addSubsystem(s);
            InetSocketAddress a = target.listenTcp(new InetSocketAddress("127.0.0.1", 0));
            long stopAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(6);
            AtomicLong garbageConnections = new AtomicLong();
            List<Thread> hostile = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int seed = t;
                Thread th = new Thread(() -> {
                    Random rnd = new Random(seed);
                    while (System.nanoTime() < stopAt) {
                        try (Socket sock = new Socket()) {
                            sock.connect(a, 2000);
                            sock.setSoTimeout(500);
                            OutputStream out = sock.getOutputStream();
                            out.write(garbage(rnd));
                            out.flush();
                            garbageConnections.incrementAndGet();
                            sock.getInputStream().read(new byte[256]); // a TermReq, or EOF
                        } catch (Exception expected) {
                            // the target hung up on us, as it should
                        }
                    }
                }, "hostile-" + t);
                th.start();
                hostile.add(th);
            }
            long verified = 0;
            try (Controller c = Nvmeof.connect("nvme+tcp://127.0.0.1:" + a.getPort() + "/" + NQN,
                    ConnectOptions.defaults().ioQueues(2))) {
                Random rnd = new Random(99);
                while (System.nanoTime() < stopAt) {
                    for (BlockDevice dev : new BlockDevice[] {c.namespace(1), c.namespace(2)}) {
                        byte[] data = new byte[(1 + rnd.nextInt(32)) * 4096];
                        rnd.nextBytes(data);
                        long off = (long) rnd.nextInt((int) (dev.size() / 4096) - 32) * 4096;
                        dev.write(off, ByteBuffer.wrap(data));
                        ByteBuffer back = ByteBuffer.allocate(data.length);
                        dev.read(off, back);
                        assertEquals(ByteBuffer.wrap(data), back.flip());
                        verified += data.length;
                    }
                }
            }
            for (Thread th : hostile) {
                th.join(10_000);
            }
            assertTrue(garbageConnections.get() > 50, "hostile connections: " + garbageConnections.get());
            assertTrue(verified > 1 << 20, "verified " + verified + " bytes");
        }
    }

    /** One of several kinds of bad input. */
    static byte[] garbage(Random rnd) {
        ByteBuffer b = ByteBuffer.allocate(256).order(ByteOrder.LITTLE_ENDIAN);
        switch (rnd.nextInt(5)) {
            case 0: { // random bytes
                byte[] r = new byte[1 + rnd.nextInt(255)];
                rnd.nextBytes(r);
                return r;
            }
            case 1: // ICReq with a wrong HLEN
                b.put((byte) 0).put((byte) 0).put((byte) 99).put((byte) 0).putInt(128);
                break;
            case 2: // a capsule claiming 1 GiB
                b.put((byte) 0).put((byte) 0).put((byte) 128).put((byte) 0).putInt(128).position(128);
                b.put((byte) 4).put((byte) 0).put((byte) 72).put((byte) 72).putInt(1 << 30);
                break;
            case 3: // a valid ICReq then an H2CData nobody asked for
                b.put((byte) 0).put((byte) 0).put((byte) 128).put((byte) 0).putInt(128).position(128);
                b.put((byte) 6).put((byte) 4).put((byte) 24).put((byte) 24).putInt(24 + 16).putShort((short) 1)
                        .putShort((short) 3).putInt(0).putInt(16).putInt(0).put(new byte[16]);
                break;
            default: // half an ICReq
                b.put((byte) 0).put((byte) 0).put((byte) 128).put((byte) 0).putInt(128).position(60);
        }
        byte[] out = new byte[b.position()];
        b.flip().get(out);
        return out;
    }
}
