package io.nvmeof.fabric.tls;

import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.protocol.tls.PskIdentity;
import io.nvmeof.protocol.tls.TlsPsk;
import java.io.IOException;
import java.security.SecureRandom;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.PRFAlgorithm;
import org.bouncycastle.tls.SecurityParameters;
import org.bouncycastle.tls.TlsClient;
import org.bouncycastle.tls.TlsContext;
import org.bouncycastle.tls.crypto.TlsCrypto;
import org.bouncycastle.tls.crypto.impl.jcajce.JcaTlsCryptoProvider;

/**
 * What NVMe/TCP's secure channel fixes (NVMe/TCP 1.1, 3.6.1): TLS 1.3, a PSK, and the cipher
 * suite whose hash is the PSK's: TLS_AES_128_GCM_SHA256 for SHA-256 PSKs, TLS_AES_256_GCM_SHA384
 * for SHA-384 ones. Bouncy Castle's TLS does the protocol; its JCA crypto uses the JDK's AES-GCM
 * and HMAC, which run on the CPU's AES and SHA instructions.
 */
public final class NvmeTls {
    /** Plaintext per record at most (RFC 8446, 5.1). */
    static final int RECORD = 16384;
    private static final TlsCrypto CRYPTO = new JcaTlsCryptoProvider().create(new SecureRandom());

    private NvmeTls() {
    }

    /**
     * A host's TLS client for blocking use (Bouncy Castle's stream mode): {@code key}'s PSK for the
     * identity of {@code version}, derived with {@code d}. For tools and tests that speak NVMe/TCP
     * over a plain socket; the initiator uses {@link TlsPskHandler}.
     */
    public static TlsClient client(TlsPsk key, String hostNqn, String subNqn, int version,
                                                         TlsPsk.Derivation d) {
        return client(key, hostNqn, subNqn, version, d, false);
    }

    /** {@link #client}, offering the PSK without an (EC)DHE exchange (psk_ke) when {@code pskKeOnly}. */
    public static TlsClient client(TlsPsk key, String hostNqn, String subNqn, int version,
                                                         TlsPsk.Derivation d, boolean pskKeOnly) {
        String identity = key.identity(version, hostNqn, subNqn, d);
        return new NvmeTlsClient(identity, key.tlsPsk(PskIdentity.parse(identity), d), key.cipherHash(), null, pskKeOnly);
    }

    static TlsCrypto crypto() {
        return CRYPTO;
    }

    static int cipherSuite(DhchapHash h) {
        return h == DhchapHash.SHA384 ? CipherSuite.TLS_AES_256_GCM_SHA384 : CipherSuite.TLS_AES_128_GCM_SHA256;
    }

    static int prf(DhchapHash h) {
        return h == DhchapHash.SHA384 ? PRFAlgorithm.tls13_hkdf_sha384 : PRFAlgorithm.tls13_hkdf_sha256;
    }

    /**
     * Hands a finished handshake's application traffic keys to {@code handler}: the hash is the
     * negotiated suite's; BC derives each direction's key, IV and next secret from its own secrets.
     */
    static void complete(TlsPskHandler handler, TlsSession session, TlsContext context)
            throws IOException {
        SecurityParameters sp = context.getSecurityParametersConnection();
        DhchapHash h = sp.getCipherSuite() == CipherSuite.TLS_AES_256_GCM_SHA384 ? DhchapHash.SHA384 : DhchapHash.SHA256;
        handler.handshakeComplete(session, h, RecordLayer.Keys.of(sp.getTrafficSecretClient(), h),
                RecordLayer.Keys.of(sp.getTrafficSecretServer(), h));
    }

    /** Null where TLS records are sealed by OpenSSL's AES-GCM; else why the JDK's is used (libcrypto not loadable). */
    public static String openSslMissing() {
        return OpenSslGcm.missing();
    }

    /** The name of a TLS cipher suite, for logs. */
    public static String suiteName(int suite) {
        return suite == CipherSuite.TLS_AES_256_GCM_SHA384 ? "TLS_AES_256_GCM_SHA384"
                : suite == CipherSuite.TLS_AES_128_GCM_SHA256 ? "TLS_AES_128_GCM_SHA256" : "cipher suite " + suite;
    }

    /** An alert's description, for logs and errors. */
    public static String alert(short description) {
        String text = AlertDescription.getText(description);
        return text + (description == AlertDescription.decrypt_error || description == AlertDescription.unknown_psk_identity
                ? " (the peer holds another PSK, or none for this identity)" : "");
    }
}
