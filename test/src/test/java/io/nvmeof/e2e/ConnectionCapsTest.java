package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.fabric.rdma.ConnectParams;
import io.nvmeof.fabric.rdma.RdmaConnection;
import io.nvmeof.fabric.rdma.RdmaHandler;
import io.nvmeof.fabric.rdma.RdmaProvider;
import io.nvmeof.fabric.rdma.RdmaProviders;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.rdma.RdmaCmRequest;
import io.nvmeof.target.RawHost;
import io.nvmeof.target.Settings;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What counts against the target's connection caps, against the launcher's process (issue 47,
 * items 16 and 17): discovery controllers have a cap of their own and never crowd out an I/O
 * host; one address's flood of idle connections costs its oldest ones their place, so a good
 * host behind the same address (NAT, containers on one node) still gets in, over NVMe/TCP and
 * NVMe/RDMA.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ConnectionCapsTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:caps";
    /** The good host's work: connect, write this much, read it back. */
    static final int GOOD_HOST_BYTES = 8 << 20;
    /** How long the good host may take for it (the check). */
    static final long GOOD_HOST_MILLIS = 5000;
    static final int IDLE = 500;

    @TempDir
    Path dir;

    /**
     * With {@code max_connections} at 300, 300 discovery controllers (a host each) fill their own
     * cap (the default of {@code max_discovery_connections}; the rest get Controller Busy) and an
     * allowed I/O host still connects and does its I/O.
     */
    @Test
    void discoveryControllersHaveTheirOwnCapAndNeverCrowdOutAnIoHost() throws Exception {
        int cap = Settings.MAX_DISCOVERY_CONNECTIONS.defaultValue();
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, "--listen", "tcp://127.0.0.1:0", "--subsystem", NQN,
                "--namespace", "ram:16M", "--max-connections", "300")) {
            InetSocketAddress at = new InetSocketAddress("127.0.0.1", t.port);
            List<RawHost> discovery = new ArrayList<>();
            Map<String, Integer> statuses = new TreeMap<>();
            try {
                for (int i = 0; i < 300; i++) {
                    RawHost h = new RawHost(at);
                    discovery.add(h);
                    h.icreq();
                    String host = "nqn.2014-08.org.nvmexpress:uuid:" + UUID.nameUUIDFromBytes(("d" + i).getBytes());
                    Status s = h.connect(0, Nqn.DISCOVERY, host, 0xffff).cqe().status();
                    statuses.merge(s.toString(), 1, Integer::sum);
                }
                goodHost(t);
                assertEquals(Map.of(Status.SUCCESS.toString(), cap, Status.CONNECT_CONTROLLER_BUSY.toString(), 300 - cap),
                        statuses, "discovery Connects past max_discovery_connections");
            } finally {
                for (RawHost h : discovery) {
                    h.close();
                }
            }
            assertEquals(0, t.stop());
            t.assertNoLeaks();
        }
    }

    /**
     * 500 idle sockets from 127.0.0.1, then the good host from there too: the target closes the
     * oldest idle ones as new ones come (at {@code max_pending_per_address}), and the good host
     * connects and writes and reads back 8 MiB within 5 s.
     */
    @Test
    void aGoodHostGetsInPastAFloodOfIdleSocketsFromItsAddressTcp() throws Exception {
        int cap = Settings.MAX_PENDING_PER_ADDRESS.defaultValue();
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, "--listen", "tcp://127.0.0.1:0", "--subsystem", NQN,
                "--namespace", "ram:16M")) {
            InetSocketAddress at = new InetSocketAddress("127.0.0.1", t.port);
            List<SocketChannel> idle = new ArrayList<>();
            try {
                for (int i = 0; i < IDLE; i++) {
                    SocketChannel ch = SocketChannel.open(at);
                    ch.configureBlocking(false);
                    idle.add(ch);
                }
                // every one accepted: as many closed by the target as are past its cap
                boolean[] closed = new boolean[IDLE];
                t.await("the target closed " + (IDLE - cap) + " idle sockets", () -> countClosed(idle, closed) >= IDLE - cap);
                goodHost(t);
                // the oldest went, the newest stayed (give or take the order in which the target's
                // event loops took sockets accepted together)
                List<Integer> newestClosed = new ArrayList<>();
                for (int i = IDLE - cap / 2; i < IDLE; i++) {
                    if (closed[i]) {
                        newestClosed.add(i);
                    }
                }
                assertEquals(List.of(), newestClosed, "idle sockets among the newest " + cap / 2 + " closed");
            } finally {
                for (SocketChannel ch : idle) {
                    ch.close();
                }
            }
            assertEquals(0, t.stop());
            t.assertNoLeaks();
        }
    }

    /**
     * The same over NVMe/RDMA (the soft provider): 500 queues established at the CM and never
     * sent a Fabrics Connect; the cap applies at the CM request, and the good host gets in.
     */
    @Test
    void aGoodHostGetsInPastAFloodOfIdleQueuesFromItsAddressRdma() throws Exception {
        int cap = Settings.MAX_PENDING_PER_ADDRESS.defaultValue();
        EventLoopGroup group = EventLoops.newGroup(1, "idle-rdma");
        RdmaProvider provider = RdmaProviders.open("soft", group);
        try (TargetProcess t = TargetProcess.start(Fabric.RDMA_SOFT, dir, "--listen", Fabric.RDMA_SOFT.listen(),
                "--subsystem", NQN, "--namespace", "ram:16M")) {
            InetSocketAddress at = new InetSocketAddress("127.0.0.1", t.port);
            AtomicInteger ended = new AtomicInteger();
            List<CompletableFuture<RdmaConnection>> idle = new ArrayList<>();
            try {
                for (int i = 0; i < IDLE; i++) {
                    ByteBuffer pd = Flyweight.allocate(RdmaCmRequest.SIZE);
                    new RdmaCmRequest().<RdmaCmRequest>wrap(pd, 0).encode(0, 32, 31, 0xffff);
                    CompletableFuture<RdmaConnection> c = provider.connect(at, new ConnectParams(pd, 8, 4, 1, 1, 10_000),
                            new RdmaHandler() {
                                @Override
                                public void onCompletion(long wrId, int opcode, int status, int byteLength,
                                                         long invalidatedRkey) {
                                }

                                @Override
                                public void onDisconnected(Throwable cause) {
                                    ended.incrementAndGet();
                                }
                            });
                    // a refused request (No Resources) ends it as much as a disconnect does
                    c.whenComplete((conn, e) -> {
                        if (e != null) {
                            ended.incrementAndGet();
                        }
                    });
                    idle.add(c);
                    if (i % 32 == 31) {
                        CompletableFuture.allOf(idle.toArray(new CompletableFuture<?>[0])).handle((v, e) -> null)
                                .get(60, TimeUnit.SECONDS);
                    }
                }
                t.await("the target ended " + (IDLE - cap) + " idle queues", () -> ended.get() >= IDLE - cap);
                int refused = 0;
                for (CompletableFuture<RdmaConnection> c : idle) {
                    refused += c.isCompletedExceptionally() ? 1 : 0;
                }
                goodHost(t);
                assertEquals(0, refused, "CM requests rejected, where the oldest idle queue should have been closed");
            } finally {
                for (CompletableFuture<RdmaConnection> c : idle) {
                    if (c.isDone() && !c.isCompletedExceptionally()) {
                        c.join().close();
                    }
                }
                provider.close();
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            }
            assertEquals(0, t.stop());
            t.assertNoLeaks();
        }
    }

    /** Sockets of {@code chs} the peer has closed (EOF), marked in {@code closed}; how many. */
    private static int countClosed(List<SocketChannel> chs, boolean[] closed) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(64);
        int n = 0;
        for (int i = 0; i < chs.size(); i++) {
            if (!closed[i]) {
                try {
                    closed[i] = chs.get(i).read(b.clear()) < 0;
                } catch (IOException e) {
                    closed[i] = true; // reset by the peer
                }
            }
            n += closed[i] ? 1 : 0;
        }
        return n;
    }

    /** The good host: connects, writes 8 MiB, reads them back, all within {@link #GOOD_HOST_MILLIS}. */
    private static void goodHost(TargetProcess t) throws IOException {
        byte[] data = new byte[GOOD_HOST_BYTES];
        new Random(47).nextBytes(data);
        long t0 = System.nanoTime();
        try (Controller c = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults().ioQueues(2))) {
            BlockDevice d = c.namespace(1);
            d.write(0, ByteBuffer.wrap(data));
            ByteBuffer back = ByteBuffer.allocate(data.length);
            d.read(0, back);
            assertEquals(ByteBuffer.wrap(data), back.flip(), "the good host's data read back");
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        System.out.printf("the good host connected, wrote and read back 8 MiB in %d ms%n", ms);
        assertTrue(ms <= GOOD_HOST_MILLIS, "the good host took " + ms + " ms to connect, write and read back 8 MiB");
    }
}
