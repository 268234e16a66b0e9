package io.nvmeof.tools.harness;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A TCP proxy on loopback that injects faults between a host and a target: what a bad network
 * does to a TCP stream, seen from the ends (bench/faults.sh):
 * {@code java -cp cli/build/nvmeof.jar io.nvmeof.tools.harness.FaultProxy LISTEN_PORT TARGET_PORT FAULT...},
 * where each FAULT is
 * <ul>
 *   <li>{@code delay=MS,JITTER}: every piece of data waits MS +- JITTER milliseconds (order kept);
 *   <li>{@code loss=P,MS}: with probability P a piece waits MS more, as a retransmission after a
 *       lost segment does (TCP hides the loss itself);
 *   <li>{@code split=N}: data goes on in pieces of 1 to N bytes, each its own write;
 *   <li>{@code reset=S}: every S seconds one connection, at random, is reset (RST);
 *   <li>{@code down=AT,FOR}: at AT seconds the link goes down for FOR seconds: nothing moves
 *       either way and new connections are refused, then what waited goes on.
 * </ul>
 * Prints one line per fault it injects (resets, the link going down and up).
 */
public final class FaultProxy {
    static long delayMs;
    static long jitterMs;
    static double lossP;
    static long lossMs;
    static int split;
    static long resetEverySec;
    static long downAtSec = -1;
    static long downForSec;
    static volatile long downUntil;
    static final long START = System.nanoTime();
    static final List<Socket> CLIENTS = new CopyOnWriteArrayList<>();

    public static void main(String[] args) throws Exception {
        Usage.check(args, 2, "usage: FaultProxy LISTEN_PORT TARGET_PORT [FAULT...]\n  a proxy on loopback; FAULT:"
                + " none, delay=MS,JITTER, loss=P,MS, split=N, reset=S, down=AT,FOR");
        int listen = Integer.parseInt(args[0]);
        int target = Integer.parseInt(args[1]);
        for (String f : Arrays.copyOfRange(args, 2, args.length)) {
            String[] kv = f.split("=", 2);
            String[] v = kv.length > 1 ? kv[1].split(",") : new String[0];
            switch (kv[0]) {
                case "delay" -> { delayMs = Long.parseLong(v[0]); jitterMs = v.length > 1 ? Long.parseLong(v[1]) : 0; }
                case "loss" -> { lossP = Double.parseDouble(v[0]); lossMs = Long.parseLong(v[1]); }
                case "split" -> split = Integer.parseInt(v[0]);
                case "reset" -> resetEverySec = Long.parseLong(v[0]);
                case "down" -> { downAtSec = Long.parseLong(v[0]); downForSec = Long.parseLong(v[1]); }
                case "none" -> { }
                default -> throw new IllegalArgumentException("unknown fault " + f);
            }
        }
        if (resetEverySec > 0 || downAtSec >= 0) {
            Thread t = new Thread(FaultProxy::schedule, "faults");
            t.setDaemon(true);
            t.start();
        }
        try (ServerSocket server = new ServerSocket(listen, 512, InetAddress.getLoopbackAddress())) {
            System.out.println("proxy 127.0.0.1:" + listen + " -> 127.0.0.1:" + target + " " + String.join(" ",
                    Arrays.copyOfRange(args, 2, args.length)));
            while (true) {
                Socket client = server.accept();
                if (System.nanoTime() < downUntil) {
                    client.setSoLinger(true, 0);
                    client.close(); // the link is down: nothing gets through
                    continue;
                }
                Socket upstream = new Socket();
                try {
                    upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), target), 5000);
                } catch (IOException e) {
                    client.close();
                    continue;
                }
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                CLIENTS.add(client);
                pipe(client, upstream);
                pipe(upstream, client);
            }
        }
    }

    private static void schedule() {
        long lastReset = System.nanoTime();
        boolean wasDown = false;
        while (true) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            long t = (now - START) / 1_000_000_000L;
            if (downAtSec >= 0 && t >= downAtSec && !wasDown) {
                wasDown = true;
                downUntil = now + downForSec * 1_000_000_000L;
                System.out.println("t=" + t + "s link down for " + downForSec + " s");
            }
            if (resetEverySec > 0 && now - lastReset >= resetEverySec * 1_000_000_000L && !CLIENTS.isEmpty()) {
                lastReset = now;
                Socket victim = CLIENTS.get(ThreadLocalRandom.current().nextInt(CLIENTS.size()));
                System.out.println("t=" + t + "s reset " + victim.getRemoteSocketAddress());
                reset(victim);
            }
        }
    }

    private static void reset(Socket s) {
        CLIENTS.remove(s);
        try {
            s.setSoLinger(true, 0);
            s.close();
        } catch (IOException ignored) {
            // gone already
        }
    }

    /** A piece of data and when it may go on. */
    record Piece(byte[] data, long due) {
    }

    private static final Piece END = new Piece(new byte[0], 0);

    /** Copies {@code from} to {@code to} through a queue of pieces, each held as the faults say. */
    private static void pipe(Socket from, Socket to) {
        LinkedBlockingQueue<Piece> queue = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            byte[] buf = new byte[65536];
            long lastDue = 0;
            try (InputStream in = from.getInputStream()) {
                int n;
                while ((n = in.read(buf)) > 0) {
                    ThreadLocalRandom r = ThreadLocalRandom.current();
                    long wait = delayMs + (jitterMs > 0 ? r.nextLong(-jitterMs, jitterMs + 1) : 0);
                    if (lossP > 0 && r.nextDouble() < lossP) {
                        wait += lossMs;
                    }
                    long due = Math.max(lastDue, System.nanoTime() + Math.max(0, wait) * 1_000_000L);
                    lastDue = due;
                    queue.put(new Piece(Arrays.copyOf(buf, n), due));
                }
            } catch (IOException | InterruptedException e) {
                // the connection ended or was reset
            }
            queue.add(END);
        }, "proxy-read");
        Thread writer = new Thread(() -> {
            try (OutputStream out = to.getOutputStream()) {
                while (true) {
                    Piece p = queue.take();
                    if (p == END) {
                        break;
                    }
                    long now;
                    while ((now = System.nanoTime()) < Math.max(p.due(), downUntil)) {
                        Thread.sleep(Math.max(1, (Math.max(p.due(), downUntil) - now) / 1_000_000L));
                    }
                    if (split > 0) {
                        int at = 0;
                        while (at < p.data().length) {
                            int len = Math.min(p.data().length - at, 1 + ThreadLocalRandom.current().nextInt(split));
                            out.write(p.data(), at, len);
                            out.flush();
                            at += len;
                        }
                    } else {
                        out.write(p.data());
                        out.flush();
                    }
                }
            } catch (IOException | InterruptedException e) {
                // the other side ended or was reset
            }
            reset(from); // one direction ended: end the other, as a broken path would
            reset(to);
        }, "proxy-write");
        reader.setDaemon(true);
        writer.setDaemon(true);
        reader.start();
        writer.start();
    }
}
