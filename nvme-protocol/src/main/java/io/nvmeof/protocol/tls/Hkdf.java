package io.nvmeof.protocol.tls;

import io.nvmeof.protocol.auth.DhchapHash;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import javax.crypto.Mac;

/**
 * HKDF (RFC 5869) and TLS 1.3's HKDF-Expand-Label (RFC 8446, 7.1), as NVMe/TCP uses them to
 * derive PSKs, plus the label encoding that libnvme used before it followed RFC 8446 (a
 * little-endian length and label and context without their length bytes), which the
 * nvme-cli of Debian 13 and other releases of 2025 still write into the kernel's keyring
 * (newer nvme-cli calls it {@code --compat}).
 */
public final class Hkdf {
    private Hkdf() {
    }

    /** HKDF-Extract with an all-zero salt of the hash's length. */
    public static byte[] extract(DhchapHash h, byte[] ikm) {
        return h.hmac(new byte[h.length]).doFinal(ikm);
    }

    /** HKDF-Expand to {@code length} bytes. */
    public static byte[] expand(DhchapHash h, byte[] prk, byte[] info, int length) {
        Mac m = h.hmac(prk);
        byte[] out = new byte[length];
        byte[] t = new byte[0];
        int done = 0;
        for (int i = 1; done < length; i++) {
            m.update(t);
            m.update(info);
            m.update((byte) i);
            t = m.doFinal();
            int n = Math.min(t.length, length - done);
            System.arraycopy(t, 0, out, done, n);
            done += n;
        }
        return out;
    }

    /** The HkdfLabel of RFC 8446: length (big-endian), "tls13 " + label and context, each with its length byte. */
    public static byte[] label(int length, String label, byte[] context) {
        byte[] l = ("tls13 " + label).getBytes(StandardCharsets.US_ASCII);
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.write(length >>> 8);
        b.write(length);
        b.write(l.length);
        b.writeBytes(l);
        b.write(context.length);
        b.writeBytes(context);
        return b.toByteArray();
    }

    /** libnvme's label before it followed RFC 8446: length little-endian, no length bytes for label and context. */
    public static byte[] compatLabel(int length, String label, byte[] context) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.write(length);
        b.write(length >>> 8);
        b.writeBytes(("tls13 " + label).getBytes(StandardCharsets.US_ASCII));
        b.writeBytes(context);
        return b.toByteArray();
    }

    /** HKDF-Expand-Label of RFC 8446. */
    public static byte[] expandLabel(DhchapHash h, byte[] secret, String label, byte[] context, int length) {
        return expand(h, secret, label(length, label, context), length);
    }
}
