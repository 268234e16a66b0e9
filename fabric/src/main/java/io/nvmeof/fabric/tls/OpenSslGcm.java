package io.nvmeof.fabric.tls;

import io.netty.buffer.ByteBuf;
import io.netty.util.internal.PlatformDependent;
import jnr.ffi.LibraryLoader;
import jnr.ffi.annotations.IgnoreError;

/**
 * OpenSSL's AES-GCM (libcrypto's EVP interface, through jnr-ffi, an optional dependency of this
 * module: the target and the CLI carry it) for one direction of a record layer. The key is set once; each record sets its nonce, gives the header as additional data and
 * runs over the record's own memory (in place when sealing), so nothing is copied or allocated
 * per record. Pointers go to libcrypto as plain numbers: every address handed over is inside a
 * buffer checked to hold the whole record, or inside this cipher's own scratch memory.
 */
final class OpenSslGcm extends RecordCipher {
    private static final int CTRL_GCM_GET_TAG = 0x10;
    private static final int CTRL_GCM_SET_TAG = 0x11;
    private static final Object LOCK = new Object();
    private static volatile LibCrypto crypto;
    private static volatile String missing;

    /**
     * The few EVP calls a record needs. Every pointer is a long; nothing is marshalled. No call
     * has six parameters: jnr-ffi's six-numeric-parameter path does not pass the sixth
     * (EVP_CipherInit_ex's {@code enc} arrived as not 0, so a decrypting context encrypted).
     */
    @IgnoreError
    public interface LibCrypto {
        long OpenSSL_version_num();

        long EVP_CIPHER_CTX_new();

        void EVP_CIPHER_CTX_free(long ctx);

        long EVP_aes_128_gcm();

        long EVP_aes_256_gcm();

        int EVP_EncryptInit_ex(long ctx, long cipher, long engine, long key, long iv);

        int EVP_EncryptUpdate(long ctx, long out, long outLength, long in, int inLength);

        int EVP_EncryptFinal_ex(long ctx, long out, long outLength);

        int EVP_DecryptInit_ex(long ctx, long cipher, long engine, long key, long iv);

        int EVP_DecryptUpdate(long ctx, long out, long outLength, long in, int inLength);

        int EVP_DecryptFinal_ex(long ctx, long out, long outLength);

        int EVP_CIPHER_CTX_ctrl(long ctx, int type, int arg, long ptr);
    }

    // scratch: nonce at 0 (12), tag at 16 (16), out length at 32 (4), key at 48 (32, zeroed once set)
    private static final int NONCE = 0;
    private static final int TAG_AT = 16;
    private static final int OUT_LENGTH = 32;
    private static final int KEY = 48;
    private static final int SCRATCH = 80;

    private final LibCrypto lib;
    private final boolean encrypt;
    private long ctx;
    private long scratch;

    OpenSslGcm(boolean encrypt, byte[] key, byte[] iv) {
        super(iv);
        this.lib = crypto;
        this.encrypt = encrypt;
        if (key.length != 16 && key.length != 32) {
            throw new IllegalArgumentException("AES-GCM keys are 16 or 32 bytes");
        }
        scratch = PlatformDependent.allocateMemory(SCRATCH);
        PlatformDependent.setMemory(scratch, SCRATCH, (byte) 0);
        ctx = lib.EVP_CIPHER_CTX_new();
        if (ctx == 0) {
            PlatformDependent.freeMemory(scratch);
            throw new IllegalStateException("EVP_CIPHER_CTX_new failed");
        }
        PlatformDependent.copyMemory(key, 0, scratch + KEY, key.length);
        long cipher = key.length == 16 ? lib.EVP_aes_128_gcm() : lib.EVP_aes_256_gcm();
        int ok = encrypt ? lib.EVP_EncryptInit_ex(ctx, cipher, 0, scratch + KEY, 0)
                : lib.EVP_DecryptInit_ex(ctx, cipher, 0, scratch + KEY, 0);
        PlatformDependent.setMemory(scratch + KEY, 32, (byte) 0);
        if (ok != 1) {
            close();
            throw new IllegalStateException("EVP_CipherInit_ex failed for AES-" + key.length * 8 + "-GCM");
        }
    }

    /** Whether libcrypto (OpenSSL 1.1 or 3) can be loaded here; the reason it cannot is in {@link #missing()}. */
    static boolean available() {
        if (crypto != null) {
            return true;
        }
        if (missing != null) {
            return false;
        }
        synchronized (LOCK) {
            if (crypto == null && missing == null && !PlatformDependent.hasUnsafe()) {
                missing = "Netty has no direct memory access here (its buffers carry no addresses)";
            }
            if (crypto == null && missing == null) {
                LibCrypto l = null;
                StringBuilder why = new StringBuilder();
                for (String name : new String[] {"libcrypto.so.3", "libcrypto.so.1.1", "crypto"}) {
                    try {
                        l = LibraryLoader.create(LibCrypto.class).failImmediately().load(name);
                        if (l.OpenSSL_version_num() >= 0x10100000L) {
                            break;
                        }
                        why.append(name).append(": older than OpenSSL 1.1; ");
                        l = null;
                    } catch (NoClassDefFoundError e) {
                        why.append("jnr-ffi is not on the class path; ");
                        break;
                    } catch (UnsatisfiedLinkError | RuntimeException e) {
                        why.append(name).append(": ").append(e.getMessage()).append("; ");
                    }
                }
                if (l != null) {
                    crypto = l;
                } else {
                    missing = why.toString();
                    System.getLogger(OpenSslGcm.class.getName()).log(System.Logger.Level.WARNING, "libcrypto cannot be"
                            + " loaded ({0}): TLS records use the JDK''s AES-GCM, which is slower and allocates per record",
                            missing);
                }
            }
        }
        return crypto != null;
    }

    /** Why libcrypto could not be loaded, or null. */
    static String missing() {
        return available() ? null : missing;
    }

    @Override
    boolean needsAddress() {
        return true;
    }

    private void nonce(long seq) {
        long low = ivLow ^ seq;
        PlatformDependent.putInt(scratch + NONCE, Integer.reverseBytes((int) ivHigh));
        PlatformDependent.putLong(scratch + NONCE + 4, Long.reverseBytes(low));
    }

    private long live() {
        if (ctx == 0) {
            throw new IllegalStateException("the record cipher is closed");
        }
        return ctx;
    }

    private static long address(ByteBuf b, int at, int length) {
        if (!b.hasMemoryAddress()) {
            throw new IllegalArgumentException("OpenSSL's record cipher needs a buffer with a memory address");
        }
        if (at < 0 || length < 0 || at + length > b.capacity()) {
            throw new IndexOutOfBoundsException("record at " + at + " of " + length + " bytes in a buffer of " + b.capacity());
        }
        return b.memoryAddress() + at;
    }

    @Override
    void begin(ByteBuf record, int at, int size, long seq) {
        if (!encrypt) {
            throw new IllegalStateException("an opening cipher does not seal");
        }
        long c = live();
        long rec = address(record, at, size);
        nonce(seq);
        if (lib.EVP_EncryptInit_ex(c, 0, 0, 0, scratch + NONCE) != 1
                || lib.EVP_EncryptUpdate(c, 0, scratch + OUT_LENGTH, rec, HEADER) != 1) {
            throw new IllegalStateException("OpenSSL's AES-GCM failed to start a record");
        }
    }

    /**
     * Encrypts straight from {@code from}'s memory where it has an address (no copy first);
     * a heap or composite buffer is copied into the record and encrypted there in place.
     */
    @Override
    void update(ByteBuf from, int index, int length, ByteBuf record, int at) {
        if (length == 0) {
            return;
        }
        long dst = address(record, at, length);
        long src;
        if (from.hasMemoryAddress()) {
            src = address(from, index, length);
        } else {
            record.setBytes(at, from, index, length);
            src = dst;
        }
        if (lib.EVP_EncryptUpdate(live(), dst, scratch + OUT_LENGTH, src, length) != 1) {
            throw new IllegalStateException("OpenSSL's AES-GCM failed to seal a record");
        }
    }

    @Override
    void finish(ByteBuf record, int at) {
        long c = live();
        long tag = address(record, at, TAG);
        if (lib.EVP_EncryptFinal_ex(c, tag, scratch + OUT_LENGTH) != 1
                || lib.EVP_CIPHER_CTX_ctrl(c, CTRL_GCM_GET_TAG, TAG, tag) != 1) {
            throw new IllegalStateException("OpenSSL's AES-GCM failed to seal a record");
        }
    }

    @Override
    boolean open(ByteBuf src, int at, int length, ByteBuf dst, long seq) {
        if (encrypt) {
            throw new IllegalStateException("a sealing cipher does not open");
        }
        long c = live();
        int data = length - TAG;
        long rec = address(src, at, HEADER + length);
        long out = address(dst, dst.writerIndex(), data);
        nonce(seq);
        long outLength = scratch + OUT_LENGTH;
        PlatformDependent.copyMemory(rec + HEADER + data, scratch + TAG_AT, TAG);
        boolean ok = lib.EVP_DecryptInit_ex(c, 0, 0, 0, scratch + NONCE) == 1
                && lib.EVP_DecryptUpdate(c, 0, outLength, rec, HEADER) == 1
                && lib.EVP_DecryptUpdate(c, out, outLength, rec + HEADER, data) == 1
                && lib.EVP_CIPHER_CTX_ctrl(c, CTRL_GCM_SET_TAG, TAG, scratch + TAG_AT) == 1;
        return ok && lib.EVP_DecryptFinal_ex(c, out + data, outLength) == 1;
    }

    @Override
    public void close() {
        if (ctx != 0) {
            lib.EVP_CIPHER_CTX_free(ctx); // cleanses the key schedule
            ctx = 0;
        }
        if (scratch != 0) {
            PlatformDependent.freeMemory(scratch);
            scratch = 0;
        }
    }

    @Override
    String provider() {
        return "OpenSSL";
    }
}
