package io.nvmeof.protocol.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;

/**
 * A DH-HMAC-CHAP secret in the interchange format of NVMe Base 2.0, 8.13.5.7 and nvme-cli
 * ({@code DHHC-1:XX:<base64 of key and CRC-32>:}): {@code XX} is 00 (use the key as it is) or the
 * hash (01 SHA-256, 02 SHA-384, 03 SHA-512) that transforms it with an NQN before use; the key
 * is 32, 48 or 64 bytes. {@link #toString()} never shows the key.
 */
public final class DhchapKey {
    public static final String PREFIX = "DHHC-1";
    private static final byte[] TRANSFORM_SUFFIX = "NVMe-over-Fabrics".getBytes(StandardCharsets.US_ASCII);

    private final DhchapHash transform;
    private final byte[] secret;

    private DhchapKey(DhchapHash transform, byte[] secret) {
        this.transform = transform;
        this.secret = secret;
    }

    /** Parses and checks a key in the interchange format; the message names what is wrong. */
    public static DhchapKey parse(String text) {
        KeyInterchange.Parsed p = KeyInterchange.parse(text, PREFIX, "DH-HMAC-CHAP key");
        DhchapHash h = null;
        if (p.hash() != 0) {
            h = DhchapHash.of(p.hash());
            if (h == null) {
                throw new IllegalArgumentException("DH-HMAC-CHAP key has an unknown hash " + p.hash()
                        + " (00 none, 01 SHA-256, 02 SHA-384, 03 SHA-512)");
            }
        }
        int n = p.key().length;
        if (n != 32 && n != 48 && n != 64) {
            throw new IllegalArgumentException("DH-HMAC-CHAP key has " + n + " bytes; it must have 32, 48 or 64");
        }
        return new DhchapKey(h, p.key());
    }

    /**
     * A key from {@code secret}, as {@code nvme gen-dhchap-key} makes one: with a hash, the
     * secret is first transformed with {@code nqn} (so the key printed is bound to that host);
     * without, it is used as it is.
     */
    public static DhchapKey create(byte[] secret, DhchapHash hash, String nqn) {
        int n = secret.length;
        if (n != 32 && n != 48 && n != 64) {
            throw new IllegalArgumentException("a DH-HMAC-CHAP secret has 32, 48 or 64 bytes, not " + n);
        }
        if (hash != null && hash.length != n) {
            throw new IllegalArgumentException("a secret transformed with " + hash.shortName() + " has " + hash.length
                    + " bytes, not " + n);
        }
        byte[] key = hash == null ? secret.clone() : transform(hash, secret, nqn);
        return new DhchapKey(hash, key);
    }

    /** A random secret of {@code length} bytes. */
    public static byte[] randomSecret(int length, SecureRandom random) {
        byte[] b = new byte[length];
        random.nextBytes(b);
        return b;
    }

    /** The hash that transforms the key, or null (00: the key is used as it is). */
    public DhchapHash transformHash() {
        return transform;
    }

    public int length() {
        return secret.length;
    }

    /**
     * The key as DH-HMAC-CHAP uses it for {@code nqn} (the host's NQN for the host's key, the
     * subsystem's for the controller's key): HMAC(key, nqn || "NVMe-over-Fabrics") with the key's
     * own hash, or the key itself when it names none.
     */
    public byte[] transformed(String nqn) {
        return transform == null ? secret.clone() : transform(transform, secret, nqn);
    }

    private static byte[] transform(DhchapHash h, byte[] secret, String nqn) {
        Mac m = h.hmac(secret);
        m.update(nqn.getBytes(StandardCharsets.UTF_8));
        m.update(TRANSFORM_SUFFIX);
        return m.doFinal();
    }

    /** The interchange format, {@code DHHC-1:XX:...:}. */
    public String format() {
        return KeyInterchange.format(PREFIX, transform == null ? 0 : transform.id, secret);
    }

    /** Whether {@code other} holds the same key. */
    public boolean sameAs(DhchapKey other) {
        return other != null && other.transform == transform && MessageDigest.isEqual(secret, other.secret);
    }

    @Override
    public String toString() {
        return "DhchapKey{" + (transform == null ? "untransformed" : transform.shortName()) + ", " + secret.length
                + " bytes}";
    }
}
