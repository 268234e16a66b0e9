package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Our initiator's multipath as users run it: {@code nvmeof bench --verify} through two gateway
 * processes (one file, direct I/O; A optimized, B non-optimized) while A and then B are
 * SIGKILLed and restarted twice each, A's path is partitioned (a proxy stops carrying its
 * bytes, closing nothing) and healed, and A's group goes inaccessible and back. The bench must
 * finish with no error and every block verified, and its per-path counts show I/O leaving A and
 * coming back.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class MultipathGatewaysTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:gateways";

    static String config(Path file, int port, String state, int cntlidMin) {
        return """
                {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": %d, "subsystems": ["%s"],
                            "ana_groups": [{"grpid": 1, "ana": {"state": "%s"}}]}],
                 "subsystems": [{"nqn": "%s", "serial": "GW0001", "gateways": true,
                   "cntlid_min": %d, "cntlid_max": %d,
                   "namespaces": [{"nsid": 1, "backend": "file", "path": "%s", "size": "64M", "direct_io": true,
                                   "uuid": "5b0d4f9e-2c1a-4e8b-9f3d-7a6c5e4b3a21"}]}]}
                """.formatted(port, NQN, state, NQN, cntlidMin, cntlidMin + 998, file);
    }

    @Test
    void benchVerifyRidesThroughKillsAPartitionAndAnAnaChange(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("volume.img");
        int pa = Ports.free();
        int pb = Ports.free();
        Path ca = Files.writeString(dir.resolve("a.json"), config(file, pa, "optimized", 1));
        Path cb = Files.writeString(dir.resolve("b.json"), config(file, pb, "non-optimized", 1000));
        List<TargetProcess> all = new ArrayList<>();
        OurGateway a = new OurGateway(all, dir, pa, ca, dir.resolve("a.sock"));
        OurGateway b = new OurGateway(all, dir, pb, cb, dir.resolve("b.sock"));
        a.start();
        b.start();
        try {
            rideThrough(a, b, NQN, Duration.ofSeconds(8), Duration.ofMillis(1500), 2);
        } finally {
            for (TargetProcess t : all) {
                t.close();
            }
        }
        for (TargetProcess p : all) {
            p.assertNoLeaks();
        }
    }

    /** One of our gateway processes, started as users start it, with a management socket for its ANA state. */
    private static final class OurGateway implements Gateway {
        private final List<TargetProcess> all;
        private final Path dir;
        private final int port;
        private final Path config;
        private final Path sock;
        private TargetProcess running;

        OurGateway(List<TargetProcess> all, Path dir, int port, Path config, Path sock) {
            this.all = all;
            this.dir = dir;
            this.port = port;
            this.config = config;
            this.sock = sock;
        }

        @Override
        public int port() {
            return port;
        }

        @Override
        public void kill() throws InterruptedException {
            running.process.destroyForcibly().waitFor();
        }

        @Override
        public void start() throws IOException, InterruptedException {
            running = TargetProcess.start(Fabric.TCP, dir, "--config", config.toString(), "--rpc-socket", sock.toString());
            all.add(running);
        }

        @Override
        public void ana(String state) throws IOException, InterruptedException {
            assertEquals(0, TargetProcess.cli(60, "ana", "set", "--socket", sock.toString(), "--port", "1", "--group", "1",
                    state).exit());
        }
    }

    /** One side of a two-gateway volume, as the failover scenario drives it. */
    interface Gateway {
        /** The port it listens on. */
        int port();

        /** SIGKILL: no goodbye on any connection. */
        void kill() throws IOException, InterruptedException;

        /** Starts it again, serving the volume as before; returns when it listens. */
        void start() throws IOException, InterruptedException;

        /** Sets the ANA state of the volume's group on this gateway's port. */
        void ana(String state) throws IOException, InterruptedException;
    }

    /**
     * The failover scenario: {@code nvmeof bench --verify} (randwrite, 4 KiB, QD8, CRC32C) through
     * A (behind a proxy that can partition it) and B; {@code rounds} rounds of killing and restarting A and
     * then B; a 9 s partition of A's path; A's group inaccessible and optimized again. The bench must
     * end without error with every block verified, its per-path counts must show I/O leaving A and
     * B serving, and A's path must end live and optimized. {@code start} is how long a gateway's
     * start may take; {@code settle} is how long each restarted gateway runs before the next event.
     */
    static void rideThrough(Gateway a, Gateway b, String nqn, Duration start, Duration settle, int rounds) throws Exception {
        try (Proxy proxy = new Proxy(a.port())) {
            String uri = "nvme+tcp://127.0.0.1:" + proxy.port() + ",127.0.0.1:" + b.port() + "/" + nqn;
            // the events take 3 s, 2 x rounds x (1 s + a start + settle), 9 + 4 + 2 s and two ANA calls: the bench
            // outlasts them with each start taking up to {@code start} (a busy machine's JVM start)
            long runtime = 50 + 2L * rounds * (1000 + start.toMillis() + settle.toMillis()) / 1000;
            CompletableFuture<TargetProcess.Run> bench = CompletableFuture.supplyAsync(() -> {
                try {
                    return TargetProcess.cli(runtime + 170, "bench", "--rw", "randwrite", "--bs", "4k", "--iodepth", "8",
                            "--runtime", Long.toString(runtime), "--size", "16M", "--verify", "crc32c",
                            "--reconnect-delay", "1", "--connect-timeout", "2", uri);
                } catch (IOException | InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            long t0 = System.nanoTime();
            Thread.sleep(3000);
            for (int round = 0; round < rounds; round++) {
                for (Gateway g : List.of(a, b)) {
                    g.kill();
                    Thread.sleep(1000);
                    g.start();
                    System.out.printf("%.1f s: round %d, %s restarted%n", (System.nanoTime() - t0) / 1e9, round + 1,
                            g == a ? "A" : "B");
                    Thread.sleep(settle.toMillis());
                }
            }
            proxy.cut(true);      // a partition: nothing closes, nothing arrives (the keep-alive notices)
            Thread.sleep(9000);
            proxy.cut(false);
            Thread.sleep(4000);
            a.ana("inaccessible");
            Thread.sleep(2000);
            a.ana("optimized");
            System.out.printf("%.1f s: A optimized again%n", (System.nanoTime() - t0) / 1e9);
            if (bench.isDone()) {
                TargetProcess.Run early = bench.join();
                fail("the bench ended before the last event (every event must happen while it runs): exit "
                        + early.exit() + "\n" + early.out() + early.err());
            }
            TargetProcess.Run r = bench.get(runtime + 180, TimeUnit.SECONDS);
            System.out.printf("%.1f s: the bench ended%n", (System.nanoTime() - t0) / 1e9);
            System.out.println(r.out());
            assertEquals(0, r.exit(), r.out() + r.err());
            assertTrue(r.out().contains(", 0 bad"), r.out());
            Matcher p0 = Pattern.compile("path0 .* ios=(\\d+) failovers=(\\d+)").matcher(r.out());
            Matcher p1 = Pattern.compile("path1 .* ios=(\\d+) failovers=(\\d+)").matcher(r.out());
            assertTrue(p0.find() && p1.find(), r.out());
            assertTrue(Long.parseLong(p0.group(2)) > 0, "I/O failed over from A: " + r.out());
            assertTrue(Long.parseLong(p1.group(1)) > 0, "B served: " + r.out());
            assertTrue(r.out().contains("path0 tcp traddr=127.0.0.1,trsvcid=" + proxy.port() + " live optimized"), r.out());
        }
    }

    /**
     * A TCP relay to a gateway whose traffic can be cut: while cut it carries no byte either way
     * and connects new connections to nothing, but closes nothing (a partition, not a failure).
     */
    static final class Proxy implements AutoCloseable {
        private final ServerSocket server;
        private final int target;
        private boolean cut; // guarded by this
        private final List<Socket> sockets = new ArrayList<>();

        Proxy(int target) throws IOException {
            this.target = target;
            this.server = new ServerSocket();
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            Thread t = new Thread(this::accept, "proxy-accept");
            t.setDaemon(true);
            t.start();
        }

        int port() {
            return server.getLocalPort();
        }

        synchronized void cut(boolean on) {
            cut = on;
            notifyAll();
        }

        /** Returns once the path is not cut. */
        private synchronized void healed() throws InterruptedException {
            while (cut) {
                wait();
            }
        }

        private void accept() {
            while (!server.isClosed()) {
                try {
                    Socket in = server.accept();
                    synchronized (sockets) {
                        sockets.add(in);
                    }
                    Thread t = new Thread(() -> relay(in), "proxy-conn");
                    t.setDaemon(true);
                    t.start();
                } catch (IOException e) {
                    return;
                }
            }
        }

        private void relay(Socket in) {
            try {
                healed(); // a connection made during a partition reaches nothing until it heals
                Socket out = new Socket("127.0.0.1", target);
                in.setTcpNoDelay(true); // a relay adds no Nagle delay of its own
                out.setTcpNoDelay(true);
                synchronized (sockets) {
                    sockets.add(out);
                }
                Thread up = pump(in, out);
                Thread down = pump(out, in);
                up.join();
                down.join();
            } catch (IOException | InterruptedException e) {
                close(in);
            }
        }

        private Thread pump(Socket from, Socket to) {
            Thread t = new Thread(() -> {
                byte[] buf = new byte[65536];
                try (InputStream i = from.getInputStream(); OutputStream o = to.getOutputStream()) {
                    int n;
                    while ((n = i.read(buf)) >= 0) {
                        healed(); // held, not dropped: TCP would deliver it after the partition
                        o.write(buf, 0, n);
                    }
                } catch (IOException | InterruptedException e) {
                    // one side ended
                } finally {
                    close(from);
                    close(to);
                }
            }, "proxy-pump");
            t.setDaemon(true);
            t.start();
            return t;
        }

        private static void close(Socket s) {
            try {
                s.close();
            } catch (IOException e) {
                // closing
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
            synchronized (sockets) {
                sockets.forEach(Proxy::close);
            }
        }
    }
}
