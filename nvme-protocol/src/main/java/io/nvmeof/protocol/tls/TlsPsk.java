package io.nvmeof.protocol.tls;

import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.protocol.auth.KeyInterchange;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import javax.crypto.Mac;

/**
 * A configured TLS PSK of NVMe/TCP in the interchange format ({@code NVMeTLSkey-1:XX:<base64 of
 * key and CRC-32>:}, NVMe/TCP 1.1, 3.6.1.5; what {@code nvme gen-tls-key} prints), and the keys
 * derived from it (3.6.1.3): the retained PSK, bound to the host NQN (XX 01: HKDF with SHA-256,
 * 02: SHA-384, 00: the key itself), the PSK identity ({@code NVMe0R0X <hostnqn> <subnqn>}, or
 * version 1 with a digest), and the TLS PSK for that identity. Each derivation comes in RFC 8446's
 * label encoding or in libnvme's older one ({@link Derivation}).
 */
public final class TlsPsk {
    public static final String PREFIX = "NVMeTLSkey-1";
    private static final byte[] SEED = "NVMe-over-Fabrics".getBytes(StandardCharsets.US_ASCII);

    /** How HKDF labels are encoded: as RFC 8446 says (SPDK, newer nvme-cli) or as libnvme did before. */
    public enum Derivation {
        RFC8446, COMPAT
    }

    private final int hash;
    private final byte[] configured;

    private TlsPsk(int hash, byte[] configured) {
        this.hash = hash;
        this.configured = configured;
    }

    /** Parses and checks a PSK in the interchange format; the message names what is wrong. */
    public static TlsPsk parse(String text) {
        KeyInterchange.Parsed p = KeyInterchange.parse(text, PREFIX, "TLS PSK");
        return create(p.key(), p.hash());
    }

    /** A PSK of 32 or 48 bytes; {@code hash} 0 (none), 1 (SHA-256, 32 bytes) or 2 (SHA-384, 48 bytes). */
    public static TlsPsk create(byte[] key, int hash) {
        int n = key.length;
        if (n != 32 && n != 48) {
            throw new IllegalArgumentException("a TLS PSK has 32 or 48 bytes, not " + n);
        }
        if (hash < 0 || hash > 2) {
            throw new IllegalArgumentException("TLS PSK hash " + hash + " is not 00, 01 (SHA-256) or 02 (SHA-384)");
        }
        if (hash == 1 && n != 32 || hash == 2 && n != 48) {
            throw new IllegalArgumentException("a TLS PSK with hash 0" + hash + " has " + (hash == 1 ? 32 : 48)
                    + " bytes, not " + n);
        }
        return new TlsPsk(hash, key.clone());
    }

    public String format() {
        return KeyInterchange.format(PREFIX, hash, configured);
    }

    /** The hash field: 0 (used as it is), 1 or 2. */
    public int hashField() {
        return hash;
    }

    /** The hash of the PSK's cipher suite: SHA-256 (TLS_AES_128_GCM_SHA256) or SHA-384 (TLS_AES_256_GCM_SHA384). */
    public DhchapHash cipherHash() {
        return hash == 2 || hash == 0 && configured.length == 48 ? DhchapHash.SHA384 : DhchapHash.SHA256;
    }

    /** The two-digit hash specifier of identities: 01 or 02. */
    public int cipherId() {
        return cipherHash() == DhchapHash.SHA384 ? 2 : 1;
    }

    /** The retained PSK for host {@code hostNqn}. */
    public byte[] retained(String hostNqn, Derivation d) {
        if (hash == 0) {
            return configured.clone();
        }
        DhchapHash h = hash == 1 ? DhchapHash.SHA256 : DhchapHash.SHA384;
        byte[] nqn = hostNqn.getBytes(StandardCharsets.UTF_8);
        byte[] info = d == Derivation.RFC8446 ? Hkdf.label(configured.length, "HostNQN", nqn)
                : Hkdf.compatLabel(configured.length, "HostNQN", nqn);
        return Hkdf.expand(h, Hkdf.extract(h, configured), info, configured.length);
    }

    /** The PSK identity of {@code version} 0 or 1 (1 carries a digest of the retained PSK). */
    public String identity(int version, String hostNqn, String subNqn, Derivation d) {
        String base = String.format("NVMe%dR%02d %s %s", version, cipherId(), hostNqn, subNqn);
        return version == 0 ? base : base + " " + digest(retained(hostNqn, d), hostNqn, subNqn);
    }

    private String digest(byte[] retained, String hostNqn, String subNqn) {
        Mac m = cipherHash().hmac(retained);
        m.update((hostNqn + " " + subNqn + " ").getBytes(StandardCharsets.UTF_8));
        m.update(SEED);
        return Base64.getEncoder().encodeToString(m.doFinal());
    }

    /** The TLS PSK that goes with {@code identity} (as {@link #identity} makes it). */
    public byte[] tlsPsk(PskIdentity identity, Derivation d) {
        DhchapHash h = cipherHash();
        byte[] retained = retained(identity.hostNqn(), d);
        byte[] context = identity.version() == 0 ? identity.text().getBytes(StandardCharsets.UTF_8)
                : String.format("%02d %s", cipherId(), identity.digest()).getBytes(StandardCharsets.UTF_8);
        int len = configured.length;
        byte[] info = d == Derivation.RFC8446 ? Hkdf.label(len, "nvme-tls-psk", context)
                : Hkdf.compatLabel(len, "nvme-tls-psk", context);
        return Hkdf.expand(h, Hkdf.extract(h, retained), info, len);
    }

    /** Whether a version-1 identity's digest is the one this PSK gives (a wrong one means another key). */
    public boolean digestMatches(PskIdentity identity, Derivation d) {
        return identity.version() == 0
                || digest(retained(identity.hostNqn(), d), identity.hostNqn(), identity.subNqn()).equals(identity.digest());
    }

    @Override
    public String toString() {
        return "TlsPsk{hash " + hash + ", " + configured.length + " bytes}";
    }
}
