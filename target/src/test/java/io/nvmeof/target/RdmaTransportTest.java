package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.EventLoopGroup;
import io.netty.util.ResourceLeakDetector;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.fabric.rdma.ConnectParams;
import io.nvmeof.fabric.rdma.MemoryRegion;
import io.nvmeof.fabric.rdma.RdmaConnection;
import io.nvmeof.fabric.rdma.RdmaRejectedException;
import io.nvmeof.fabric.rdma.RecordingHandler;
import io.nvmeof.fabric.rdma.WorkCompletion;
import io.nvmeof.fabric.rdma.soft.SoftProvider;
import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.CompletionQueueEntry;
import io.nvmeof.protocol.ConnectData;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.IdentifyCns;
import io.nvmeof.protocol.IdentifyController;
import io.nvmeof.protocol.Registers;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.SubmissionQueueEntry;
import io.nvmeof.protocol.rdma.RdmaCmAccept;
import io.nvmeof.protocol.rdma.RdmaCmReject;
import io.nvmeof.protocol.rdma.RdmaCmRequest;
import io.nvmeof.target.backend.RamBackend;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The target's NVMe/RDMA transport from a host written at the verbs level (soft provider): the
 * CM request's private data is validated and answered by reject with the spec's status or
 * accept with CRQSIZE; Connect data is pulled by RDMA READ; a keyed SGL with a wrong key, or
 * pointing outside the host's registered region, fails that connection and touches no other
 * memory, and the target serves on.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RdmaTransportTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:rdma-transport";
    static final String HOSTNQN = "nqn.2026-11.io.nvmeof:raw-rdma-host";
    static Target target;
    static InetSocketAddress address;
    static EventLoopGroup group;
    static SoftProvider host;

    @BeforeAll
    static void start() throws Exception {
        target = new Target();
        Subsystem s = new Subsystem(NQN, "RDMA0001", "rdma", "1.0");
        s.addNamespace(new Namespace(NQN, 1, new RamBackend(1 << 20, 4096), false, null));
        target.addSubsystem(s);
        Port p = target.addPort(new Port(1, "rdma", Map.of("rdma_provider", "soft"), new InetSocketAddress("127.0.0.1", 0), true,
                List.of()));
        address = p.bound();
        group = EventLoops.newGroup(1, "raw-rdma-host");
        host = new SoftProvider(group);
    }

    @AfterAll
    static void stop() throws Exception {
        target.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    static ByteBuffer request(int recfmt, int qid, int hrqsize, int hsqsize) {
        ByteBuffer b = Flyweight.allocate(RdmaCmRequest.SIZE);
        new RdmaCmRequest().<RdmaCmRequest>wrap(b, 0).encode(qid, hrqsize, hsqsize, 0xffff);
        b.putShort(0, (short) recfmt);
        return b;
    }

    static int rejectStatus(ByteBuffer privateData) throws Exception {
        ExecutionException e = assertThrows(ExecutionException.class, () -> host.connect(address,
                new ConnectParams(privateData, 8, 8, 4, 1, 5000), new RecordingHandler()).get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof RdmaRejectedException, String.valueOf(e.getCause()));
        ByteBuffer rej = ((RdmaRejectedException) e.getCause()).privateData();
        assertEquals(RdmaCmReject.SIZE, rej.remaining());
        RdmaCmReject r = new RdmaCmReject().wrap(rej.order(ByteOrder.LITTLE_ENDIAN), rej.position());
        assertEquals(0, r.recfmt());
        return r.status();
    }

    @Test
    void badConnectRequestsAreRejectedWithTheSpecsStatus() throws Exception {
        assertEquals(RdmaCmReject.INVALID_LENGTH, rejectStatus(ByteBuffer.allocate(16)));
        assertEquals(RdmaCmReject.INVALID_RECFMT, rejectStatus(request(1, 0, 32, 31)));
        assertEquals(RdmaCmReject.INVALID_HSQSIZE, rejectStatus(request(0, 0, 64, 63)), "admin queue above 32");
        assertEquals(RdmaCmReject.INVALID_HSQSIZE, rejectStatus(request(0, 1, 1, 0)), "queue of one entry");
        assertEquals(RdmaCmReject.INVALID_HSQSIZE, rejectStatus(request(0, 1, 1024, 1023)), "above MQES");
        assertEquals(RdmaCmReject.INVALID_QID, rejectStatus(request(0, 9999, 32, 31)));
        assertEquals(RdmaCmReject.INVALID_HRQSIZE, rejectStatus(request(0, 1, 0, 31)));
    }

    /** A connection that never sends its Fabrics Connect is closed at the connect deadline, as over TCP. */
    @Test
    void aQueueWithoutFabricsConnectIsClosedAtTheDeadline() throws Exception {
        target.update(target.options().with(Settings.CONNECT_TIMEOUT_MS, 500L));
        try {
            RecordingHandler h = new RecordingHandler();
            RdmaConnection c = host.connect(address, new ConnectParams(request(0, 0, 32, 31), 8, 8, 4, 1, 5000), h)
                    .get(10, TimeUnit.SECONDS);
            long t0 = System.nanoTime();
            h.disconnected.get(10, TimeUnit.SECONDS);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms >= 300 && ms < 5000, "closed after " + ms + " ms");
            c.close();
        } finally {
            target.update(target.options().with(Settings.CONNECT_TIMEOUT_MS, Settings.CONNECT_TIMEOUT_MS.defaultValue()));
        }
    }

    /** A raw admin queue: the connection, a registered window with canary pages around it, response buffers. */
    static final class RawQueue implements AutoCloseable {
        final RecordingHandler handler = new RecordingHandler();
        final RdmaConnection c;
        final ByteBuffer whole = ByteBuffer.allocateDirect(3 * 4096).order(ByteOrder.LITTLE_ENDIAN);
        final MemoryRegion window;
        final MemoryRegion capsule;
        final MemoryRegion responses;

        RawQueue() throws Exception {
            this(0);
        }

        RawQueue(int qid) throws Exception {
            c = host.connect(address, new ConnectParams(request(0, qid, 32, 31), 8, 8, 4, 1, 5000), handler)
                    .get(10, TimeUnit.SECONDS);
            for (int i = 0; i < whole.capacity(); i++) {
                whole.put(i, (byte) 0xa5);
            }
            window = c.pd().register(whole.duplicate().position(4096).limit(8192).slice().order(ByteOrder.LITTLE_ENDIAN),
                    MemoryRegion.LOCAL_WRITE | MemoryRegion.REMOTE_READ | MemoryRegion.REMOTE_WRITE);
            capsule = c.pd().register(ByteBuffer.allocateDirect(64).order(ByteOrder.LITTLE_ENDIAN), MemoryRegion.LOCAL_WRITE);
            responses = c.pd().register(ByteBuffer.allocateDirect(64).order(ByteOrder.LITTLE_ENDIAN), MemoryRegion.LOCAL_WRITE);
            c.eventLoop().submit(() -> c.postRecv(100, responses, 0, 16)).get();
        }

        /** Sends an SQE whose keyed SGL names {@code length} bytes at {@code address} with {@code key}. */
        void send(Consumer<SubmissionQueueEntry> fill, long at, int length, int key) throws Exception {
            SubmissionQueueEntry sqe = new SubmissionQueueEntry().wrap(capsule.buffer(), 0);
            sqe.clear();
            fill.accept(sqe);
            sqe.psdt(SubmissionQueueEntry.PSDT_SGL_MPTR_CONTIGUOUS).cid(7).sglKeyed(at, length, key, Sgl.KEYED_ADDRESS);
            c.eventLoop().submit(() -> c.postSend(1, capsule, 0, 64, RdmaConnection.NO_INVALIDATE)).get();
        }

        /** The next response, or null if the connection ended instead. */
        CompletionQueueEntry response() throws Exception {
            while (true) {
                RecordingHandler.Completion x = handler.completions.poll(10, TimeUnit.SECONDS);
                if (x == null) {
                    return null;
                }
                if (x.opcode() == WorkCompletion.RECV) {
                    return new CompletionQueueEntry().wrap(responses.buffer(), 0);
                }
            }
        }

        void connectData(String nqn) {
            connectData(nqn, ConnectData.CNTLID_DYNAMIC);
        }

        void connectData(String nqn, int cntlid) {
            ConnectData d = new ConnectData().wrap(window.buffer(), 0);
            d.clear();
            d.hostId(UUID.nameUUIDFromBytes(HOSTNQN.getBytes())).cntlid(cntlid).subsystemNqn(nqn).hostNqn(HOSTNQN);
        }

        /** Connect, CC.EN, wait for CSTS.RDY; a receive is posted for the next response. */
        /** Connect, CC.EN, wait for CSTS.RDY; returns the controller ID. */
        int enable() throws Exception {
            connectData(NQN);
            send(s -> s.connect(0, 32, 0, 0), window.address(), ConnectData.SIZE, window.rkey());
            CompletionQueueEntry connected = next();
            assertEquals(Status.SUCCESS, connected.status());
            int cntlid = (int) connected.result() & 0xffff;
            send(s -> s.propertySet(Registers.CC, 4, Registers.ccEnable()), 0, 0, 0);
            assertEquals(Status.SUCCESS, next().status());
            Awaitility.await("CSTS.RDY").atMost(Duration.ofSeconds(30)).pollInSameThread().pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(20)).until(() -> {
                        send(s -> s.propertyGet(Registers.CSTS, 4), 0, 0, 0);
                        return (next().result() & 1) != 0;
                    });
            return cntlid;
        }

        /** The next response, with a receive posted again for the one after it. */
        CompletionQueueEntry next() throws Exception {
            CompletionQueueEntry r = response();
            assertNotNull(r, "no response");
            CompletionQueueEntry copy = new CompletionQueueEntry().wrap(Flyweight.allocate(16), 0);
            copy.buffer().put(0, r.buffer(), r.offset(), 16);
            c.eventLoop().submit(() -> c.postRecv(100, responses, 0, 16)).get();
            return copy;
        }

        void assertCanariesIntact() {
            for (int i = 0; i < 4096; i++) {
                assertEquals((byte) 0xa5, whole.get(i), "canary before the window changed at " + i);
                assertEquals((byte) 0xa5, whole.get(8192 + i), "canary after the window changed at " + i);
            }
        }

        @Override
        public void close() {
            c.close();
        }
    }

    /** Counted, not timed: what the target's event loops allocate per RDMA read and write in steady state. */
    @Test
    void readsAndWritesAllocateNothingOnTheTargetLoops() throws Exception {
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        try (RawQueue admin = new RawQueue(); RawQueue ioq = new RawQueue(1)) {
            int cntlid = admin.enable();
            ioq.connectData(NQN, cntlid);
            ioq.send(s -> s.connect(1, 32, 0, 0), ioq.window.address(), ConnectData.SIZE, ioq.window.rkey());
            assertEquals(Status.SUCCESS, ioq.next().status());
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
            Consumer<SubmissionQueueEntry> write = s -> s.opcode(0x01).nsid(1).slba(8).blockCount(1);
            Consumer<SubmissionQueueEntry> read = s -> s.opcode(0x02).nsid(1).slba(8).blockCount(1);
            long before = 0;
            int commands = 0;
            for (int i = 0; i < 6000; i++) {
                if (i == 2000) { // after warming up: pools, caches, JIT
                    before = LoopAllocation.targetLoopBytes();
                }
                ioq.window.buffer().putInt(0, i);
                ioq.send(write, ioq.window.address(), 4096, ioq.window.rkey());
                assertEquals(Status.SUCCESS, ioq.next().status());
                ioq.window.buffer().putInt(0, -1);
                ioq.send(read, ioq.window.address(), 4096, ioq.window.rkey());
                assertEquals(Status.SUCCESS, ioq.next().status());
                assertEquals(i, ioq.window.buffer().getInt(0), "read back what was written");
                commands += i >= 2000 ? 2 : 0;
            }
            long bytes = LoopAllocation.targetLoopBytes() - before;
            double perCommand = (double) bytes / commands;
            System.out.printf("RDMA: target event loops allocated %d bytes over %d commands (%.2f per command)%n", bytes,
                    commands, perCommand);
            assertTrue(perCommand < 8, "allocated " + perCommand + " bytes per command on the target's event loops");
        } finally {
            ResourceLeakDetector.setLevel(level);
        }
    }

    @Test
    void acceptCarriesCrqsizeAndConnectDataComesByRdmaRead() throws Exception {
        try (RawQueue q = new RawQueue()) {
            RdmaCmAccept acc = new RdmaCmAccept().wrap(q.c.privateData(), q.c.privateData().position());
            assertEquals(0, acc.recfmt());
            assertEquals(32, acc.crqsize());
            q.connectData(NQN);
            q.send(s -> s.connect(0, 32, 0, 0), q.window.address(), ConnectData.SIZE, q.window.rkey());
            CompletionQueueEntry r = q.response();
            assertNotNull(r, "no response to Connect");
            assertEquals(Status.SUCCESS, r.status());
            assertEquals(7, r.cid());
            q.assertCanariesIntact();
        }
    }

    @Test
    void aWrongKeyOrAnAddressOutsideTheRegionFailsTheConnectionAndTouchesNothing() throws Exception {
        // Connect data named with a wrong key: the target's RDMA READ fails
        try (RawQueue q = new RawQueue()) {
            q.connectData(NQN);
            q.send(s -> s.connect(0, 32, 0, 0), q.window.address(), ConnectData.SIZE, q.window.rkey() ^ 0x40);
            assertNotNull(q.handler.disconnected.get(10, TimeUnit.SECONDS), "the connection failed");
            q.assertCanariesIntact();
        }
        // Identify data to be written past the end of the window: the target's RDMA WRITE fails
        try (RawQueue q = new RawQueue()) {
            q.enable();
            q.send(s -> s.opcode(AdminOpcode.IDENTIFY.code).identifyCns(IdentifyCns.CONTROLLER),
                    q.window.address() + 2048, 4096, q.window.rkey());
            assertNotNull(q.handler.disconnected.get(10, TimeUnit.SECONDS), "the connection failed");
            q.assertCanariesIntact();
        }
        // the target serves on
        try (RawQueue q = new RawQueue()) {
            q.enable();
            q.send(s -> s.opcode(AdminOpcode.IDENTIFY.code).identifyCns(IdentifyCns.CONTROLLER),
                    q.window.address(), 4096, q.window.rkey());
            CompletionQueueEntry r = q.response();
            assertEquals(Status.SUCCESS, r.status());
            assertEquals("RDMA0001", new IdentifyController().<IdentifyController>wrap(q.window.buffer(), 0).serialNumber()
                    .trim());
            q.assertCanariesIntact();
        }
    }
}
