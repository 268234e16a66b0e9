package io.nvmeof.protocol.auth;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Locale;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The hash functions of DH-HMAC-CHAP (NVMe Base 2.0, Figure 171 "Hash Function Identifiers"),
 * as their wire identifier, digest length and the names the Linux kernel and nvme-cli use
 * ({@code hmac(sha256)}) and that our configuration accepts ({@code sha256} too).
 */
public enum DhchapHash {
    SHA256(1, 32, "SHA-256", "HmacSHA256"),
    SHA384(2, 48, "SHA-384", "HmacSHA384"),
    SHA512(3, 64, "SHA-512", "HmacSHA512");

    /** Hash identifier on the wire and in the key interchange format's {@code XX} field. */
    public final int id;
    /** Digest length in bytes: the length of challenges and responses (HL). */
    public final int length;
    private final String digest;
    private final String mac;

    DhchapHash(int id, int length, String digest, String mac) {
        this.id = id;
        this.length = length;
        this.digest = digest;
        this.mac = mac;
    }

    /** The hash with wire identifier {@code id}, or null. */
    public static DhchapHash of(int id) {
        for (DhchapHash h : values()) {
            if (h.id == id) {
                return h;
            }
        }
        return null;
    }

    /** By name: {@code sha256}, {@code hmac(sha256)}, {@code SHA-256}; null if none. */
    public static DhchapHash named(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT).replace("-", "");
        if (n.startsWith("hmac(") && n.endsWith(")")) {
            n = n.substring(5, n.length() - 1);
        }
        for (DhchapHash h : values()) {
            if (h.shortName().equals(n)) {
                return h;
            }
        }
        return null;
    }

    /** {@code sha256}. */
    public String shortName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The kernel's name, {@code hmac(sha256)}, as its logs and nvmetcli print it. */
    public String kernelName() {
        return "hmac(" + shortName() + ")";
    }

    /** A fresh HMAC keyed with {@code key}. */
    public Mac hmac(byte[] key) {
        try {
            Mac m = Mac.getInstance(mac);
            m.init(new SecretKeySpec(key, mac));
            return m;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(mac + " is not available in this JVM", e);
        }
    }

    /** The plain digest of {@code data}. */
    public byte[] digest(byte[] data) {
        try {
            return MessageDigest.getInstance(digest).digest(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(digest + " is not available in this JVM", e);
        }
    }
}
