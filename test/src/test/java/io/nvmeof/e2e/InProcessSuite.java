package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.Command;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.FileBackend;
import io.nvmeof.target.backend.RamBackend;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Target and initiator in one JVM over loopback: both sides under the leak detector. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class InProcessSuite {
    /** The fabric this run of the suite uses. */
    abstract Fabric fabric();

    static final String NQN = "nqn.2026-11.io.nvmeof:inproc";
    static final String LOCKED = "nqn.2026-11.io.nvmeof:locked";
    @TempDir
    static Path dir;
    Target target;
    int port;

    @BeforeAll
    void start() throws IOException {
        target = new Target();
        Subsystem s = new Subsystem(NQN, "IP0001", "in-process", "1.0");
        s.addNamespace(new Namespace(NQN, 1, new RamBackend(32 << 20, 4096), false, null));
        s.addNamespace(new Namespace(NQN, 2, FileBackend.open(dir.resolve("ns2.img"), 16 << 20, 512, false), false, null));
        s.addNamespace(new Namespace(NQN, 7, new RamBackend(1 << 20, 4096), true, null));
        target.addSubsystem(s);
        Subsystem locked = new Subsystem(LOCKED, "IP0002", "locked", "1.0");
        locked.allowHost("nqn.2026-11.io.nvmeof:only-me");
        locked.addNamespace(new Namespace(LOCKED, 1, new RamBackend(1 << 20, 4096), false, null));
        target.addSubsystem(locked);
        InetSocketAddress a = fabric().listen(target, new InetSocketAddress("127.0.0.1", 0));
        port = a.getPort();
    }

    @AfterAll
    void stop() throws IOException {
        target.close();
    }

    Stream<Arguments> digests() {
        return Stream.of(Arguments.of(false, false), Arguments.of(true, false), Arguments.of(false, true),
                Arguments.of(true, true));
    }

    @ParameterizedTest(name = "header digest {0}, data digest {1}")
    @MethodSource("digests")
    void writeReadVerifyAcrossSizes(boolean hd, boolean dd) throws Exception {
        ConnectOptions o = ConnectOptions.defaults().ioQueues(3).headerDigest(hd).dataDigest(dd);
        try (Controller c = Nvmeof.connect(fabric().uri(port, NQN), o)) {
            assertEquals(3, c.ioQueueCount());
            assertEquals(List.of(1, 2, 7), c.activeNamespaces());
            for (int nsid : new int[] {1, 2}) {
                BlockDevice dev = c.namespace(nsid);
                Random rnd = new Random(nsid * 10 + (hd ? 1 : 0) + (dd ? 2 : 0));
                // in-capsule, R2T, several H2CData, split at MDTS
                for (int size : new int[] {dev.blockSize(), 8192, 12288, 300 * 1024, 3 << 20}) {
                    byte[] data = new byte[size];
                    rnd.nextBytes(data);
                    long offset = (long) rnd.nextInt((int) ((dev.size() - size) / dev.blockSize())) * dev.blockSize();
                    dev.write(offset, ByteBuffer.wrap(data));
                    ByteBuffer back = ByteBuffer.allocateDirect(size);
                    dev.read(offset, back);
                    assertEquals(0, back.remaining(), "position advanced by the transfer");
                    assertEquals(ByteBuffer.wrap(data), back.flip(), "nsid " + nsid + " size " + size);
                }
                dev.flush();
            }
        }
    }

    @Test
    void moreCommandsThanTheQueueHoldsWaitTheirTurn() throws Exception {
        try (Controller c = Nvmeof.connect(fabric().uri(port, NQN), ConnectOptions.defaults().ioQueues(1).queueSize(4))) {
            BlockDevice dev = c.namespace(1);
            List<CompletableFuture<Void>> all = new ArrayList<>();
            List<ByteBuffer> bufs = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                ByteBuffer b = ByteBuffer.allocate(4096);
                while (b.hasRemaining()) {
                    b.putInt(i);
                }
                all.add(dev.writeAsync(i * 4096L, b.flip()));
            }
            CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
            all.clear();
            for (int i = 0; i < 300; i++) {
                ByteBuffer b = ByteBuffer.allocate(4096);
                bufs.add(b);
                all.add(dev.readAsync(i * 4096L, b));
            }
            CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
            for (int i = 0; i < 300; i++) {
                ByteBuffer b = bufs.get(i).flip();
                while (b.hasRemaining()) {
                    assertEquals(i, b.getInt());
                }
            }
        }
    }

    /** With commands waiting for slots, every completion still carries its own status (no success by mistake). */
    @Test
    void errorsStayErrorsWhenTheQueueIsFull() throws Exception {
        try (Controller c = Nvmeof.connect(fabric().uri(port, NQN), ConnectOptions.defaults().ioQueues(1).queueSize(4))) {
            BlockDevice ro = c.namespace(7);
            List<CompletableFuture<Void>> all = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                all.add(ro.writeAsync(0, ByteBuffer.allocate(4096)));
            }
            for (CompletableFuture<Void> f : all) {
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> f.get(30, TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof NvmeStatusException, String.valueOf(e.getCause()));
                assertEquals(Status.NAMESPACE_WRITE_PROTECTED, ((NvmeStatusException) e.getCause()).status().withDnr(true));
            }
        }
    }

    /** A blocking call inside a completion would wait for the loop it runs on: it is refused, clearly. */
    @Test
    void blockingInsideACompletionIsRefused() throws Exception {
        try (Controller c = Nvmeof.connect(fabric().uri(port, NQN), ConnectOptions.defaults().ioQueues(1))) {
            BlockDevice dev = c.namespace(1);
            // a callback always runs on the event loop (a future's continuation may not)
            CompletableFuture<Throwable> seen = new CompletableFuture<>();
            dev.newRequest().read(0, ByteBuffer.allocateDirect(4096), (req, err) -> {
                try {
                    dev.read(4096, ByteBuffer.allocate(4096));
                    seen.complete(null);
                } catch (Throwable t) {
                    seen.complete(t);
                }
            });
            Throwable t = seen.get(10, TimeUnit.SECONDS);
            assertTrue(t instanceof IllegalStateException, String.valueOf(t));
            assertTrue(t.getMessage().contains("event loop"), t.getMessage());
            dev.read(0, ByteBuffer.allocate(4096)); // and the device is fine
        }
    }

    @Test
    void errorsComeBackAsSpecStatusOrClearExceptions() throws Exception {
        try (Controller c = Nvmeof.connect(fabric().uri(port, NQN), ConnectOptions.defaults().ioQueues(1))) {
            BlockDevice dev = c.namespace(1);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> dev.read(100, ByteBuffer.allocate(4096)));
            assertTrue(e.getMessage().contains("offset 100 is not a multiple of the block size 4096"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> dev.write(0, ByteBuffer.allocate(1000)));
            assertTrue(e.getMessage().contains("length 1000"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> dev.read(dev.size(), ByteBuffer.allocate(4096)));
            assertTrue(e.getMessage().contains("past the end"), e.getMessage());

            // Passthrough commands reach the target unchecked and get its status.
            long blocks = dev.size() / 4096;
            NvmeStatusException s = assertThrows(NvmeStatusException.class, () -> c.io(new Command("Read")
                    .opcode(NvmOpcode.READ.code).nsid(1).cdw(10, (int) blocks).cdw(12, 0)
                    .dataIn(ByteBuffer.allocate(4096), 4096)));
            assertEquals(Status.LBA_OUT_OF_RANGE, s.status().withDnr(true));
            s = assertThrows(NvmeStatusException.class, () -> c.io(new Command("Flush").opcode(NvmOpcode.FLUSH.code)
                    .nsid(3)));
            assertEquals(Status.INVALID_NAMESPACE, s.status().withDnr(true));
            s = assertThrows(NvmeStatusException.class, () -> c.io(new Command("Write").opcode(NvmOpcode.WRITE.code)
                    .nsid(7).cdw(12, 0).dataOut(ByteBuffer.allocate(4096), 4096)));
            assertEquals(Status.NAMESPACE_WRITE_PROTECTED, s.status().withDnr(true));
            s = assertThrows(NvmeStatusException.class, () -> c.io(new Command("Vendor").opcode(0x99).nsid(1)));
            assertEquals(Status.INVALID_OPCODE, s.status().withDnr(true));
            // ...and the queue keeps working
            dev.write(0, ByteBuffer.allocate(4096));
        }
    }

    @Test
    void connectFailuresSayWhy() throws Exception {
        HostIdentity stranger = new HostIdentity(Nqn.fromUuid(UUID.randomUUID()), UUID.randomUUID());
        NvmeStatusException refused = assertThrows(NvmeStatusException.class,
                () -> Nvmeof.connect(fabric().uri(port, LOCKED), ConnectOptions.defaults().identity(stranger)));
        assertEquals(Status.CONNECT_INVALID_HOST, refused.status().withDnr(true));
        assertTrue(refused.getMessage().contains("not allowed"), refused.getMessage());

        HostIdentity me = new HostIdentity("nqn.2026-11.io.nvmeof:only-me", UUID.randomUUID());
        try (Controller c = Nvmeof.connect(fabric().uri(port, LOCKED), ConnectOptions.defaults().identity(me).ioQueues(1))) {
            assertEquals(1 << 20, c.namespace(1).size());
        }

        IOException unknown = assertThrows(IOException.class, () -> Nvmeof.connect(fabric().uri(port, "nqn.2026-11.io.nvmeof:nope")));
        assertTrue(unknown.getMessage().contains("no such subsystem"), unknown.getMessage());

        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        IOException unreachable = assertThrows(IOException.class,
                () -> Nvmeof.connect(fabric().uri(closed, NQN)));
        assertTrue(unreachable.getMessage().contains("cannot connect"), unreachable.getMessage());
    }

    @Test
    void commandsFailInsteadOfHangingWhenTheTargetGoesAway() throws Exception {
        Target t = new Target();
        Subsystem s = new Subsystem(NQN, "GONE", "gone", "1.0");
        s.addNamespace(new Namespace(NQN, 1, new RamBackend(1 << 20, 4096), false, null));
        t.addSubsystem(s);
        InetSocketAddress a = fabric().listen(t, new InetSocketAddress("127.0.0.1", 0));
        Controller c = Nvmeof.connect(fabric().uri(a.getPort(), NQN),
                ConnectOptions.defaults().ioQueues(1).commandTimeout(Duration.ofSeconds(5))
                        .controllerLossTimeout(Duration.ofSeconds(2)).reconnectDelay(Duration.ofMillis(200)));
        BlockDevice dev = c.namespace(1);
        dev.write(0, ByteBuffer.allocate(4096));
        t.close();
        long lost = System.nanoTime();
        IOException e = assertThrows(IOException.class, () -> dev.read(0, ByteBuffer.allocate(4096)));
        assertTrue(e.getMessage().contains("controller loss timeout"), e.getMessage());
        assertTrue(System.nanoTime() - lost >= TimeUnit.MILLISECONDS.toNanos(1500), "waited for the reconnect attempts");
        long t0 = System.nanoTime();
        c.close();
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(10), "close() returned promptly");
    }
}
