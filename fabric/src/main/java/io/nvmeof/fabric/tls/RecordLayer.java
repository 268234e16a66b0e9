package io.nvmeof.fabric.tls;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.protocol.tls.Hkdf;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Arrays;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.ContentType;
import org.bouncycastle.tls.HandshakeType;
import org.bouncycastle.tls.crypto.CryptoHashAlgorithm;
import org.bouncycastle.tls.crypto.TlsCryptoUtils;
import org.bouncycastle.tls.crypto.TlsSecret;

/**
 * TLS 1.3's record layer for application traffic, ours once Bouncy Castle has finished the
 * handshake (RFC 8446, 5): records sealed with AES-GCM under the application traffic keys,
 * sequence numbers per direction, KeyUpdate both ways (7.2), alerts, and post-handshake messages
 * (a NewSessionTicket is ignored: we never resume). Inbound records are opened into pooled
 * buffers that go on to the PDU reader, straight from the socket's buffer when a record arrived
 * whole; the buffers written out are held until a flush or 16 KiB of them, and sealed from where
 * they are into a pooled record buffer. Nothing on the heap is allocated per record with
 * OpenSSL's cipher.
 *
 * <p>A sending key is replaced by a KeyUpdate after {@link #keyUpdateAfter} records, well inside
 * AES-GCM's limit of about 2^24.5 records per key (5.5). Used on the channel's event loop only.
 */
final class RecordLayer {
    /** Records sealed under one key before we update it (RFC 8446, 5.5, bounds AES-GCM at 2^24.5). */
    static final long KEY_UPDATE_AFTER = 1L << 23;
    private static final int MAX_CIPHERTEXT = NvmeTls.RECORD + 256;
    private static final int MAX_HANDSHAKE = 1 << 16;

    /** A fatal alert to send (or received, {@code sent} false), and why. */
    static final class Alert extends IOException {
        final short description;
        final boolean sent;

        Alert(short description, boolean sent, String message) {
            super(message);
            this.description = description;
            this.sent = sent;
        }
    }

    /** One direction: its cipher, the secret of its next generation, and its sequence number. */
    private static final class Direction {
        RecordCipher cipher;
        byte[] secret;
        long seq;
        int generation;
    }

    private final DhchapHash hash;
    private final int keyLength;
    private final boolean jdk;
    private final long keyUpdateAfter;
    private final Direction in = new Direction();
    private final Direction out = new Direction();
    private ByteBuf assembly;
    /** What the next records will carry, not yet sealed. */
    private final ArrayDeque<ByteBuf> pending = new ArrayDeque<>();
    private int pendingBytes;
    private byte[] handshake = new byte[64];
    private int handshakeLength;
    private boolean closeNotified;

    /** A direction's first keys: its traffic key and IV, and the secret of its next generation. */
    record Keys(byte[] key, byte[] iv, byte[] next) {
        /** The keys of a traffic secret Bouncy Castle holds, derived by BC without taking the secret from it. */
        static Keys of(TlsSecret secret, DhchapHash hash) throws IOException {
            int h = hash == DhchapHash.SHA384 ? CryptoHashAlgorithm.sha384 : CryptoHashAlgorithm.sha256;
            byte[] none = new byte[0];
            return new Keys(TlsCryptoUtils.hkdfExpandLabel(secret, h, "key", none, keyLength(hash)).extract(),
                    TlsCryptoUtils.hkdfExpandLabel(secret, h, "iv", none, 12).extract(),
                    TlsCryptoUtils.hkdfExpandLabel(secret, h, "traffic upd", none, hash.length).extract());
        }
    }

    /**
     * The layer for the application traffic keys of the handshake: {@code read} the peer's,
     * {@code write} ours. {@code jdk} forces the JDK's AES-GCM.
     */
    RecordLayer(DhchapHash hash, Keys read, Keys write, boolean jdk, long keyUpdateAfter) {
        this.hash = hash;
        this.keyLength = keyLength(hash);
        this.jdk = jdk;
        this.keyUpdateAfter = keyUpdateAfter;
        install(in, read, false);
        install(out, write, true);
    }

    private static int keyLength(DhchapHash hash) {
        return hash == DhchapHash.SHA384 ? 32 : 16;
    }

    /** Which AES-GCM seals and opens the records, for logs. */
    String provider() {
        return out.cipher.provider();
    }

    /** The next generation of a direction's keys (7.2): from the secret its last generation left. */
    private void update(Direction d, boolean encrypt) {
        byte[] none = new byte[0];
        byte[] secret = d.secret;
        install(d, new Keys(Hkdf.expandLabel(hash, secret, "key", none, keyLength),
                Hkdf.expandLabel(hash, secret, "iv", none, 12),
                Hkdf.expandLabel(hash, secret, "traffic upd", none, hash.length)), encrypt);
        Arrays.fill(secret, (byte) 0);
        d.generation++;
    }

    private void install(Direction d, Keys k, boolean encrypt) {
        RecordCipher c = RecordCipher.create(encrypt, k.key(), k.iv(), jdk);
        Arrays.fill(k.key(), (byte) 0);
        if (d.cipher != null) {
            d.cipher.close();
        }
        d.cipher = c;
        d.seq = 0;
        d.secret = k.next();
    }

    /** How many times the peer and we have updated our keys. */
    int[] generations() {
        return new int[] {in.generation, out.generation};
    }

    /** Whether the peer has sent close_notify. */
    boolean closeNotified() {
        return closeNotified;
    }

    /** Opens what {@code bytes} holds (all of it is consumed): application data goes on to the next handler. */
    void read(ChannelHandlerContext ctx, ByteBuf bytes) throws Alert {
        while (bytes.isReadable() && !closeNotified) {
            if ((assembly == null || assembly.writerIndex() == 0) && bytes.readableBytes() >= RecordCipher.HEADER) {
                int at = bytes.readerIndex();
                int length = header(bytes, at);
                if (bytes.readableBytes() >= RecordCipher.HEADER + length
                        && (bytes.hasMemoryAddress() || !in.cipher.needsAddress())) {
                    open(ctx, bytes, at, length);
                    bytes.skipBytes(RecordCipher.HEADER + length);
                    continue;
                }
            }
            if (assembly == null) {
                assembly = ctx.alloc().directBuffer(RecordCipher.HEADER + MAX_CIPHERTEXT);
            }
            int have = assembly.writerIndex();
            int need = have < RecordCipher.HEADER ? RecordCipher.HEADER - have
                    : RecordCipher.HEADER + assembly.getUnsignedShort(3) - have;
            int n = Math.min(need, bytes.readableBytes());
            assembly.writeBytes(bytes, n);
            if (have < RecordCipher.HEADER && assembly.writerIndex() == RecordCipher.HEADER) {
                header(assembly, 0);
            } else if (n == need) {
                open(ctx, assembly, 0, assembly.getUnsignedShort(3));
                assembly.clear();
            }
        }
    }

    /** Checks a record header; returns its length. */
    private static int header(ByteBuf b, int at) throws Alert {
        int type = b.getUnsignedByte(at);
        int length = b.getUnsignedShort(at + 3);
        if (type != ContentType.application_data) {
            throw new Alert(AlertDescription.unexpected_message, true, "a record of content type " + type
                    + (type == ContentType.change_cipher_spec ? " (change_cipher_spec)" : "") + " after the handshake");
        }
        if (length > MAX_CIPHERTEXT) {
            throw new Alert(AlertDescription.record_overflow, true, "a record of " + length + " bytes (at most "
                    + MAX_CIPHERTEXT + ")");
        }
        if (length < RecordCipher.TAG + 1) {
            throw new Alert(AlertDescription.decode_error, true, "a record of " + length + " bytes is too short");
        }
        return length;
    }

    private void open(ChannelHandlerContext ctx, ByteBuf src, int at, int length) throws Alert {
        int data = length - RecordCipher.TAG;
        ByteBuf plain = ctx.alloc().directBuffer(data);
        boolean delivered = false;
        try {
            if (!in.cipher.open(src, at, length, plain, in.seq++)) {
                throw new Alert(AlertDescription.bad_record_mac, true, "a record failed authentication"
                        + " (record " + (in.seq - 1) + " under key generation " + in.generation + ")");
            }
            int end = data - 1;
            while (end >= 0 && plain.getByte(end) == 0) {
                end--;
            }
            if (end < 0) {
                throw new Alert(AlertDescription.unexpected_message, true, "a record with no content type");
            }
            if (end > NvmeTls.RECORD) {
                throw new Alert(AlertDescription.record_overflow, true, "a record with " + end + " bytes of plaintext");
            }
            int type = plain.getUnsignedByte(end);
            plain.writerIndex(end);
            if (type != ContentType.handshake && handshakeLength > 0) {
                throw new Alert(AlertDescription.unexpected_message, true, "a handshake message split around other records");
            }
            switch (type) {
                case ContentType.application_data -> {
                    if (end > 0) {
                        delivered = true;
                        ctx.fireChannelRead(plain);
                    }
                }
                case ContentType.alert -> alert(plain);
                case ContentType.handshake -> handshake(ctx, plain);
                default -> throw new Alert(AlertDescription.unexpected_message, true, "a record of inner content type "
                        + type);
            }
        } finally {
            if (!delivered) {
                plain.release();
            }
        }
    }

    private void alert(ByteBuf plain) throws Alert {
        if (plain.readableBytes() != 2) {
            throw new Alert(AlertDescription.decode_error, true, "an alert of " + plain.readableBytes() + " bytes");
        }
        short description = plain.getUnsignedByte(1);
        if (description == AlertDescription.close_notify) {
            closeNotified = true;
            return;
        }
        if (description == AlertDescription.user_canceled) {
            return; // a warning; close_notify follows (6.1)
        }
        throw new Alert(description, false, "received alert " + NvmeTls.alert(description));
    }

    private void handshake(ChannelHandlerContext ctx, ByteBuf plain) throws Alert {
        int n = plain.readableBytes();
        if (handshakeLength + n > MAX_HANDSHAKE + 4) {
            throw new Alert(AlertDescription.unexpected_message, true, "a post-handshake message over 64 KiB");
        }
        if (handshakeLength + n > handshake.length) {
            handshake = Arrays.copyOf(handshake, Math.max(handshakeLength + n, handshake.length * 2));
        }
        plain.getBytes(plain.readerIndex(), handshake, handshakeLength, n);
        handshakeLength += n;
        int at = 0;
        while (handshakeLength - at >= 4) {
            int type = handshake[at] & 0xff;
            int length = (handshake[at + 1] & 0xff) << 16 | (handshake[at + 2] & 0xff) << 8 | handshake[at + 3] & 0xff;
            if (length > MAX_HANDSHAKE) {
                throw new Alert(AlertDescription.unexpected_message, true, "a post-handshake message of " + length + " bytes");
            }
            if (handshakeLength - at < 4 + length) {
                break;
            }
            if (type == HandshakeType.key_update) {
                if (length != 1 || (handshake[at + 4] & 0xff) > 1) {
                    throw new Alert(AlertDescription.decode_error, true, "a malformed KeyUpdate");
                }
                if (handshakeLength - at != 5) { // 5.1: a key change ends its record
                    throw new Alert(AlertDescription.unexpected_message, true, "data after a KeyUpdate in its record");
                }
                boolean requested = handshake[at + 4] == 1;
                update(in, false);
                if (requested) {
                    updateWriteKey(ctx);
                    ctx.flush();
                }
            } else if (type != HandshakeType.new_session_ticket) {
                throw new Alert(AlertDescription.unexpected_message, true, "handshake message " + type
                        + " after the handshake");
            }
            at += 4 + length;
        }
        System.arraycopy(handshake, at, handshake, 0, handshakeLength - at);
        handshakeLength -= at;
    }

    /**
     * Takes {@code bytes} (and its ownership) for the records to come: with OpenSSL's cipher the
     * buffers are held until their record is sealed, and encrypted from where they are into the
     * record (no copy first); with the JDK's they are copied into the record and sealed in place.
     * A full record (16 KiB) is sealed and written at once.
     */
    void write(ChannelHandlerContext ctx, ByteBuf bytes) {
        if (!bytes.isReadable()) {
            bytes.release();
            return;
        }
        pending.add(bytes);
        pendingBytes += bytes.readableBytes();
        while (pendingBytes >= NvmeTls.RECORD) {
            sealPending(ctx, NvmeTls.RECORD);
        }
    }

    /** Seals and writes what has been gathered (the caller flushes). */
    void flush(ChannelHandlerContext ctx) {
        while (pendingBytes > 0) {
            sealPending(ctx, Math.min(pendingBytes, NvmeTls.RECORD));
        }
    }

    /** Seals {@code n} gathered bytes into one application data record. */
    private void sealPending(ChannelHandlerContext ctx, int n) {
        seal(ctx, ContentType.application_data, n, null);
        if (out.seq >= keyUpdateAfter) {
            // 7.2: our key is worn; the peer keeps its own (update_not_requested)
            updateWriteKey(ctx);
        }
    }

    /**
     * Seals and writes one record of content {@code type}: its {@code n} bytes are {@code inline}
     * (a control message) or, if that is null, the next {@code n} gathered bytes, sealed from the
     * buffers that hold them, each released once sealed.
     */
    private void seal(ChannelHandlerContext ctx, short type, int n, int[] inline) {
        int size = RecordCipher.HEADER + n + 1 + RecordCipher.TAG;
        ByteBuf r = ctx.alloc().directBuffer(size);
        try {
            writeHeader(r, n + 1);
            RecordCipher c = out.cipher;
            c.begin(r, 0, size, out.seq++);
            int at = RecordCipher.HEADER;
            if (inline != null) {
                for (int b : inline) {
                    r.setByte(at++, b);
                }
                c.update(r, RecordCipher.HEADER, n, r, RecordCipher.HEADER);
            } else {
                for (int left = n; left > 0; ) {
                    ByteBuf piece = pending.peek();
                    int k = Math.min(left, piece.readableBytes());
                    c.update(piece, piece.readerIndex(), k, r, at);
                    piece.skipBytes(k);
                    if (!piece.isReadable()) {
                        pending.poll().release();
                    }
                    at += k;
                    left -= k;
                }
                pendingBytes -= n;
            }
            r.setByte(at, type);
            c.update(r, at, 1, r, at);
            c.finish(r, at + 1);
        } catch (RuntimeException e) {
            r.release();
            throw e;
        }
        r.writerIndex(size);
        ctx.write(r, ctx.voidPromise());
    }

    private static void writeHeader(ByteBuf r, int inner) {
        r.setByte(0, ContentType.application_data);
        r.setShort(1, 0x0303);
        r.setShort(3, inner + RecordCipher.TAG);
    }

    /** Writes a fatal alert, or close_notify, after what has been gathered (the caller flushes). */
    void alert(ChannelHandlerContext ctx, short description) {
        control(ctx, ContentType.alert, description == AlertDescription.close_notify ? 1 : 2, description);
    }

    /** A record of its own for a control message (an alert, a KeyUpdate), after the data gathered. */
    private void control(ChannelHandlerContext ctx, short type, int... bytes) {
        flush(ctx);
        seal(ctx, type, bytes.length, bytes);
    }

    private void updateWriteKey(ChannelHandlerContext ctx) {
        updateWriteKey(ctx, false);
    }

    /** Sends a KeyUpdate and takes our next key; {@code request}: the peer is asked to update its own too (7.2). */
    void updateWriteKey(ChannelHandlerContext ctx, boolean request) {
        control(ctx, ContentType.handshake, HandshakeType.key_update, 0, 0, 1, request ? 1 : 0);
        update(out, true);
    }

    /** Frees the buffers and keys (the channel is gone or the layer failed). */
    void release() {
        if (assembly != null) {
            assembly.release();
            assembly = null;
        }
        ByteBuf b;
        while ((b = pending.poll()) != null) {
            b.release();
        }
        pendingBytes = 0;
        in.cipher.close();
        out.cipher.close();
        Arrays.fill(in.secret, (byte) 0);
        Arrays.fill(out.secret, (byte) 0);
    }
}
