package io.nvmeof.protocol.auth;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;
import java.util.zip.CRC32;

/**
 * The interchange format NVMe keys are written in ({@code DHHC-1:01:<base64>:},
 * {@code NVMeTLSkey-1:01:<base64>:}): a prefix, a two-digit hash field, and the key with its
 * CRC-32 (zlib's, little-endian) appended, in standard base64 with padding.
 */
public final class KeyInterchange {
    private KeyInterchange() {
    }

    /** A parsed key: the hash field and the key bytes (CRC checked). */
    public record Parsed(int hash, byte[] key) {
    }

    /**
     * Parses {@code text} of the form {@code <prefix>:<XX>:<base64>:}; {@code what} names the
     * key in error messages. The CRC is checked; the key length is the caller's to check.
     */
    public static Parsed parse(String text, String prefix, String what) {
        if (text == null) {
            throw new IllegalArgumentException(what + " is missing");
        }
        String t = text.trim();
        if (!t.startsWith(prefix + ":")) {
            throw new IllegalArgumentException(what + " must start with " + prefix + ": (the format nvme-cli writes)");
        }
        String[] parts = t.split(":", -1);
        if (parts.length != 4 || !parts[3].isEmpty() || parts[1].length() != 2) {
            throw new IllegalArgumentException(what + " must look like " + prefix + ":XX:<base64>:");
        }
        int hash;
        try {
            hash = Integer.parseInt(parts[1], 16);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " has a bad hash field " + parts[1]);
        }
        byte[] raw;
        try {
            raw = Base64.getDecoder().decode(parts[2]);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + " is not valid base64");
        }
        if (raw.length < 5) {
            throw new IllegalArgumentException(what + " is too short");
        }
        byte[] key = new byte[raw.length - 4];
        System.arraycopy(raw, 0, key, 0, key.length);
        int stored = ByteBuffer.wrap(raw, key.length, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
        if (stored != crc(key)) {
            DhGroup.wipe(raw);
            DhGroup.wipe(key);
            throw new IllegalArgumentException(what + " fails its CRC-32 check (mistyped or truncated?)");
        }
        DhGroup.wipe(raw);
        return new Parsed(hash, key);
    }

    /** {@code <prefix>:<XX>:<base64(key || crc32)>:}. */
    public static String format(String prefix, int hash, byte[] key) {
        byte[] raw = new byte[key.length + 4];
        System.arraycopy(key, 0, raw, 0, key.length);
        ByteBuffer.wrap(raw, key.length, 4).order(ByteOrder.LITTLE_ENDIAN).putInt(crc(key));
        String s = prefix + ":" + String.format("%02x", hash) + ":" + Base64.getEncoder().encodeToString(raw) + ":";
        DhGroup.wipe(raw);
        return s;
    }

    static int crc(byte[] key) {
        CRC32 c = new CRC32();
        c.update(key);
        return (int) c.getValue();
    }
}
