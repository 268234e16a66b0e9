package io.nvmeof.fabric.tls;

import io.nvmeof.protocol.auth.DhchapHash;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Vector;
import org.bouncycastle.tls.AbstractTlsServer;
import org.bouncycastle.tls.BasicTlsPSKExternal;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.ProtocolVersion;
import org.bouncycastle.tls.PskIdentity;
import org.bouncycastle.tls.PskKeyExchangeMode;
import org.bouncycastle.tls.TlsCredentials;
import org.bouncycastle.tls.TlsPSKExternal;

/** The target's side: TLS 1.3 with the external PSK the {@link TlsPskHandler} picked for the client's identity. */
final class NvmeTlsServer extends AbstractTlsServer {
    private final TlsPskHandler handler;

    NvmeTlsServer(TlsPskHandler handler) {
        super(NvmeTls.crypto());
        this.handler = handler;
    }

    @Override
    protected ProtocolVersion[] getSupportedVersions() {
        return ProtocolVersion.TLSv13.only();
    }

    /** The hash of the PSK the host offers, once its ClientHello is seen: the one cipher suite that goes with it. */
    private DhchapHash pskHash;

    void pskHash(DhchapHash h) {
        this.pskHash = h;
    }

    @Override
    protected int[] getSupportedCipherSuites() {
        return new int[] {CipherSuite.TLS_AES_128_GCM_SHA256, CipherSuite.TLS_AES_256_GCM_SHA384};
    }

    /** A TLS 1.3 PSK is bound to its hash: only the suite of that hash may be chosen (RFC 8446, 4.2.11). */
    @Override
    public int[] getCipherSuites() {
        return pskHash == null ? super.getCipherSuites() : new int[] {NvmeTls.cipherSuite(pskHash)};
    }

    @Override
    protected boolean isSelectableCipherSuite(int cipherSuite, int availCurveBits, int availFiniteFieldBits,
                                              Vector sigAlgs) {
        return (pskHash == null || cipherSuite == NvmeTls.cipherSuite(pskHash))
                && super.isSelectableCipherSuite(cipherSuite, availCurveBits, availFiniteFieldBits, sigAlgs);
    }

    @Override
    public short[] getPskKeyExchangeModes() {
        // with (EC)DHE only: a PSK that leaks later does not open recorded traffic
        return new short[] {PskKeyExchangeMode.psk_dhe_ke};
    }

    @Override
    public TlsPSKExternal getExternalPSK(Vector identities) {
        for (int i = 0; i < identities.size(); i++) {
            byte[] id = ((PskIdentity) identities.get(i)).getIdentity();
            TlsPskHandler.Selected key = handler.select(new String(id, StandardCharsets.UTF_8), i);
            if (key != null) {
                return new BasicTlsPSKExternal(id, getCrypto().createSecret(key.psk()), NvmeTls.prf(key.hash()));
            }
        }
        return null;
    }

    @Override
    public TlsCredentials getCredentials() {
        return null; // PSK only: no certificate
    }

    @Override
    public void notifyHandshakeComplete() throws IOException {
        super.notifyHandshakeComplete();
        NvmeTls.complete(handler, null, context);
    }

    @Override
    public void notifyAlertRaised(short level, short description, String message, Throwable cause) {
        handler.alert(true, description, message);
    }

    @Override
    public void notifyAlertReceived(short level, short description) {
        handler.alert(false, description, null);
    }

    String suite() {
        return NvmeTls.suiteName(context.getSecurityParametersConnection().getCipherSuite());
    }
}
