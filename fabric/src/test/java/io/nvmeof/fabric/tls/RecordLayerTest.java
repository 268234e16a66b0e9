package io.nvmeof.fabric.tls;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.nvmeof.protocol.tls.TlsPsk;
import java.io.ByteArrayOutputStream;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.bouncycastle.tls.TlsClientProtocol;
import org.junit.jupiter.api.Test;

/**
 * Our TLS 1.3 record layer after BC's handshake, between two handlers (and against BC's own
 * record layer as the host): data both ways in records of every size, with OpenSSL's and the
 * JDK's AES-GCM on either side; KeyUpdate sent every few records, and asked for; a tampered or
 * oversized record ends that connection with the alert RFC 8446 names; close_notify.
 */
class RecordLayerTest {
    static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:2d1f6f0a-6f43-4f41-9d22-55b2e1f0c0a1";
    static final String SUB = "nqn.2026-11.io.nvmeof:records";
    static final TlsPsk KEY = TlsPsk.create(new byte[32], 1);
    static final TlsPsk KEY384 = TlsPsk.create(new byte[48], 2);

    /** A host and a target channel with their handlers, bytes carried between them by hand. */
    static final class Pair {
        final TlsPskHandler hostTls;
        final TlsPskHandler targetTls;
        final EmbeddedChannel host;
        final EmbeddedChannel target;

        Pair(TlsPsk key, boolean hostJdk, boolean targetJdk, long hostUpdates, long targetUpdates) {
            hostTls = TlsPskHandler.client(key, HOST, SUB, 0, TlsPsk.Derivation.RFC8446).tuned(hostJdk, hostUpdates);
            targetTls = TlsPskHandler.server(id -> key).tuned(targetJdk, targetUpdates);
            target = new EmbeddedChannel(targetTls);
            host = new EmbeddedChannel(hostTls);
            carry();
            assertNotNull(hostTls.session(), "handshake done on the host");
            assertNotNull(targetTls.session(), "handshake done on the target");
        }

        /** Moves what each side wrote to the other until both are quiet. */
        void carry() {
            boolean moved = true;
            while (moved) {
                moved = move(host, target) | move(target, host);
            }
        }

        static boolean move(EmbeddedChannel from, EmbeddedChannel to) {
            boolean moved = false;
            ByteBuf b;
            while ((b = from.readOutbound()) != null) {
                moved = true;
                if (to.isOpen()) {
                    to.writeInbound(b);
                } else {
                    b.release();
                }
            }
            return moved;
        }

        void close() {
            host.finishAndReleaseAll();
            target.finishAndReleaseAll();
        }
    }

    static byte[] received(EmbeddedChannel c) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteBuf b;
        while ((b = c.readInbound()) != null) {
            byte[] a = new byte[b.readableBytes()];
            b.readBytes(a);
            b.release();
            out.writeBytes(a);
        }
        return out.toByteArray();
    }

    static void send(EmbeddedChannel c, byte[] data) {
        c.writeOutbound(Unpooled.directBuffer(data.length).writeBytes(data));
    }

    @Test
    void dataBothWaysWithEitherCipherOnEitherSide() {
        Random r = new Random(3);
        for (TlsPsk key : new TlsPsk[] {KEY, KEY384}) {
            for (boolean hostJdk : new boolean[] {false, true}) {
                for (boolean targetJdk : new boolean[] {false, true}) {
                    Pair p = new Pair(key, hostJdk, targetJdk, RecordLayer.KEY_UPDATE_AFTER, RecordLayer.KEY_UPDATE_AFTER);
                    try {
                        for (int length : new int[] {1, 72, 4096 + 72, 16384, 16385, 100_000}) {
                            byte[] a = new byte[length];
                            byte[] b = new byte[length];
                            r.nextBytes(a);
                            r.nextBytes(b);
                            send(p.host, a);
                            // from the heap, and a composite (neither has an address: copied, then sealed)
                            p.target.write(Unpooled.wrappedBuffer(b, 0, length / 2));
                            p.target.writeOutbound(Unpooled.wrappedBuffer(Unpooled.directBuffer(8).writeByte(b[length / 2]),
                                    Unpooled.wrappedBuffer(b, length / 2 + 1, length - length / 2 - 1)));
                            p.carry();
                            assertArrayEquals(a, received(p.target), length + " bytes host to target");
                            assertArrayEquals(b, received(p.host), length + " bytes target to host");
                        }
                        assertEquals(hostJdk || NvmeTls.openSslMissing() != null ? "the JDK" : "OpenSSL",
                                p.hostTls.cipherProvider());
                    } finally {
                        p.close();
                    }
                }
            }
        }
    }

    @Test
    void keysAreUpdatedEveryFewRecordsAndOnRequest() {
        Pair p = new Pair(KEY, false, true, 3, 5);
        try {
            Random r = new Random(5);
            for (int i = 0; i < 40; i++) {
                byte[] a = new byte[1 + r.nextInt(9000)];
                r.nextBytes(a);
                send(p.host, a);
                send(p.target, a);
                p.carry();
                assertArrayEquals(a, received(p.target));
                assertArrayEquals(a, received(p.host));
            }
            int[] host = p.hostTls.keyGenerations();
            int[] target = p.targetTls.keyGenerations();
            assertTrue(host[1] >= 13, "the host updated its key every 3 records: " + host[1]);
            assertTrue(target[1] >= 8, "the target updated its key every 5 records: " + target[1]);
            assertEquals(host[1], target[0], "the target followed each of the host's updates");
            assertEquals(target[1], host[0], "the host followed each of the target's updates");

            p.hostTls.updateKeys(true); // update_requested: the target answers with its own
            p.carry();
            assertEquals(host[1] + 1, p.targetTls.keyGenerations()[0]);
            assertEquals(target[1] + 1, p.targetTls.keyGenerations()[1], "the target updated its key on request");
            assertEquals(target[1] + 1, p.hostTls.keyGenerations()[0]);
            send(p.target, new byte[] {1, 2, 3});
            p.carry();
            assertArrayEquals(new byte[] {1, 2, 3}, received(p.host));
        } finally {
            p.close();
        }
    }

    @Test
    void bouncyCastlesRecordLayerReadsOursAndItsKeyUpdates() throws Exception {
        TlsPskHandler server = TlsPskHandler.server(id -> KEY).tuned(false, 4);
        EmbeddedChannel target = new EmbeddedChannel(server);
        TlsClientProtocol bc = new TlsClientProtocol();
        bc.connect(NvmeTls.client(KEY, HOST, SUB, 0, TlsPsk.Derivation.RFC8446));
        try {
            Random r = new Random(9);
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            ByteArrayOutputStream sent = new ByteArrayOutputStream();
            for (int i = 0; i < 30; i++) {
                bcToTarget(bc, target);
                targetToBc(target, bc, got);
                if (server.session() != null) {
                    byte[] a = new byte[1 + r.nextInt(20000)];
                    r.nextBytes(a);
                    sent.writeBytes(a);
                    send(target, a);
                    bc.writeApplicationData(a, 0, a.length);
                }
            }
            bcToTarget(bc, target);
            targetToBc(target, bc, got);
            assertTrue(server.keyGenerations()[1] >= 5, "the target updated its key: " + server.keyGenerations()[1]);
            assertArrayEquals(sent.toByteArray(), got.toByteArray(), "BC read every record across our KeyUpdates");
            assertArrayEquals(sent.toByteArray(), received(target), "we read every record BC sealed");
        } finally {
            target.finishAndReleaseAll();
        }
    }

    private static void bcToTarget(TlsClientProtocol bc, EmbeddedChannel target) {
        int n;
        while ((n = bc.getAvailableOutputBytes()) > 0) {
            byte[] b = new byte[n];
            bc.readOutput(b, 0, n);
            target.writeInbound(Unpooled.wrappedBuffer(b));
        }
    }

    private static void targetToBc(EmbeddedChannel target, TlsClientProtocol bc, ByteArrayOutputStream got)
            throws java.io.IOException {
        ByteBuf b;
        while ((b = target.readOutbound()) != null) {
            byte[] a = new byte[b.readableBytes()];
            b.readBytes(a);
            b.release();
            bc.offerInput(a);
        }
        int n;
        while ((n = bc.getAvailableInputBytes()) > 0) {
            byte[] a = new byte[n];
            bc.readInput(a, 0, n);
            got.writeBytes(a);
        }
    }

    /** What the handler before it reports to the end of {@code c}'s pipeline. */
    private static AtomicReference<Throwable> errors(EmbeddedChannel c) {
        AtomicReference<Throwable> error = new AtomicReference<>();
        c.pipeline().addLast(new io.netty.channel.ChannelInboundHandlerAdapter() {
            @Override
            public void exceptionCaught(io.netty.channel.ChannelHandlerContext ctx, Throwable cause) {
                error.set(cause);
            }
        });
        return error;
    }

    @Test
    void aTamperedRecordEndsTheConnectionWithBadRecordMac() {
        Pair p = new Pair(KEY, false, false, RecordLayer.KEY_UPDATE_AFTER, RecordLayer.KEY_UPDATE_AFTER);
        AtomicReference<Throwable> hostError = errors(p.host);
        try {
            send(p.host, new byte[4096]);
            ByteBuf record = p.host.readOutbound();
            record.setByte(record.readerIndex() + 100, record.getByte(record.readerIndex() + 100) ^ 0x40);
            p.target.writeInbound(record);
            assertFalse(p.target.isOpen(), "the target closed the connection");
            assertNull(p.target.readInbound(), "nothing was delivered");
            p.carry();
            assertNotNull(hostError.get(), "the host was told");
            assertTrue(hostError.get().getMessage().contains("bad_record_mac"), hostError.get().getMessage());
        } finally {
            p.close();
        }
    }

    @Test
    void anOversizedRecordIsRefusedWithRecordOverflow() {
        Pair p = new Pair(KEY, false, false, RecordLayer.KEY_UPDATE_AFTER, RecordLayer.KEY_UPDATE_AFTER);
        AtomicReference<Throwable> hostError = errors(p.host);
        try {
            p.target.writeInbound(Unpooled.wrappedBuffer(new byte[] {23, 3, 3, (byte) 0x41, 1}));
            assertFalse(p.target.isOpen());
            p.carry();
            assertTrue(hostError.get().getMessage().contains("record_overflow"), hostError.get().getMessage());
        } finally {
            p.close();
        }
    }

    @Test
    void closeNotifyClosesThePeerToo() {
        Pair p = new Pair(KEY, false, false, RecordLayer.KEY_UPDATE_AFTER, RecordLayer.KEY_UPDATE_AFTER);
        try {
            send(p.host, new byte[] {7});
            p.host.close();
            p.carry();
            assertArrayEquals(new byte[] {7}, received(p.target), "data before close_notify arrives");
            assertFalse(p.target.isOpen(), "close_notify closed the target's side");
        } finally {
            p.close();
        }
    }
}
