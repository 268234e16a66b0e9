package io.nvmeof.fabric.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * What every provider must do, written once: a provider's test (or self-test on real verbs)
 * runs these checks against a listening and a connecting side of that provider.
 */
public final class RdmaProviderConformance {
    private final RdmaProvider provider;
    private final InetSocketAddress address;
    private final boolean responderSeesAccessError;

    public RdmaProviderConformance(RdmaProvider provider, InetSocketAddress address) {
        this(provider, address, true);
    }

    /**
     * @param responderSeesAccessError whether the provider tells the responder of a bad
     *        one-sided access why its connection ended: {@code soft} does (its peer serves
     *        the access and reports it); on real verbs the responder's adapter NAKs the
     *        request and the responder hears only the requester's orderly disconnect
     *        ({@code verbs} does not read the device's asynchronous events yet)
     */
    public RdmaProviderConformance(RdmaProvider provider, InetSocketAddress address, boolean responderSeesAccessError) {
        this.provider = provider;
        this.address = address;
        this.responderSeesAccessError = responderSeesAccessError;
    }

    /** A connected pair: {@code server} accepted, {@code client} connected. */
    public static final class Pair implements AutoCloseable {
        public RdmaConnection server;
        public RdmaConnection client;
        public final RecordingHandler serverHandler = new RecordingHandler();
        public final RecordingHandler clientHandler = new RecordingHandler();
        public ByteBuffer requestPrivateData;
        RdmaListener listener;

        @Override
        public void close() {
            if (client != null) {
                client.close();
            }
            if (server != null) {
                server.close();
            }
            listener.close();
        }
    }

    public Pair connect(byte[] requestData, byte[] acceptData) throws Exception {
        Pair p = new Pair();
        CompletableFuture<RdmaConnection> accepted = new CompletableFuture<>();
        p.listener = provider.listen(address, req -> {
            try {
                p.requestPrivateData = req.privateData();
                accepted.complete(req.accept(ByteBuffer.wrap(acceptData), 16, 16, Math.min(4, req.initiatorDepth()),
                        p.serverHandler));
            } catch (Exception e) {
                accepted.completeExceptionally(e);
            }
        });
        p.client = provider.connect(p.listener.localAddress(), new ConnectParams(ByteBuffer.wrap(requestData), 16, 16, 4, 4,
                10_000), p.clientHandler).get(20, TimeUnit.SECONDS);
        p.server = accepted.get(20, TimeUnit.SECONDS);
        return p;
    }

    /** Private data both ways, the negotiated depth. */
    public void privateDataBothWays() throws Exception {
        byte[] req = new byte[32];
        byte[] acc = new byte[32];
        for (int i = 0; i < 32; i++) {
            req[i] = (byte) (i + 1);
            acc[i] = (byte) (0x80 + i);
        }
        try (Pair p = connect(req, acc)) {
            if (p.requestPrivateData != null) { // (DiSNI cannot see it)
                assertPadded(req, bytes(p.requestPrivateData));
            }
            assertNotNull(p.client.privateData());
            assertPadded(acc, bytes(p.client.privateData()));
            assertTrue(p.client.isOpen());
            assertTrue(p.server.initiatorDepth() >= 1);
        }
    }

    /** A reject carries its private data to the connecting side. */
    public void rejectCarriesPrivateData() throws Exception {
        RdmaListener l = provider.listen(address, req -> req.reject(ByteBuffer.wrap(new byte[] {0, 0, 4, 0})));
        try {
            CompletableFuture<RdmaConnection> f = provider.connect(l.localAddress(),
                    new ConnectParams(ByteBuffer.wrap(new byte[32]), 4, 4, 1, 1, 10_000), new RecordingHandler());
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
            RdmaRejectedException r = assertInstanceOf(RdmaRejectedException.class, e.getCause());
            assertArrayEquals(new byte[] {0, 0, 4, 0}, Arrays.copyOf(bytes(r.privateData()), 4));
        } finally {
            l.close();
        }
    }

    /** SEND/RECV both ways, chained WRITE + SEND, RDMA READ, many round trips with reposting. */
    public void dataMovement() throws Exception {
        try (Pair p = connect(new byte[32], new byte[32])) {
            ProtectionDomain spd = p.server.pd();
            ProtectionDomain cpd = p.client.pd();
            MemoryRegion sbuf = spd.register(ByteBuffer.allocateDirect(64 << 10), MemoryRegion.LOCAL_WRITE);
            MemoryRegion crecv = cpd.register(ByteBuffer.allocateDirect(4096), MemoryRegion.LOCAL_WRITE);
            MemoryRegion cdata = cpd.register(ByteBuffer.allocateDirect(64 << 10),
                    MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_WRITE | MemoryRegion.REMOTE_READ);
            MemoryRegion srecv = spd.register(ByteBuffer.allocateDirect(4096), MemoryRegion.LOCAL_WRITE);
            on(p.server, () -> p.server.postRecv(1, srecv, 0, 4096));
            on(p.client, () -> p.client.postRecv(2, crecv, 0, 4096));

            // client SENDs 64 bytes
            MemoryRegion cmsg = cpd.register(ByteBuffer.allocateDirect(64), MemoryRegion.LOCAL_WRITE);
            fill(cmsg.buffer(), 0, 64, 7);
            on(p.client, () -> p.client.postSend(3, cmsg, 0, 64, RdmaConnection.NO_INVALIDATE));
            RecordingHandler.Completion c = p.clientHandler.next();
            assertEquals(3, c.wrId());
            assertEquals(WorkCompletion.SEND, c.opcode());
            assertEquals(WorkCompletion.SUCCESS, c.status());
            RecordingHandler.Completion r = p.serverHandler.next();
            assertEquals(1, r.wrId());
            assertEquals(WorkCompletion.RECV, r.opcode());
            assertEquals(64, r.byteLength());
            assertEquals((byte) (7 + 63), srecv.buffer().get(63));

            // server WRITEs 32 KiB into the client's region, then SENDs: data first
            fill(sbuf.buffer(), 0, 32 << 10, 3);
            fill(sbuf.buffer(), 60 << 10, 16, 9);
            on(p.server, () -> p.server.postWriteAndSend(4, sbuf, 0, 32 << 10, cdata.address() + 4096, cdata.rkey(),
                    sbuf, 60 << 10, 16, RdmaConnection.NO_INVALIDATE));
            RecordingHandler.Completion w = p.serverHandler.next();
            assertEquals(4, w.wrId());
            assertEquals(WorkCompletion.SUCCESS, w.status());
            RecordingHandler.Completion cr = p.clientHandler.next();
            assertEquals(WorkCompletion.RECV, cr.opcode());
            assertEquals(16, cr.byteLength());
            for (int i = 0; i < 32 << 10; i += 512) {
                assertEquals((byte) (3 + i), cdata.buffer().get(4096 + i), "byte " + i);
            }
            assertEquals(0, cdata.buffer().get(4095));
            assertEquals(0, cdata.buffer().get(4096 + (32 << 10)));

            // server READs 8 KiB of the client's region
            fill(cdata.buffer(), 40 << 10, 8192, 5);
            on(p.server, () -> p.server.postRead(5, sbuf, 1024, 8192, cdata.address() + (40 << 10), cdata.rkey()));
            RecordingHandler.Completion rd = p.serverHandler.next();
            assertEquals(5, rd.wrId());
            assertEquals(WorkCompletion.RDMA_READ, rd.opcode());
            assertEquals(WorkCompletion.SUCCESS, rd.status());
            for (int i = 0; i < 8192; i++) {
                assertEquals((byte) (5 + i), sbuf.buffer().get(1024 + i));
            }

            // 1000 round trips: every RECV is reposted
            for (int i = 0; i < 1000; i++) {
                int n = i;
                on(p.server, () -> p.server.postRecv(100 + n, srecv, 0, 4096));
                on(p.client, () -> p.client.postSend(200 + n, cmsg, 0, 64, RdmaConnection.NO_INVALIDATE));
                assertEquals(200 + n, p.clientHandler.next().wrId());
                RecordingHandler.Completion x = p.serverHandler.next();
                assertEquals(100 + n, x.wrId());
                assertEquals(WorkCompletion.SUCCESS, x.status());
            }
            assertTrue(p.server.isOpen() && p.client.isOpen());
        }
    }

    /**
     * An RDMA WRITE or READ with a wrong key, outside its region, or without the access right
     * fails the connection on both sides and touches no memory.
     */
    public void accessViolation(Violation v) throws Exception {
        try (Pair p = connect(new byte[32], new byte[32])) {
            ProtectionDomain spd = p.server.pd();
            ProtectionDomain cpd = p.client.pd();
            MemoryRegion sbuf = spd.register(ByteBuffer.allocateDirect(16 << 10), MemoryRegion.LOCAL_WRITE);
            ByteBuffer whole = ByteBuffer.allocateDirect(3 * 4096);
            fill(whole, 0, 3 * 4096, 1);
            // the registered window is the middle page; the pages around it are canaries
            ByteBuffer middle = whole.duplicate().position(4096).limit(8192).slice();
            MemoryRegion target = cpd.register(middle, v.access);
            ByteBuffer before = snapshot(whole);
            fill(sbuf.buffer(), 0, 16 << 10, 99);
            long addr = target.address() + v.offset;
            int key = v.wrongKey ? target.rkey() ^ 0x100 : target.rkey();
            on(p.server, () -> {
                if (v.read) {
                    p.server.postRead(1, sbuf, 0, v.length, addr, key);
                } else {
                    p.server.postWriteAndSend(1, sbuf, 0, v.length, addr, key, sbuf, 0, 8, RdmaConnection.NO_INVALIDATE);
                }
            });
            Throwable serverCause = p.serverHandler.disconnected.get(20, TimeUnit.SECONDS);
            Throwable clientCause = p.clientHandler.disconnected.get(20, TimeUnit.SECONDS); // (throws if it did not end)
            assertNotNull(serverCause, "the requester's connection failed");
            assertTrue(serverCause.getMessage().contains("remote access error"), serverCause.getMessage());
            if (responderSeesAccessError) {
                assertNotNull(clientCause, "the responder's connection failed");
            }
            assertEquals(before, snapshot(whole), "memory changed");
            if (v.read) {
                for (int i = 0; i < v.length; i++) {
                    assertEquals((byte) (99 + i), sbuf.buffer().get(i), "read target changed at " + i);
                }
            }
            assertTrue(p.serverHandler.completions.stream().noneMatch(c -> c.wrId() == 1 && c.status() == 0
                    && c.opcode() == WorkCompletion.RDMA_READ), "a failed READ completed successfully");
            p.serverHandler.assertLifecycle(p.server);
            p.clientHandler.assertLifecycle(p.client);
        }
    }

    /**
     * After {@code onDisconnected}, every post is a use after close and throws (never touches
     * the provider's freed queue pair or native memory); on a live connection, a region that
     * was deregistered throws too.
     */
    public void useAfterCloseThrows() throws Exception {
        Pair p = connect(new byte[32], new byte[32]);
        MemoryRegion c = p.client.pd().register(ByteBuffer.allocateDirect(4096), MemoryRegion.LOCAL_WRITE);
        MemoryRegion gone = p.client.pd().register(ByteBuffer.allocateDirect(4096), MemoryRegion.LOCAL_WRITE);
        p.client.pd().deregister(gone);
        on(p.client, () -> assertThrows(IllegalStateException.class,
                () -> p.client.postSend(1, gone, 0, 64, RdmaConnection.NO_INVALIDATE), "post of a deregistered region"));
        assertTrue(p.client.isOpen(), "a refused post leaves the connection alone");
        p.close();
        p.clientHandler.disconnected.get(20, TimeUnit.SECONDS);
        p.serverHandler.disconnected.get(20, TimeUnit.SECONDS);
        for (RdmaConnection x : new RdmaConnection[] {p.client, p.server}) {
            MemoryRegion mr = x == p.client ? c : x.pd().register(ByteBuffer.allocateDirect(4096), MemoryRegion.LOCAL_WRITE);
            on(x, () -> {
                assertThrows(IllegalStateException.class, () -> x.postRecv(2, mr, 0, 64), "postRecv after close");
                assertThrows(IllegalStateException.class, () -> x.postSend(3, mr, 0, 64, RdmaConnection.NO_INVALIDATE),
                        "postSend after close");
                assertThrows(IllegalStateException.class, () -> x.postRead(4, mr, 0, 64, 0x1000, 1), "postRead after close");
                assertThrows(IllegalStateException.class, () -> x.postWriteAndSend(5, mr, 0, 64, 0x1000, 1, mr, 64, 16,
                        RdmaConnection.NO_INVALIDATE), "postWriteAndSend after close");
            });
            assertTrue(!x.isOpen());
            x.pd().deregister(mr);
        }
        assertTrue(p.clientHandler.completions.isEmpty() && p.serverHandler.completions.isEmpty(),
                "nothing completed after the end: " + p.clientHandler.completions + p.serverHandler.completions);
        p.clientHandler.assertLifecycle(p.client);
        p.serverHandler.assertLifecycle(p.server);
    }

    /**
     * The provider's native allocations ({@code live}, counted by the provider) return to where
     * they were once a connection that moved data has ended on both sides.
     */
    public void nativeMemoryReturns(IntSupplier live) throws Exception {
        Pair warm = connect(new byte[32], new byte[32]);
        assertTrue(warm.client.isOpen());       // per-loop and per-device blocks exist from here on
        warm.close();
        warm.clientHandler.disconnected.get(20, TimeUnit.SECONDS);
        warm.serverHandler.disconnected.get(20, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        int before = live.getAsInt();
        Pair p = connect(new byte[32], new byte[32]);
        MemoryRegion s = p.server.pd().register(ByteBuffer.allocateDirect(4096), MemoryRegion.LOCAL_WRITE);
        MemoryRegion c = p.client.pd().register(ByteBuffer.allocateDirect(4096), MemoryRegion.LOCAL_WRITE);
        on(p.server, () -> p.server.postRecv(1, s, 0, 4096));
        on(p.client, () -> p.client.postSend(2, c, 0, 128, RdmaConnection.NO_INVALIDATE));
        assertEquals(2, p.clientHandler.next().wrId());
        assertEquals(1, p.serverHandler.next().wrId());
        assertTrue(live.getAsInt() > before, "a connection holds native memory: " + live.getAsInt() + " vs " + before);
        p.close();
        p.clientHandler.disconnected.get(20, TimeUnit.SECONDS);
        p.serverHandler.disconnected.get(20, TimeUnit.SECONDS);
        p.server.pd().deregister(s);
        p.client.pd().deregister(c);
        while (live.getAsInt() != before && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(before, live.getAsInt(), "native blocks left behind by a closed connection");
        p.clientHandler.assertLifecycle(p.client);
        p.serverHandler.assertLifecycle(p.server);
    }

    /** The bad one-sided operations every provider must refuse. */
    public static List<Violation> violations() {
        int rw = MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_READ | MemoryRegion.REMOTE_WRITE;
        return List.of(
                new Violation(false, true, rw, 0, 512),                              // WRITE, wrong key
                new Violation(true, true, rw, 0, 512),                               // READ, wrong key
                new Violation(false, false, rw, 4096 - 256, 512),                    // WRITE past the end
                new Violation(false, false, rw, -256, 512),                          // WRITE before the start
                new Violation(true, false, rw, 4000, 200),                           // READ past the end
                new Violation(false, false, MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_READ, 0, 512), // no write right
                new Violation(true, false, MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_WRITE, 0, 512)); // no read right
    }

    /** One bad one-sided operation. */
    public record Violation(boolean read, boolean wrongKey, int access, long offset, int length) {
    }

    private static ByteBuffer snapshot(ByteBuffer b) {
        ByteBuffer c = ByteBuffer.allocate(b.capacity());
        c.put(b.duplicate().clear());
        return c.flip();
    }

    private static void fill(ByteBuffer b, int at, int len, int seed) {
        for (int i = 0; i < len; i++) {
            b.put(at + i, (byte) (seed + i));
        }
    }

    /** {@code got} is {@code want}, then zeros: the IB CM carries private data in fixed-size fields (56 bytes in a REQ). */
    private static void assertPadded(byte[] want, byte[] got) {
        assertTrue(got.length >= want.length, got.length + " bytes of private data, wanted at least " + want.length);
        assertArrayEquals(want, Arrays.copyOf(got, want.length));
        for (int i = want.length; i < got.length; i++) {
            assertEquals(0, got[i], "private data byte " + i + " after the " + want.length + " sent");
        }
    }

    static byte[] bytes(ByteBuffer b) {
        ByteBuffer d = b.duplicate();
        byte[] out = new byte[d.remaining()];
        d.get(out);
        return out;
    }

    private static void on(RdmaConnection c, Runnable r) throws Exception {
        c.eventLoop().submit(r).get(10, TimeUnit.SECONDS);
    }

    private static <T> T assertInstanceOf(Class<T> type, Object o) {
        assertTrue(type.isInstance(o), "expected " + type.getSimpleName() + " but got " + o);
        return type.cast(o);
    }
}
