package io.nvmeof.nbd;

import static io.nvmeof.nbd.NbdProtocol.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.testing.EmbeddedTarget;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The NBD server in the protocol's own bytes ({@link RawNbdClient}): negotiation, reads and
 * writes of whole and partial blocks, structured replies, errors, and hostile input that ends
 * only its own connection; over a real target and initiator (a 16 MiB RAM namespace, 4 KiB blocks).
 */
@Timeout(value = 2, unit = java.util.concurrent.TimeUnit.MINUTES)
class NbdServerTest {
    static final int BLOCK = 4096;
    static final long SIZE = 16 << 20;
    @TempDir
    Path dir;
    EmbeddedTarget target;
    Controller controller;
    BlockDevice disk;
    NbdServer server;

    @BeforeEach
    void start() throws Exception {
        target = EmbeddedTarget.builder().ramNamespace(SIZE, BLOCK).start();
        controller = Nvmeof.connect(target.uri(), ConnectOptions.defaults().ioQueues(2));
        disk = controller.namespace(1);
        server = NbdServer.builder(disk).description("the test disk").multiConn(true).unixSocket(dir.resolve("nbd.sock")).start();
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
        controller.close();
        target.close();
    }

    private RawNbdClient client() throws Exception {
        return new RawNbdClient(server.address());
    }

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private byte[] deviceBytes(long offset, int length) throws Exception {
        ByteBuffer b = ByteBuffer.allocateDirect(length);
        disk.read(offset, b);
        byte[] out = new byte[length];
        b.flip().get(out);
        return out;
    }

    @Test
    void negotiationAsTheProtocolSays() throws Exception {
        try (RawNbdClient c = client()) {
            assertEquals(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES, c.greeting());
            c.clientFlags(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES);

            c.option(OPT_LIST, new byte[0]);
            RawNbdClient.OptionReply s = c.optionReply();
            assertEquals(REP_SERVER, s.type());
            ByteBuffer d = ByteBuffer.wrap(s.data());
            assertEquals(0, d.getInt(), "the default export's name is empty");
            assertEquals("the test disk", new String(s.data(), 4, s.data().length - 4));
            assertEquals(REP_ACK, c.optionReply().type());

            c.option(OPT_LIST, new byte[] {1});
            assertEquals(REP_ERR_INVALID, c.optionReply().type());
            c.option(OPT_STARTTLS, new byte[0]);
            assertEquals(REP_ERR_UNSUP, c.optionReply().type());
            c.option(99, new byte[] {1, 2, 3});
            assertEquals(REP_ERR_UNSUP, c.optionReply().type(), "an unknown option is refused, its data passed over");
            c.option(OPT_SET_META_CONTEXT, new byte[8]);
            assertEquals(REP_ERR_INVALID, c.optionReply().type(), "metadata contexts need structured replies");
            c.option(OPT_INFO, RawNbdClient.infoRequest("nope"));
            RawNbdClient.OptionReply unknown = c.optionReply();
            assertEquals(REP_ERR_UNKNOWN, unknown.type());
            assertTrue(unknown.text().contains("nope"), unknown.text());
            c.option(OPT_INFO, new byte[] {0, 0, 0, 9, 0, 0});
            assertEquals(REP_ERR_INVALID, c.optionReply().type(), "a name longer than the option");

            c.option(OPT_INFO, RawNbdClient.infoRequest("", INFO_NAME, INFO_DESCRIPTION, INFO_BLOCK_SIZE));
            Map<Integer, ByteBuffer> info = new HashMap<>();
            RawNbdClient.OptionReply r;
            while ((r = c.optionReply()).type() == REP_INFO) {
                ByteBuffer b = ByteBuffer.wrap(r.data());
                info.put(b.getShort() & 0xffff, b);
            }
            assertEquals(REP_ACK, r.type());
            ByteBuffer e = info.get(INFO_EXPORT);
            assertEquals(SIZE, e.getLong());
            int flags = e.getShort() & 0xffff;
            assertEquals(TF_HAS_FLAGS | TF_SEND_FLUSH | TF_SEND_FUA | TF_SEND_TRIM | TF_SEND_WRITE_ZEROES | TF_CAN_MULTI_CONN,
                    flags, "no DF before structured replies; multi-conn as the builder said");
            ByteBuffer bs = info.get(INFO_BLOCK_SIZE);
            assertEquals(BLOCK, bs.getInt(), "minimum: the logical block");
            assertEquals(BLOCK, bs.getInt(), "preferred");
            assertEquals(disk.maxTransferSize(), bs.getInt(), "maximum: what the host moves in one command");
            assertEquals(0, info.get(INFO_NAME).remaining());
            assertEquals("the test disk", java.nio.charset.StandardCharsets.UTF_8.decode(info.get(INFO_DESCRIPTION)).toString());

            c.option(OPT_STRUCTURED_REPLY, new byte[0]);
            assertEquals(REP_ACK, c.optionReply().type());
            c.option(OPT_SET_META_CONTEXT, ByteBuffer.allocate(8 + 4 + 15).putInt(0).putInt(1).putInt(15)
                    .put("base:allocation".getBytes()).array());
            assertEquals(REP_ACK, c.optionReply().type(), "no context offered: none selected, then ACK");
            c.option(OPT_GO, RawNbdClient.infoRequest(""));
            while ((r = c.optionReply()).type() == REP_INFO) {
                // export and block size
            }
            assertEquals(REP_ACK, r.type());
            c.request(0, CMD_READ, 7, 0, BLOCK, null);
            RawNbdClient.Reply read = c.structuredReply();
            assertEquals(7, read.handle());
            assertEquals(BLOCK, read.data().length);
        }
    }

    @Test
    void exportNameGivesSizeAndFlagsAndAWrongNameEndsTheConnection() throws Exception {
        try (RawNbdClient c = client()) {
            c.greeting();
            c.clientFlags(CLIENT_FIXED_NEWSTYLE); // zeroes wanted
            c.option(OPT_EXPORT_NAME, new byte[0]);
            ByteBuffer r = c.read(8 + 2 + 124);
            assertEquals(SIZE, r.getLong());
            assertEquals(TF_HAS_FLAGS, r.getShort() & TF_HAS_FLAGS);
            while (r.hasRemaining()) {
                assertEquals(0, r.get());
            }
            c.request(0, CMD_WRITE, 1, 0, BLOCK, random(BLOCK, 1));
            assertEquals(0, c.simpleReply(0).error());
        }
        try (RawNbdClient c = client()) {
            c.greeting();
            c.clientFlags(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES);
            c.option(OPT_EXPORT_NAME, "other".getBytes());
            assertTrue(c.closedByServer(), "NBD_OPT_EXPORT_NAME cannot refuse: the connection ends");
        }
        for (int flags : new int[] {0, CLIENT_FIXED_NEWSTYLE | 4}) {
            try (RawNbdClient c = client()) {
                c.greeting();
                c.clientFlags(flags);
                assertTrue(c.closedByServer(), "client flags " + flags);
            }
        }
    }

    @Test
    void wholeAndPartialBlocksReadAndWriteAsAsked() throws Exception {
        try (RawNbdClient c = client()) {
            c.negotiate(false);
            byte[] two = random(2 * BLOCK, 2);
            c.request(0, CMD_WRITE, 1, BLOCK, 2 * BLOCK, two);
            assertEquals(0, c.simpleReply(0).error());
            c.request(0, CMD_READ, 2, BLOCK, 2 * BLOCK, null);
            assertArrayEquals(two, c.simpleReply(2 * BLOCK).data());

            // sixteen 256-byte writes into one block, all in flight at once: each lands, none undoes another
            long base = 64L * BLOCK;
            byte[] expect = deviceBytes(base, BLOCK);
            for (int i = 0; i < 16; i++) {
                byte[] piece = random(256, 100 + i);
                System.arraycopy(piece, 0, expect, i * 256, 256);
                c.request(0, CMD_WRITE, 100 + i, base + i * 256L, 256, piece);
            }
            for (int i = 0; i < 16; i++) {
                assertEquals(0, c.simpleReply(0).error());
            }
            assertArrayEquals(expect, deviceBytes(base, BLOCK));

            // a write across three blocks, starting and ending inside blocks, with FUA
            byte[] before = deviceBytes(200L * BLOCK, 4 * BLOCK);
            byte[] span = random(2 * BLOCK + 1000, 3);
            long at = 200L * BLOCK + 3000;
            c.request(CMD_FLAG_FUA, CMD_WRITE, 3, at, span.length, span);
            assertEquals(0, c.simpleReply(0).error());
            byte[] after = deviceBytes(200L * BLOCK, 4 * BLOCK);
            System.arraycopy(span, 0, before, 3000, span.length);
            assertArrayEquals(before, after, "the bytes around it kept");
            c.request(0, CMD_READ, 4, at + 1, 5000, null);
            assertArrayEquals(Arrays.copyOfRange(span, 1, 5001), c.simpleReply(5000).data());

            // zeroes from inside one block to inside another; trim; flush
            c.request(0, CMD_WRITE_ZEROES, 5, 200L * BLOCK + 100, 5000, null);
            assertEquals(0, c.simpleReply(0).error());
            byte[] z = deviceBytes(200L * BLOCK, 2 * BLOCK);
            for (int i = 0; i < 2 * BLOCK; i++) {
                assertEquals(i >= 100 && i < 5100 ? 0 : after[i], z[i], "byte " + i);
            }
            c.request(CMD_FLAG_NO_HOLE, CMD_WRITE_ZEROES, 6, 300L * BLOCK, 8 * BLOCK, null);
            assertEquals(0, c.simpleReply(0).error());
            c.request(0, CMD_TRIM, 7, 10, 3 * BLOCK, null);
            assertEquals(0, c.simpleReply(0).error());
            c.request(0, CMD_FLUSH, 8, 0, 0, null);
            assertEquals(0, c.simpleReply(0).error());
        }
    }

    @Test
    void errorsAreTheProtocolsAndHostileInputEndsOnlyItsConnection() throws Exception {
        try (RawNbdClient c = client(); RawNbdClient other = client()) {
            int flags = c.negotiate(true);
            assertTrue((flags & TF_SEND_DF) != 0, "DF with structured replies");
            other.negotiate(false);
            c.request(0, CMD_READ, 1, SIZE - BLOCK, 2 * BLOCK, null);
            RawNbdClient.Reply past = c.structuredReply();
            assertEquals(EINVAL, past.error());
            assertTrue(past.message().contains("past the end"), past.message());
            c.request(0, CMD_WRITE, 2, SIZE, BLOCK, new byte[BLOCK]);
            assertEquals(ENOSPC, c.structuredReply().error());
            c.request(0, CMD_WRITE_ZEROES, 3, SIZE - 10, 20, null);
            assertEquals(ENOSPC, c.structuredReply().error());
            c.request(0, 77, 4, 0, 0, null);
            assertEquals(EINVAL, c.structuredReply().error());
            c.request(CMD_FLAG_FAST_ZERO, CMD_WRITE_ZEROES, 5, 0, BLOCK, null);
            assertEquals(EINVAL, c.structuredReply().error(), "FAST_ZERO was not offered");
            c.request(0, CMD_FLUSH, 6, 5, 0, null);
            assertEquals(EINVAL, c.structuredReply().error());
            c.request(CMD_FLAG_DF, CMD_READ, 7, 0, BLOCK, null);
            assertEquals(BLOCK, c.structuredReply().data().length);

            // a bad magic: that connection ends; the other goes on
            c.send(ByteBuffer.allocate(28).putInt(0, 0x12345678));
            assertTrue(c.closedByServer());
            other.request(0, CMD_READ, 9, 0, BLOCK, null);
            assertEquals(0, other.simpleReply(BLOCK).error());
        }
    }

    @Test
    void disconnectAnswersWhatIsInFlightThenCloses() throws Exception {
        try (RawNbdClient c = client()) {
            c.negotiate(false);
            for (int i = 0; i < 8; i++) {
                c.request(0, CMD_WRITE, i, i * (long) BLOCK, BLOCK, random(BLOCK, i));
            }
            c.request(0, CMD_DISC, 99, 0, 0, null);
            for (int i = 0; i < 8; i++) {
                assertEquals(0, c.simpleReply(0).error());
            }
            assertTrue(c.closedByServer());
        }
        assertArrayEquals(random(BLOCK, 7), deviceBytes(7L * BLOCK, BLOCK));
    }

    /**
     * The CLI's arrangement: the export and the controller's queues on one group of loops, the
     * caller's. Four clients at once (spread over both loops) read back what they wrote, and
     * what they wrote is on the namespace; the controller made no loops of its own; closing the
     * server, then the controller, leaves the loops running, and a new server serves on them.
     */
    @Test
    void onTheCallersLoopsWithTheDevicesQueues() throws Exception {
        ConnectOptions options = ConnectOptions.defaults().ioQueues(2);
        io.netty.channel.EventLoopGroup loops = options.newEventLoops("test-shared");
        try {
            long hostLoopsBefore = threadsNamed("nvmeof-host");
            Controller shared = Nvmeof.connect(target.uri(), options.eventLoops(loops));
            assertEquals(hostLoopsBefore, threadsNamed("nvmeof-host"), "a controller on the caller's loops makes none");
            BlockDevice dev = shared.namespace(1);
            NbdServer s = NbdServer.builder(dev).eventLoops(loops).unixSocket(dir.resolve("shared.sock")).start();
            java.util.concurrent.ExecutorService clients = java.util.concurrent.Executors.newFixedThreadPool(4);
            try {
                java.util.List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
                for (int k = 0; k < 4; k++) {
                    int client = k;
                    done.add(clients.submit(() -> {
                        try (RawNbdClient c = new RawNbdClient(s.address())) {
                            c.negotiate(true);
                            for (int round = 0; round < 8; round++) {
                                long at = (client * 64L + round * 8L) * BLOCK;
                                byte[] data = random(8 * BLOCK, client * 100 + round);
                                c.request(0, CMD_WRITE, round, at, data.length, data);
                                assertEquals(0, c.structuredReply().error());
                                c.request(0, CMD_READ, 1000 + round, at, data.length, null);
                                assertArrayEquals(data, c.structuredReply().data());
                            }
                        }
                        return null;
                    }));
                }
                for (java.util.concurrent.Future<?> f : done) {
                    f.get(60, java.util.concurrent.TimeUnit.SECONDS);
                }
            } finally {
                clients.shutdownNow();
            }
            for (int k = 0; k < 4; k++) {
                assertArrayEquals(random(8 * BLOCK, k * 100 + 7), deviceBytes((k * 64L + 56) * BLOCK, 8 * BLOCK));
            }
            RawNbdClient idle = new RawNbdClient(s.address());
            idle.negotiate(true);
            s.close();
            assertTrue(idle.closedByServer(), "close() ends the connections on loops it does not own");
            idle.close();
            shared.close();
            assertFalse(loops.isShuttingDown(), "the caller's loops outlive the server and the controller");

            try (Controller again = Nvmeof.connect(target.uri(), ConnectOptions.defaults().ioQueues(2).eventLoops(loops));
                 NbdServer s2 = NbdServer.builder(again.namespace(1)).eventLoops(loops)
                         .unixSocket(dir.resolve("again.sock")).start();
                 RawNbdClient c = new RawNbdClient(s2.address())) {
                c.negotiate(true);
                c.request(0, CMD_READ, 1, 56L * BLOCK, 8 * BLOCK, null);
                assertArrayEquals(random(8 * BLOCK, 7), c.structuredReply().data());
            }
        } finally {
            loops.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).sync();
        }
    }

    private static long threadsNamed(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
    }

    @Test
    void aReadOnlyExportRefusesWrites() throws Exception {
        try (NbdServer ro = NbdServer.builder(disk).readOnly(true).unixSocket(dir.resolve("ro.sock")).start();
             RawNbdClient c = new RawNbdClient(ro.address())) {
            int flags = c.negotiate(false);
            assertTrue((flags & TF_READ_ONLY) != 0);
            assertFalse((flags & TF_CAN_MULTI_CONN) != 0, "multi-conn only when said");
            c.request(0, CMD_WRITE, 1, 0, BLOCK, new byte[BLOCK]);
            assertEquals(EPERM, c.simpleReply(0).error());
            c.request(0, CMD_TRIM, 2, 0, BLOCK, null);
            assertEquals(EPERM, c.simpleReply(0).error());
        }
    }

    @Test
    void whoMayConnect() throws Exception {
        Path sock = dir.resolve("nbd.sock");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(sock)));
        assertThrows(FileAlreadyExistsException.class, () -> NbdServer.builder(disk).unixSocket(sock).start());
        try (NbdServer g = NbdServer.builder(disk).unixSocket(dir.resolve("g.sock"), true).start()) {
            assertEquals("rw-rw----", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("g.sock"))));
        }
        assertFalse(Files.exists(dir.resolve("g.sock")), "removed at close");
        InetAddress here = null;
        for (java.net.NetworkInterface n : java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces())) {
            for (InetAddress a : java.util.Collections.list(n.getInetAddresses())) {
                if (!a.isLoopbackAddress() && a instanceof java.net.Inet4Address) {
                    here = a;
                }
            }
        }
        if (here != null) {
            InetSocketAddress remote = new InetSocketAddress(here, 0);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> NbdServer.builder(disk).tcp(remote, false).start());
            assertTrue(e.getMessage().contains("--allow-remote"), e.getMessage());
        }
        try (NbdServer t = NbdServer.builder(disk).tcp(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), false).start();
             RawNbdClient c = new RawNbdClient(t.address())) {
            c.negotiate(true);
            c.request(0, CMD_READ, 1, 0, BLOCK, null);
            assertEquals(BLOCK, c.structuredReply().data().length);
            assertTrue(t.uri().startsWith("nbd://127.0.0.1:"), t.uri());
        }
    }
}
