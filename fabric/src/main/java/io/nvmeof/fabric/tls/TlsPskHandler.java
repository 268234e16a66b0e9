package io.nvmeof.fabric.tls;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.util.ReferenceCountUtil;
import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.protocol.tls.ClientHelloPsk;
import io.nvmeof.protocol.tls.PskIdentity;
import io.nvmeof.protocol.tls.TlsPsk;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.TlsClientProtocol;
import org.bouncycastle.tls.TlsProtocol;
import org.bouncycastle.tls.TlsServerProtocol;

/**
 * NVMe/TCP's secure channel in a Netty pipeline: TLS 1.3 with an external PSK (NVMe/TCP 1.1,
 * 3.6.1). Bouncy Castle's protocol engine, driven without blocking and fed one record at a time,
 * does the handshake; from its end on, our own {@link RecordLayer} protects the application
 * traffic with the keys BC derived (OpenSSL's AES-GCM where libcrypto is present, on pooled
 * direct buffers, nothing allocated per record). Inbound records are opened into plain bytes for
 * the PDU reader behind this handler; what that reader writes is gathered until a flush and
 * sealed into as few records as fit (16 KiB of plaintext each). Writes made before the handshake
 * is done wait for it. On a target, the PSK for the identity a
 * host names comes from {@link Keys}; the ClientHello's binder tells which of the two label
 * encodings the host derived it with (RFC 8446's, or libnvme's older one), so both work. A
 * failed handshake is logged with the reason and ends the connection; on a host it also fails
 * the connection with an {@link IOException} that says why.
 */
public final class TlsPskHandler extends ChannelDuplexHandler {
    private static final System.Logger LOG = System.getLogger(TlsPskHandler.class.getName());
    private static final int RECORD = NvmeTls.RECORD;

    /** A target's keys: the configured PSK of the host and subsystem an identity names, or null. */
    public interface Keys {
        TlsPsk configured(PskIdentity identity);
    }

    /** The TLS PSK picked for an identity. */
    record Selected(byte[] psk, DhchapHash hash) {
    }

    private final boolean client;
    private final TlsProtocol protocol;
    private final NvmeTlsClient clientPeer;
    private final NvmeTlsServer serverPeer;
    private final Keys keys;
    private ChannelHandlerContext ctx;
    private boolean started;
    private boolean done;
    private boolean justDone;
    private boolean failed;
    private boolean closed;
    private TlsSession session;
    private String failure;
    private PskIdentity offered;
    private String derivation;
    private final ArrayDeque<Object> pending = new ArrayDeque<>();
    /** One handshake record at a time, as BC gets them. */
    private byte[] in = new byte[5 + RECORD + 256];
    private int inLength;
    private RecordLayer records;
    private boolean jdkCipher;
    private long keyUpdateAfter = RecordLayer.KEY_UPDATE_AFTER;
    private final List<ChannelPromise> promises = new ArrayList<>();
    /** A target's first record is the host's ClientHello, which it reads itself too (its binder check). */
    private boolean first;
    private ClientHelloPsk hello;

    private TlsPskHandler(boolean client, TlsPsk key, String hostNqn, String subNqn, int version, TlsPsk.Derivation d,
                          Keys keys) {
        this.client = client;
        this.keys = keys;
        if (client) {
            String identity = key.identity(version, hostNqn, subNqn, d);
            byte[] psk = key.tlsPsk(PskIdentity.parse(identity), d);
            this.clientPeer = new NvmeTlsClient(identity, psk, key.cipherHash(), this, false);
            this.serverPeer = null;
            this.protocol = new TlsClientProtocol();
        } else {
            this.clientPeer = null;
            this.serverPeer = new NvmeTlsServer(this);
            this.protocol = new TlsServerProtocol();
            this.first = true;
        }
    }

    /** For tests: the JDK's AES-GCM instead of OpenSSL's, and our KeyUpdate after {@code records} records. */
    TlsPskHandler tuned(boolean jdk, long records) {
        this.jdkCipher = jdk;
        this.keyUpdateAfter = records;
        return this;
    }

    /** For tests: how many times the peer and we updated our keys, or null before the handshake's end. */
    int[] keyGenerations() {
        return records == null ? null : records.generations();
    }

    /** For tests: sends a KeyUpdate now, asking the peer to update its key too if {@code request}. */
    void updateKeys(boolean request) {
        records.updateWriteKey(ctx, request);
        ctx.flush();
    }

    /** Which AES-GCM protects the records (OpenSSL or the JDK), or null before the handshake's end. */
    public String cipherProvider() {
        return records == null ? null : records.provider();
    }

    /** A host's handler: {@code key}'s TLS PSK for the identity of {@code version} 0 or 1. */
    public static TlsPskHandler client(TlsPsk key, String hostNqn, String subNqn, int version, TlsPsk.Derivation d) {
        return new TlsPskHandler(true, key, hostNqn, subNqn, version, d, null);
    }

    /**
     * A target's handler, its keys from {@code keys}. It takes the PSK with an (EC)DHE exchange
     * only (psk_dhe_ke, as tlshd offers it), so that a PSK that leaks later does not open
     * recorded traffic; a host offering the PSK alone (psk_ke) is refused.
     */
    public static TlsPskHandler server(Keys keys) {
        return new TlsPskHandler(false, null, null, null, 0, null, keys);
    }

    /** The finished handshake's outcome, or null before. */
    public TlsSession session() {
        return session;
    }

    /** The identity the peer offered and we found a key for (a target's view), or null. */
    public PskIdentity identity() {
        return offered;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        this.ctx = ctx;
        if (ctx.channel().isActive()) {
            start();
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        start();
        ctx.fireChannelActive();
    }

    private void start() {
        if (started) {
            return;
        }
        started = true;
        try {
            if (client) {
                ((TlsClientProtocol) protocol).connect(clientPeer);
            } else {
                ((TlsServerProtocol) protocol).accept(serverPeer);
            }
            drain();
            ctx.flush();
        } catch (IOException e) {
            fail(e);
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (!(msg instanceof ByteBuf buf)) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            while (buf.isReadable() && !failed) {
                if (records != null) {
                    records.read(ctx, buf);
                    if (records.closeNotified()) {
                        ctx.close(); // answered with our close_notify
                    }
                    break;
                }
                handshakeRecord(buf);
            }
        } catch (IOException e) { // a RecordLayer.Alert among them
            fail(e);
        } finally {
            buf.release();
        }
        if (justDone) {
            justDone = false;
            ctx.fireUserEventTriggered(session);
            Object p;
            while ((p = pending.poll()) != null) {
                write(ctx, p, (ChannelPromise) pending.poll());
            }
            flush(ctx);
        } else if (!failed) {
            ctx.flush(); // handshake messages
        }
    }

    /** Gathers a handshake record from {@code buf}; a whole one goes to BC. */
    private void handshakeRecord(ByteBuf buf) throws IOException {
        int n = Math.min(buf.readableBytes(), inLength < 5 ? 5 - inLength : 5 + length(in) - inLength);
        buf.readBytes(in, inLength, n);
        inLength += n;
        if (inLength < 5) {
            return;
        }
        int total = 5 + length(in);
        if (total > in.length) {
            throw new IOException("a handshake record of " + (total - 5) + " bytes, over TLS's limit");
        }
        if (inLength < total) {
            return;
        }
        inLength = 0;
        if (first) {
            first = false;
            probe(total);
        }
        protocol.offerInput(in, 0, total); // BC yields no application data: its end switches to our records
        drain();
    }

    private static int length(byte[] header) {
        return (header[3] & 0xff) << 8 | header[4] & 0xff;
    }

    /** A target reads the host's ClientHello (its first record) too, to check its binder. */
    private void probe(int total) {
        hello = ClientHelloPsk.parse(ByteBuffer.wrap(in, 0, total));
        if (hello != null && !hello.offersPskDheKe()) {
            LOG.log(System.Logger.Level.WARNING, "{0} offers its TLS PSK only without an (EC)DHE exchange (psk_ke);"
                    + " the target takes psk_dhe_ke only, and the handshake fails", ctx.channel().remoteAddress());
        }
        PskIdentity id = hello == null || hello.identities().isEmpty() ? null : PskIdentity.parse(hello.identities().get(0));
        if (id != null) {
            serverPeer.pskHash(id.cipher() == 2 ? DhchapHash.SHA384 : DhchapHash.SHA256);
        }
    }

    /** Records the protocol produced go to the socket (flushed by the caller). */
    private void drain() {
        int n;
        while ((n = protocol.getAvailableOutputBytes()) > 0) {
            ByteBuf b = ctx.alloc().directBuffer(n);
            int got = protocol.readOutput(b.internalNioBuffer(0, n), n);
            b.writerIndex(got);
            ctx.write(b, ctx.voidPromise());
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (!(msg instanceof ByteBuf buf)) {
            ctx.write(msg, promise);
            return;
        }
        if (failed) {
            buf.release();
            promise.tryFailure(new IOException("TLS failed: " + failure));
            return;
        }
        if (!done) {
            pending.add(buf);
            pending.add(promise);
            return;
        }
        try {
            records.write(ctx, buf); // takes the buffer
            if (!promise.isVoid()) {
                promises.add(promise);
            }
        } catch (RuntimeException e) {
            IOException error = new IOException("TLS could not seal a record: " + e.getMessage(), e);
            promise.tryFailure(error);
            fail(error);
        }
    }

    @Override
    public void flush(ChannelHandlerContext ctx) throws Exception {
        if (done && !failed) {
            try {
                records.flush(ctx);
            } catch (RuntimeException e) {
                fail(new IOException("TLS could not seal a record: " + e.getMessage(), e));
                return;
            }
            for (int i = 0; i < promises.size(); i++) { // no iterator: nothing allocated per flush
                promises.get(i).trySuccess();
            }
            promises.clear();
        }
        ctx.flush();
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) throws Exception {
        if (done && !failed && !closed) {
            closed = true;
            try {
                records.alert(ctx, AlertDescription.close_notify);
                ctx.flush();
            } catch (RuntimeException ignored) {
                // closing anyway
            }
        }
        ctx.close(promise);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (records != null) {
            records.release();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (!done && !failed && started) {
            // the peer went away in the middle of the handshake: usually a key it does not accept
            failed = true;
            String why = failure != null ? failure : "the peer closed the connection before the handshake finished"
                    + (client ? " (it holds another PSK, or none, for this identity?)" : "");
            IOException error = new IOException("TLS handshake with " + ctx.channel().remoteAddress() + " failed: " + why);
            dropPending(error);
            if (client) {
                ctx.fireExceptionCaught(error);
            } else {
                LOG.log(System.Logger.Level.INFO, "{0}", error.getMessage());
            }
        } else {
            dropPending(new IOException("connection closed"));
        }
        ctx.fireChannelInactive();
    }

    private void dropPending(IOException why) {
        Object p;
        while ((p = pending.poll()) != null) {
            ReferenceCountUtil.release(p);
            ((ChannelPromise) pending.poll()).tryFailure(why);
        }
        for (ChannelPromise pr : promises) {
            pr.tryFailure(why);
        }
        promises.clear();
    }

    /**
     * Called by the peer (inside offerInput) when the handshake is done, with the keys of the
     * application traffic: from here on the records are ours.
     */
    void handshakeComplete(TlsSession s, DhchapHash hash, RecordLayer.Keys clientKeys, RecordLayer.Keys serverKeys) {
        done = true;
        justDone = true;
        records = new RecordLayer(hash, client ? serverKeys : clientKeys, client ? clientKeys : serverKeys, jdkCipher,
                keyUpdateAfter);
        in = null; // handshake records only
        session = s != null ? s : new TlsSession(offered != null ? offered.text() : "?", serverPeer.suite(), derivation);
        if (!client) {
            LOG.log(System.Logger.Level.INFO, "TLS 1.3 with {0}: {1}, PSK identity {2}{3}", ctx.channel().remoteAddress(),
                    session.cipherSuite(), session.identity(), derivation == null ? ""
                            : derivation.equals("compat") ? " (PSK derived with libnvme's older HKDF labels)" : "");
        }
    }

    void alert(boolean raised, short description, String message) {
        if (failure == null && description != 0) { // close_notify is not a failure
            failure = (raised ? "sent alert " : "received alert ") + NvmeTls.alert(description)
                    + (message != null ? ": " + message : "");
        }
    }

    /** A target picks the key for an identity a host offers: null if it has none. */
    Selected select(String identityText, int index) {
        PskIdentity id = PskIdentity.parse(identityText);
        if (id == null) {
            failure = "PSK identity '" + identityText + "' is not an NVMe/TCP one";
            return null;
        }
        TlsPsk key = keys.configured(id);
        if (key == null) {
            failure = "no TLS PSK is configured for host " + id.hostNqn() + " and " + id.subNqn();
            return null;
        }
        if (key.cipherId() != id.cipher()) {
            failure = "host " + id.hostNqn() + " offers a SHA-" + (id.cipher() == 2 ? 384 : 256)
                    + " PSK; the configured one is SHA-" + (key.cipherId() == 2 ? 384 : 256);
            return null;
        }
        offered = id;
        serverPeer.pskHash(key.cipherHash());
        byte[] fallback = null;
        for (TlsPsk.Derivation d : TlsPsk.Derivation.values()) {
            if (!key.digestMatches(id, d)) {
                continue;
            }
            byte[] psk = key.tlsPsk(id, d);
            if (fallback == null) {
                fallback = psk;
            }
            if (hello != null && index < hello.identities().size() && hello.binderMatches(index, psk, key.cipherHash())) {
                derivation = d == TlsPsk.Derivation.RFC8446 ? "rfc8446" : "compat";
                return new Selected(psk, key.cipherHash());
            }
        }
        failure = "host " + id.hostNqn() + " holds another TLS PSK than the one configured for it";
        return fallback == null ? null : new Selected(fallback, key.cipherHash());
    }

    private void fail(IOException e) {
        if (failed) {
            return;
        }
        failed = true;
        try {
            if (records != null) {
                if (e instanceof RecordLayer.Alert a && a.sent) {
                    records.alert(ctx, a.description);
                }
            } else {
                drain(); // our alert, if the protocol made one
            }
            ctx.flush();
        } catch (RuntimeException ignored) {
            // the connection is going anyway
        }
        String why = failure != null ? failure : e.getMessage();
        IOException error = new IOException("TLS " + (done ? "" : "handshake ") + "with " + ctx.channel().remoteAddress()
                + " failed: " + why, e);
        dropPending(error);
        if (client) {
            ctx.fireExceptionCaught(error);
        } else {
            LOG.log(System.Logger.Level.WARNING, "{0}", error.getMessage());
        }
        ctx.close();
    }
}
