package io.nvmeof.fabric.tls;

import io.netty.buffer.ByteBuf;
import java.security.GeneralSecurityException;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/** The JDK's AES-GCM for a record direction, where OpenSSL's cannot be loaded. Works on a heap copy of each record. */
final class JdkGcm extends RecordCipher {
    private static final int MAX = HEADER + NvmeTls.RECORD + 256 + TAG;
    private final SecretKeySpec key;
    private final Cipher cipher;
    private final byte[] nonce = new byte[12];
    private final byte[] work = new byte[MAX];
    /** The record being sealed: where it starts in its buffer, and its sequence number. */
    private int recordAt;
    private long recordSeq;

    JdkGcm(boolean encrypt, byte[] key, byte[] iv) {
        super(iv);
        this.key = new SecretKeySpec(key, "AES");
        try {
            this.cipher = Cipher.getInstance("AES/GCM/NoPadding");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK has no AES/GCM/NoPadding", e);
        }
    }

    @Override
    boolean needsAddress() {
        return false;
    }

    private GCMParameterSpec nonce(long seq) {
        long low = ivLow ^ seq;
        for (int i = 0; i < 4; i++) {
            nonce[i] = (byte) (ivHigh >>> (24 - 8 * i));
        }
        for (int i = 0; i < 8; i++) {
            nonce[4 + i] = (byte) (low >>> (56 - 8 * i));
        }
        return new GCMParameterSpec(TAG * 8, nonce);
    }

    /** The record is gathered in a heap copy (header, then plaintext) and sealed at {@link #finish}. */
    @Override
    void begin(ByteBuf record, int at, int size, long seq) {
        recordAt = at;
        recordSeq = seq;
        record.getBytes(at, work, 0, HEADER);
    }

    @Override
    void update(ByteBuf from, int index, int length, ByteBuf record, int at) {
        from.getBytes(index, work, at - recordAt, length);
    }

    @Override
    void finish(ByteBuf record, int at) {
        int length = at - recordAt - HEADER;
        try {
            cipher.init(Cipher.ENCRYPT_MODE, key, nonce(recordSeq));
            cipher.updateAAD(work, 0, HEADER);
            int n = cipher.doFinal(work, HEADER, length, work, HEADER);
            record.setBytes(recordAt + HEADER, work, HEADER, n);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM failed to seal a record", e);
        }
    }

    @Override
    boolean open(ByteBuf src, int at, int length, ByteBuf dst, long seq) {
        src.getBytes(at, work, 0, HEADER + length);
        try {
            cipher.init(Cipher.DECRYPT_MODE, key, nonce(seq));
            cipher.updateAAD(work, 0, HEADER);
            int n = cipher.doFinal(work, HEADER, length, work, HEADER);
            dst.setBytes(dst.writerIndex(), work, HEADER, n);
            return true;
        } catch (AEADBadTagException e) {
            return false;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM failed to open a record", e);
        }
    }

    @Override
    public void close() {
        // the key's bytes go with the object
    }

    @Override
    String provider() {
        return "the JDK";
    }
}
