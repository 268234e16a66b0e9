package io.nvmeof.fabric.rdma.verbs;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.fabric.rdma.ConnectParams;
import io.nvmeof.fabric.rdma.ConnectRequest;
import io.nvmeof.fabric.rdma.MemoryRegion;
import io.nvmeof.fabric.rdma.ProtectionDomain;
import io.nvmeof.fabric.rdma.RdmaConnection;
import io.nvmeof.fabric.rdma.RdmaHandler;
import io.nvmeof.fabric.rdma.RdmaListener;
import io.nvmeof.fabric.rdma.RdmaProvider;
import io.nvmeof.fabric.rdma.RdmaRejectedException;
import io.nvmeof.fabric.rdma.WorkCompletion;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The verbs provider against real verbs: run inside a guest with soft-RoCE
 * ({@code test/kernel/guest-verbs-selftest.sh}), {@code java -cp ... VerbsSelfTest ADDR [PORT]}.
 * One process listens on ADDR and connects to itself through rxe0: private data on connect,
 * accept and reject; SEND/RECV both ways; RDMA WRITE chained with a SEND; RDMA READ; 1000
 * round trips; a READ with a wrong rkey that must end both sides and leave memory alone.
 * Prints "VERBS SELFTEST OK" and exits 0, or exits 1 naming the failed check.
 */
public final class VerbsSelfTest {
    private static final int WAIT_S = 30;
    private static final int ROUND_TRIPS = 1000;
    private static final int RECVS = 8;
    private static final int SLOT = 256;
    private static final byte[] REJECT_DATA = {(byte) 0xde, (byte) 0xad, (byte) 0xbe, (byte) 0xef};

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

        Wc take(String what) throws InterruptedException {
            Wc wc = completions.poll(WAIT_S, TimeUnit.SECONDS);
            check(wc != null, name + ": no completion for " + what + " within " + WAIT_S + " s");
            check(wc.status() == WorkCompletion.SUCCESS, name + ": " + what + " completed with "
                    + WorkCompletion.statusName(wc.status()));
            return wc;
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
        System.out.println("[selftest] " + s);
        System.out.flush();
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
    }

    /** {@code got} starts with {@code want} and is zero after it (IB CM pads private data). */
    private static void checkPrivateData(String what, ByteBuffer got, byte[] want) {
        check(got != null, what + ": no private data");
        check(got.order() == ByteOrder.LITTLE_ENDIAN, what + ": not little-endian");
        byte[] g = bytes(got);
        check(g.length >= want.length, what + ": " + g.length + " bytes, wanted at least " + want.length);
        for (int i = 0; i < g.length; i++) {
            int w = i < want.length ? want[i] : 0;
            check(g[i] == w, what + ": byte " + i + " is " + g[i] + ", wanted " + w);
        }
        log(what + ": " + want.length + " bytes as sent (" + g.length + " reported; the rest zero)");
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
                System.out.println("[selftest] FAILED: watchdog after 300 s");
                Runtime.getRuntime().halt(3);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        int rc = 0;
        try {
            run(InetAddress.getByName(args.length > 0 ? args[0] : "127.0.0.1"), args.length > 1 ? Integer.parseInt(args[1]) : 4420);
            System.out.println("VERBS SELFTEST OK");
        } catch (Throwable t) {
            System.out.println("[selftest] FAILED: " + t);
            t.printStackTrace(System.out);
            rc = 1;
        }
        System.out.flush();
        Runtime.getRuntime().halt(rc);
    }

    private static void run(InetAddress addr, int port) throws Exception {
        EventLoopGroup group = EventLoops.newGroup(2, "selftest");
        long t0 = System.nanoTime();
        RdmaProvider provider = VerbsProvider.open(group);
        log("opened " + provider + " in " + (System.nanoTime() - t0) / 1_000_000 + " ms");

        byte[] connectData = pattern(32, 1);
        byte[] acceptData = pattern(32, 77);
        BlockingQueue<Object> accepted = new LinkedBlockingQueue<>();
        AtomicReference<MemoryRegion> srvRecvRef = new AtomicReference<>();

        RdmaListener listener = provider.listen(new InetSocketAddress(addr, port), (ConnectRequest req) -> {
            try {
                byte[] data = req.privateData() == null ? null : bytes(req.privateData());
                if (data != null && data.length > 0 && data[0] == 'R') {
                    req.reject(ByteBuffer.wrap(REJECT_DATA));
                    accepted.add("rejected");
                    return;
                }
                Side side = new Side("server");
                RdmaConnection c = req.accept(ByteBuffer.wrap(acceptData), 32, RECVS, req.initiatorDepth(), side);
                // as the NVMe target does: post the receives in accept's caller, right after accept returns
                MemoryRegion mr = c.pd().register(ByteBuffer.allocateDirect(RECVS * SLOT), MemoryRegion.LOCAL_WRITE);
                srvRecvRef.set(mr);
                for (int i = 0; i < RECVS; i++) {
                    c.postRecv(100 + i, mr, i * SLOT, SLOT);
                }
                accepted.add(new Accepted(c, side, data, req.initiatorDepth()));
            } catch (Throwable t) {
                accepted.add(t);
            }
        });
        log("listening on " + listener.localAddress());
        InetSocketAddress target = new InetSocketAddress(addr, listener.localAddress().getPort());

        // ---- connect with 32 bytes of private data; accept with 32
        Side client = new Side("client");
        ConnectParams params = new ConnectParams(ByteBuffer.wrap(connectData), 32, RECVS, 4, 4, 10_000);
        RdmaConnection cli = provider.connect(target, params, client).get(WAIT_S, TimeUnit.SECONDS);
        Object a = accepted.poll(WAIT_S, TimeUnit.SECONDS);
        if (a instanceof Throwable t) {
            throw new AssertionError("accept failed", t);
        }
        check(a instanceof Accepted, "acceptor: " + a);
        Accepted acc = (Accepted) a;
        RdmaConnection srv = acc.conn();
        Side server = acc.side();
        log("connected " + cli + " (initiator depth " + cli.initiatorDepth() + "); accepted " + srv
                + " (initiator depth " + srv.initiatorDepth() + ", request offered " + acc.requestInitiatorDepth() + ")");
        checkPrivateData("acceptor saw the connect private data", ByteBuffer.wrap(acc.requestData()).order(ByteOrder.LITTLE_ENDIAN),
                connectData);
        checkPrivateData("connector got the accept private data", cli.privateData(), acceptData);
        checkPrivateData("accepted connection's privateData()", srv.privateData(), connectData);
        check(cli.isOpen() && srv.isOpen(), "both open");
        check(cli.peer() != null && cli.peer().getPort() == target.getPort(), "client peer " + cli.peer());
        check(srv.peer() != null && srv.localAddress().getPort() == target.getPort(), "server addresses " + srv.localAddress());
        check(cli.initiatorDepth() >= 1 && srv.initiatorDepth() >= 1, "initiator depths");

        // ---- a connect that is rejected with 4 bytes of private data
        byte[] rejectMe = pattern(32, 5);
        rejectMe[0] = 'R';
        try {
            provider.connect(target, new ConnectParams(ByteBuffer.wrap(rejectMe), 8, 8, 1, 1, 10_000), new Side("rejected"))
                    .get(WAIT_S, TimeUnit.SECONDS);
            throw new AssertionError("the second connect was not rejected");
        } catch (ExecutionException e) {
            check(e.getCause() instanceof RdmaRejectedException, "rejected with " + e.getCause());
            RdmaRejectedException r = (RdmaRejectedException) e.getCause();
            log("rejected: " + r.getMessage());
            checkPrivateData("connector got the reject private data", r.privateData(), REJECT_DATA);
        }
        check("rejected".equals(accepted.poll(WAIT_S, TimeUnit.SECONDS)), "the acceptor rejected");

        // ---- a connect to a port nobody listens on fails at once
        InetSocketAddress nobody = new InetSocketAddress(addr, target.getPort() + 1);
        try {
            provider.connect(nobody, new ConnectParams(null, 4, 4, 1, 1, 10_000), new Side("refused"))
                    .get(WAIT_S, TimeUnit.SECONDS);
            throw new AssertionError("a connect to " + nobody + " succeeded");
        } catch (ExecutionException e) {
            check(e.getCause() instanceof java.io.IOException, "refused with " + e.getCause());
            log("no listener: " + e.getCause());
        }

        ProtectionDomain cpd = cli.pd();
        ProtectionDomain spd = srv.pd();
        check(cpd == spd, "one PD per device: both sides are on rxe0");
        MemoryRegion srvRecv = srvRecvRef.get();
        MemoryRegion cliRecv = cpd.register(ByteBuffer.allocateDirect(RECVS * SLOT), MemoryRegion.LOCAL_WRITE);
        MemoryRegion cliSend = cpd.register(ByteBuffer.allocateDirect(SLOT), 0);
        MemoryRegion srvSend = spd.register(ByteBuffer.allocateDirect(SLOT), 0);
        for (int i = 0; i < RECVS; i++) {
            cli.postRecv(200 + i, cliRecv, i * SLOT, SLOT);
        }

        // ---- SEND/RECV both ways
        byte[] hello = "hello server, this is the client over rxe0".getBytes();
        cliSend.buffer().put(0, hello);
        cli.postSend(1, cliSend, 0, hello.length, RdmaConnection.NO_INVALIDATE);
        Wc sent = client.take("SEND to the server");
        check(sent.wrId() == 1 && sent.opcode() == WorkCompletion.SEND, "client SEND completion " + sent);
        Wc got = server.take("RECV of the client's SEND");
        check(got.opcode() == WorkCompletion.RECV && got.byteLength() == hello.length && got.wrId() >= 100 && got.wrId() < 108,
                "server RECV " + got);
        byte[] seen = new byte[hello.length];
        srvRecv.buffer().get((int) (got.wrId() - 100) * SLOT, seen);
        check(java.util.Arrays.equals(seen, hello), "server received the bytes sent");
        srv.postRecv(got.wrId(), srvRecv, (int) (got.wrId() - 100) * SLOT, SLOT);

        byte[] back = "hello client, the server answers".getBytes();
        srvSend.buffer().put(0, back);
        srv.postSend(2, srvSend, 0, back.length, RdmaConnection.NO_INVALIDATE);
        check(server.take("SEND to the client").wrId() == 2, "server SEND completion");
        got = client.take("RECV of the server's SEND");
        check(got.opcode() == WorkCompletion.RECV && got.byteLength() == back.length, "client RECV " + got);
        seen = new byte[back.length];
        cliRecv.buffer().get((int) (got.wrId() - 200) * SLOT, seen);
        check(java.util.Arrays.equals(seen, back), "client received the bytes sent");
        cli.postRecv(got.wrId(), cliRecv, (int) (got.wrId() - 200) * SLOT, SLOT);
        log("SEND/RECV both ways ok");

        // ---- RDMA WRITE chained with a SEND: the data is there when the SEND's RECV completes
        int len = 64 * 1024;
        byte[] data = pattern(len, 9);
        MemoryRegion cliSink = cpd.register(ByteBuffer.allocateDirect(len), MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_WRITE);
        MemoryRegion srvSource = spd.register(ByteBuffer.allocateDirect(len), 0);
        srvSource.buffer().put(0, data);
        CompletableFuture<String> sawData = new CompletableFuture<>();
        client.hook = (wrId, opcode, byteLength) -> {
            if (opcode == WorkCompletion.RECV) {
                byte[] now = new byte[len];
                cliSink.buffer().get(0, now);
                sawData.complete(java.util.Arrays.equals(now, data) ? "ok" : "the written data was not there");
                cli.postRecv(wrId, cliRecv, (int) (wrId - 200) * SLOT, SLOT);
                return true;
            }
            return false;
        };
        srvSend.buffer().put(0, "written".getBytes());
        srv.postWriteAndSend(3, srvSource, 0, len, cliSink.address(), cliSink.rkey(), srvSend, 0, 7,
                RdmaConnection.NO_INVALIDATE);
        Wc ws = server.take("RDMA WRITE + SEND");
        check(ws.wrId() == 3 && ws.opcode() == WorkCompletion.SEND, "one completion, the SEND's: " + ws);
        check("ok".equals(sawData.get(WAIT_S, TimeUnit.SECONDS)), "client: " + sawData.getNow(null));
        client.hook = null;
        Thread.sleep(100);
        check(server.completions.isEmpty(), "no completion for the unsignaled WRITE: " + server.completions);
        log("RDMA WRITE (" + len + " bytes) + SEND in one post ok");

        // ---- RDMA READ of a region registered REMOTE_READ
        byte[] remote = pattern(len, 42);
        MemoryRegion srvReadable = spd.register(ByteBuffer.allocateDirect(len), MemoryRegion.REMOTE_READ);
        srvReadable.buffer().put(0, remote);
        MemoryRegion cliReadInto = cpd.register(ByteBuffer.allocateDirect(len), MemoryRegion.LOCAL_WRITE);
        cli.postRead(4, cliReadInto, 0, len, srvReadable.address(), srvReadable.rkey());
        Wc rd = client.take("RDMA READ");
        check(rd.wrId() == 4 && rd.opcode() == WorkCompletion.RDMA_READ, "READ completion " + rd);
        byte[] read = new byte[len];
        cliReadInto.buffer().get(0, read);
        check(java.util.Arrays.equals(read, remote), "the READ brought the remote bytes");
        log("RDMA READ (" + len + " bytes, reported " + rd.byteLength() + ") ok");

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
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
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

        // ---- an RDMA READ with a wrong rkey ends the connection on both sides, memory untouched
        byte[] before = new byte[len];
        java.util.Arrays.fill(before, (byte) 0x5a);
        cliReadInto.buffer().put(0, before);
        cli.postRead(7, cliReadInto, 0, len, srvReadable.address(), srvReadable.rkey() ^ 0x00ff00);
        Optional<Throwable> cend = client.ended.get(WAIT_S, TimeUnit.SECONDS);
        log("client ended: " + cend.map(Throwable::getMessage).orElse("orderly"));
        check(cend.isPresent() && cend.get().getMessage().contains(WorkCompletion.statusName(WorkCompletion.REM_ACCESS_ERR)),
                "the client's cause names the remote access error: " + cend);
        Optional<Throwable> send = server.ended.get(WAIT_S, TimeUnit.SECONDS);
        log("server ended: " + send.map(Throwable::getMessage).orElse("orderly disconnect"));
        check(client.completions.isEmpty(), "no completion delivered for the failed READ: " + client.completions);
        byte[] after = new byte[len];
        cliReadInto.buffer().get(0, after);
        check(java.util.Arrays.equals(after, before), "the failed READ left the local buffer alone");
        byte[] remoteAfter = new byte[len];
        srvReadable.buffer().get(0, remoteAfter);
        check(java.util.Arrays.equals(remoteAfter, remote), "the failed READ left the remote buffer alone");
        check(!cli.isOpen() && !srv.isOpen(), "both connections ended");
        cli.postSend(8, cliSend, 0, 4, RdmaConnection.NO_INVALIDATE);       // dropped
        Thread.sleep(200);
        check(client.afterEnd.get() == 0 && server.afterEnd.get() == 0, "nothing after onDisconnected, which came once");
        log("wrong rkey: both sides ended, memory untouched");

        // ---- a fresh connection after all that, closed in order by the client
        Side c2 = new Side("client2");
        RdmaConnection cli2 = provider.connect(target, new ConnectParams(ByteBuffer.wrap(connectData), 4, 4, 1, 1, 10_000), c2)
                .get(WAIT_S, TimeUnit.SECONDS);
        Accepted acc2 = (Accepted) accepted.poll(WAIT_S, TimeUnit.SECONDS);
        cli2.close();
        check(c2.ended.get(WAIT_S, TimeUnit.SECONDS).isEmpty(), "orderly close: no cause");
        check(acc2.side().ended.get(WAIT_S, TimeUnit.SECONDS).isEmpty(), "the peer saw an orderly disconnect");
        log("orderly close ok");

        for (MemoryRegion mr : new MemoryRegion[] {cliRecv, cliSend, srvSend, cliSink, srvSource, srvReadable, cliReadInto, srvRecv}) {
            mr.pd().deregister(mr);
        }
        listener.close();
        long c0 = System.nanoTime();
        provider.close();
        log("provider closed in " + (System.nanoTime() - c0) / 1_000_000 + " ms");
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }

    /** The event loops of both connections and the completion channel threads. */
    private static long[] dataPathThreads(RdmaConnection... conns) throws Exception {
        java.util.Set<Long> ids = new java.util.TreeSet<>();
        for (RdmaConnection c : conns) {
            ids.add(c.eventLoop().submit(() -> Thread.currentThread().getId()).get());
        }
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("verbs-cq")) {
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

    private VerbsSelfTest() {
    }
}
