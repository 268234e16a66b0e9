package io.nvmeof.fabric.rdma;

import com.sun.management.ThreadMXBean;
import io.netty.channel.EventLoopGroup;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.fabric.rdma.verbs.VerbsProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The provider conformance suite ({@link RdmaProviderConformance}) against a provider on real
 * verbs, inside a guest with soft-RoCE ({@code test/kernel/guest-rdma-conformance.sh}):
 * {@code java -cp ... ProviderConformanceMain PROVIDER ADDR [PORT [busy-poll]]}. Private data both ways
 * and a reject with private data (not for {@code disni}, which cannot carry them on the
 * accepting side), SEND/RECV, chained WRITE + SEND, READ, 1000 round trips, every access
 * violation, use after close, and for {@code verbs} native blocks returned; then what the data
 * path allocates over 800 SEND/RECV round trips; then, for {@code verbs}, that no native block
 * is left once the provider closed. Prints "CONFORMANCE OK: PROVIDER" and exits 0, or exits 1
 * naming the failed check. {@code busy-poll} runs it with busy polling ({@link RdmaTuning#busyPoll}).
 */
public final class ProviderConformanceMain {
    private static final int WAIT_S = 30;
    private static final int ROUND_TRIPS = 1000;
    private static final int RECVS = 8;
    private static final int SLOT = 256;

    /** A completion as the handler saw it. */
    record Wc(long wrId, int opcode, int status, int byteLength, long invalidatedRkey) {
    }

    /** Handles completions in-line on the loop, allocating nothing; true when it took the completion. */
    interface Hook {
        boolean on(long wrId, int opcode, int byteLength);
    }

    /** One side's handler: completions queue up unless a hook takes them; the end is a future. */
    static final class Side implements RdmaHandler {
        final String name;
        final BlockingQueue<Wc> completions = new LinkedBlockingQueue<>();
        final CompletableFuture<Optional<Throwable>> ended = new CompletableFuture<>();
        final AtomicInteger afterEnd = new AtomicInteger();
        volatile Hook hook;

        Side(String name) {
            this.name = name;
        }

        @Override
        public void onCompletion(long wrId, int opcode, int status, int byteLength, long invalidatedRkey) {
            if (ended.isDone()) {
                afterEnd.incrementAndGet();
            }
            Hook h = hook;
            if (h == null || status != WorkCompletion.SUCCESS || !h.on(wrId, opcode, byteLength)) {
                completions.add(new Wc(wrId, opcode, status, byteLength, invalidatedRkey));
            }
        }

        @Override
        public void onDisconnected(Throwable cause) {
            if (!ended.complete(Optional.ofNullable(cause))) {
                afterEnd.incrementAndGet();     // a second call
            }
        }
    }

    /** What the acceptor did with one request. */
    record Accepted(RdmaConnection conn, Side side, byte[] requestData, int requestInitiatorDepth) {
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    private static void log(String s) {
        System.out.println("[conformance] " + s);
        System.out.flush();
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    public static void main(String[] args) throws Exception {
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(300_000);
                System.out.println("[conformance] FAILED: watchdog after 300 s");
                Runtime.getRuntime().halt(3);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        int rc = 0;
        try {
            run(args[0], InetAddress.getByName(args.length > 1 ? args[1] : "127.0.0.1"),
                    args.length > 2 ? Integer.parseInt(args[2]) : 4420,
                    args.length > 3 && args[3].equals("busy-poll"));
            System.out.println("CONFORMANCE OK: " + args[0]);
        } catch (Throwable t) {
            System.out.println("[conformance] FAILED: " + t);
            t.printStackTrace(System.out);
            rc = 1;
        }
        System.out.flush();
        Runtime.getRuntime().halt(rc);
    }

    private static void run(String name, InetAddress addr, int port, boolean busyPoll) throws Exception {
        EventLoopGroup group = EventLoops.newGroup(2, "conformance");
        long t0 = System.nanoTime();
        RdmaProvider provider = RdmaProviders.open(name, group,
                new RdmaTuning(busyPoll, RdmaTuning.DEFAULTS.disniCqSize(), RdmaTuning.DEFAULTS.disniInitiatorDepth()));
        boolean verbs = provider instanceof VerbsProvider;
        log("opened " + provider + " in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        // (on real verbs the responder of a bad one-sided access hears only the requester's disconnect)
        RdmaProviderConformance conformance = new RdmaProviderConformance(provider, new InetSocketAddress(addr, 0), false);
        if (!"disni".equals(name)) {
            conformance.privateDataBothWays();
            log("conformance: private data both ways ok");
            conformance.rejectCarriesPrivateData();
            log("conformance: reject with private data ok");
        }
        conformance.dataMovement();
        log("conformance: SEND/RECV, WRITE + SEND, READ, 1000 round trips ok");
        for (RdmaProviderConformance.Violation v : RdmaProviderConformance.violations()) {
            conformance.accessViolation(v);
            log("conformance: " + v + " ended both sides, memory untouched");
        }
        conformance.useAfterCloseThrows();
        log("conformance: posts after close and of deregistered regions throw");
        if (verbs) {
            conformance.nativeMemoryReturns(VerbsProvider::liveNativeBlocks);
            log("conformance: native blocks of a closed connection returned (" + VerbsProvider.liveNativeBlocks() + " live)");
        }

        byte[] connectData = pattern(32, 1);
        byte[] acceptData = pattern(32, 77);
        BlockingQueue<Object> accepted = new LinkedBlockingQueue<>();
        AtomicReference<MemoryRegion> srvRecvRef = new AtomicReference<>();
        RdmaListener listener = provider.listen(new InetSocketAddress(addr, port), (ConnectRequest req) -> {
            try {
                Side side = new Side("server");
                // the receive ring goes up on the connection's loop before the accept leaves
                RdmaConnection c = req.accept(ByteBuffer.wrap(acceptData), 32, RECVS, req.initiatorDepth(), side, conn -> {
                    try {
                        MemoryRegion mr = conn.pd().register(ByteBuffer.allocateDirect(RECVS * SLOT), MemoryRegion.LOCAL_WRITE);
                        srvRecvRef.set(mr);
                        for (int i = 0; i < RECVS; i++) {
                            conn.postRecv(100 + i, mr, i * SLOT, SLOT);
                        }
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
                accepted.add(new Accepted(c, side, null, req.initiatorDepth()));
            } catch (Throwable t) {
                accepted.add(t);
            }
        });
        InetSocketAddress target = new InetSocketAddress(addr, listener.localAddress().getPort());
        Side client = new Side("client");
        RdmaConnection cli = provider.connect(target, new ConnectParams(ByteBuffer.wrap(connectData), 32, RECVS, 4, 4, 10_000),
                client).get(WAIT_S, TimeUnit.SECONDS);
        Object a = accepted.poll(WAIT_S, TimeUnit.SECONDS);
        if (a instanceof Throwable t) {
            throw new AssertionError("accept failed", t);
        }
        check(a instanceof Accepted, "acceptor: " + a);
        Accepted acc = (Accepted) a;
        RdmaConnection srv = acc.conn();
        Side server = acc.side();
        MemoryRegion srvRecv = srvRecvRef.get();
        MemoryRegion cliRecv = cli.pd().register(ByteBuffer.allocateDirect(RECVS * SLOT), MemoryRegion.LOCAL_WRITE);
        MemoryRegion cliSend = cli.pd().register(ByteBuffer.allocateDirect(SLOT), 0);
        MemoryRegion srvSend = srv.pd().register(ByteBuffer.allocateDirect(SLOT), 0);
        cli.eventLoop().submit(() -> {
            for (int i = 0; i < RECVS; i++) {
                cli.postRecv(200 + i, cliRecv, i * SLOT, SLOT);
            }
        }).get(WAIT_S, TimeUnit.SECONDS);

        // ---- 1000 SEND/RECV round trips, receives reposted every time; the last 800 measured for allocation
        AtomicReference<String> trouble = new AtomicReference<>();
        AtomicInteger next = new AtomicInteger();
        AtomicInteger goal = new AtomicInteger();
        AtomicReference<CountDownLatch> done = new AtomicReference<>();
        server.hook = (wrId, opcode, byteLength) -> {
            if (opcode == WorkCompletion.RECV) {
                int slot = (int) (wrId - 100);
                int v = srvRecv.buffer().getInt(slot * SLOT);
                srv.postRecv(wrId, srvRecv, slot * SLOT, SLOT);
                srvSend.buffer().putInt(0, v);
                srv.postSend(5, srvSend, 0, 4, RdmaConnection.NO_INVALIDATE);
            }
            return true;
        };
        client.hook = (wrId, opcode, byteLength) -> {
            if (opcode == WorkCompletion.RECV) {
                int slot = (int) (wrId - 200);
                int v = cliRecv.buffer().getInt(slot * SLOT);
                cli.postRecv(wrId, cliRecv, slot * SLOT, SLOT);
                if (v != next.get()) {
                    trouble.compareAndSet(null, "round trip " + next.get() + " came back as " + v);
                    done.get().countDown();
                } else if (next.incrementAndGet() == goal.get()) {
                    done.get().countDown();
                } else {
                    cliSend.buffer().putInt(0, next.get());
                    cli.postSend(6, cliSend, 0, 4, RdmaConnection.NO_INVALIDATE);
                }
            }
            return true;
        };
        long[] threads = dataPathThreads(cli, srv);
        ThreadMXBean mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        long[] a0 = null;
        long rt0 = 0;
        for (int batch : new int[] {200, ROUND_TRIPS}) {
            if (a0 == null && batch == ROUND_TRIPS) {
                Thread.sleep(50);
                a0 = mx.getThreadAllocatedBytes(threads);
                rt0 = System.nanoTime();
            }
            CountDownLatch latch = new CountDownLatch(1);
            done.set(latch);
            goal.set(batch);
            cli.eventLoop().execute(() -> {
                cliSend.buffer().putInt(0, next.get());
                cli.postSend(6, cliSend, 0, 4, RdmaConnection.NO_INVALIDATE);
            });
            check(latch.await(120, TimeUnit.SECONDS), "round trips stuck at " + next.get());
            check(trouble.get() == null, String.valueOf(trouble.get()));
        }
        long us = (System.nanoTime() - rt0) / 1000 / (ROUND_TRIPS - 200);
        Thread.sleep(50);
        long[] a1 = mx.getThreadAllocatedBytes(threads);
        StringBuilder alloc = new StringBuilder();
        for (int i = 0; i < threads.length; i++) {
            alloc.append(i == 0 ? "" : ", ").append(threadName(threads[i])).append(' ')
                    .append(a1[i] - a0[i]).append(" B");
        }
        log(ROUND_TRIPS + " SEND/RECV round trips ok (" + us + " us each); allocated during the last "
                + (ROUND_TRIPS - 200) + ": " + alloc);
        Thread.sleep(100);
        server.hook = null;
        client.hook = null;
        server.completions.clear();
        client.completions.clear();

        cli.close();
        check(client.ended.get(WAIT_S, TimeUnit.SECONDS).isEmpty(), "orderly close: no cause");
        Optional<Throwable> peerEnd = server.ended.get(WAIT_S, TimeUnit.SECONDS);
        check(peerEnd.isEmpty(), "the peer saw an orderly disconnect, not " + peerEnd);
        check(client.afterEnd.get() == 0 && server.afterEnd.get() == 0, "nothing after onDisconnected, which came once");
        for (MemoryRegion mr : new MemoryRegion[] {cliRecv, cliSend, srvSend, srvRecv}) {
            mr.pd().deregister(mr);
        }
        listener.close();
        long c0 = System.nanoTime();
        provider.close();
        log("provider closed in " + (System.nanoTime() - c0) / 1_000_000 + " ms");
        if (verbs) {
            check(VerbsProvider.liveNativeBlocks() == 0, "native blocks left after the provider closed: "
                    + VerbsProvider.liveNativeBlocks());
            log("no native block left after the provider closed");
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }

    /** The event loops of both connections and the completion channel threads. */
    private static long[] dataPathThreads(RdmaConnection... conns) throws Exception {
        Set<Long> ids = new TreeSet<>();
        for (RdmaConnection c : conns) {
            ids.add(c.eventLoop().submit(() -> Thread.currentThread().getId()).get());
        }
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("verbs-cq") || t.getName().startsWith("disni")) {
                ids.add(t.getId());
            }
        }
        return ids.stream().mapToLong(Long::longValue).toArray();
    }

    private static String threadName(long id) {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getId() == id) {
                return t.getName();
            }
        }
        return "thread " + id;
    }

    private ProviderConformanceMain() {
    }
}
