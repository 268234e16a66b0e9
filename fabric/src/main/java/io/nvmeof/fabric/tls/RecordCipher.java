package io.nvmeof.fabric.tls;

import io.netty.buffer.ByteBuf;

/**
 * The AES-GCM of one direction of a TLS 1.3 connection under one traffic key (RFC 8446, 5.2
 * and 5.3): a record's nonce is the key's IV with the record's sequence number XORed into its
 * last eight bytes, its additional data the five-byte record header. A record is sealed piece
 * by piece into its buffer (begin, update, finish: from the buffers that hold the plaintext, or in
 * place) and opened into a buffer of its own. Where the system's libcrypto can be loaded the work is
 * OpenSSL's ({@link OpenSslGcm}: AES-NI and carry-less multiply, on the buffers' own memory,
 * nothing allocated per record); elsewhere the JDK's AES-GCM does it ({@link JdkGcm}: about a
 * kilobyte of garbage per record, as its engine is made anew for each nonce). Used on one event
 * loop only.
 */
abstract class RecordCipher implements AutoCloseable {
    /** Bytes of the authentication tag. */
    static final int TAG = 16;
    /** Bytes of the record header, the additional data. */
    static final int HEADER = 5;

    final long ivHigh;
    final long ivLow;

    RecordCipher(byte[] iv) {
        if (iv.length != 12) {
            throw new IllegalArgumentException("TLS 1.3 AES-GCM IVs are 12 bytes");
        }
        ivHigh = (iv[0] & 0xffL) << 24 | (iv[1] & 0xffL) << 16 | (iv[2] & 0xffL) << 8 | iv[3] & 0xffL;
        long low = 0;
        for (int i = 4; i < 12; i++) {
            low = low << 8 | iv[i] & 0xff;
        }
        ivLow = low;
    }

    /**
     * The cipher for {@code key} (16 bytes for AES-128, 32 for AES-256) and {@code iv}, sealing
     * if {@code encrypt}, else opening. OpenSSL's unless {@code jdk} or libcrypto is missing.
     */
    static RecordCipher create(boolean encrypt, byte[] key, byte[] iv, boolean jdk) {
        if (!jdk && OpenSslGcm.available()) {
            return new OpenSslGcm(encrypt, key, iv);
        }
        return new JdkGcm(encrypt, key, iv);
    }

    /** Whether records must sit in memory with an address (OpenSSL's cipher reads and writes it directly). */
    abstract boolean needsAddress();

    /**
     * Starts sealing the record of {@code size} bytes (header, inner plaintext, tag) at
     * {@code at} of {@code record}, whose header is written: its nonce, and the header as the
     * additional data. The plaintext follows by {@link #update}, the tag by {@link #finish}.
     */
    abstract void begin(ByteBuf record, int at, int size, long seq);

    /**
     * Seals {@code length} bytes of plaintext at {@code index} of {@code from} into
     * {@code record} at {@code at} (the next bytes of the record begun; {@code from} may be the
     * record itself, in place).
     */
    abstract void update(ByteBuf from, int index, int length, ByteBuf record, int at);

    /** Ends the record begun: its tag goes to {@code record} at {@code at}. */
    abstract void finish(ByteBuf record, int at);

    /**
     * Seals the record at {@code at} of {@code buf} in place: its header (the additional data) at
     * {@code at}, {@code length} bytes of inner plaintext after it; the tag is written after them.
     */
    final void seal(ByteBuf buf, int at, int length, long seq) {
        begin(buf, at, HEADER + length + TAG, seq);
        update(buf, at + HEADER, length, buf, at + HEADER);
        finish(buf, at + HEADER + length);
    }

    /**
     * Opens the record at {@code at} of {@code src}: header, then {@code length} bytes of
     * ciphertext and tag. The plaintext is written to {@code dst} from its writer index (which
     * does not move). False if the tag is wrong.
     */
    abstract boolean open(ByteBuf src, int at, int length, ByteBuf dst, long seq);

    /** Frees the key; the cipher is not used again. */
    @Override
    public abstract void close();

    /** Which implementation, for logs. */
    abstract String provider();
}
