package io.nvmeof.fabric.tls;

import io.nvmeof.protocol.auth.DhchapHash;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Vector;
import org.bouncycastle.tls.AbstractTlsClient;
import org.bouncycastle.tls.BasicTlsPSKExternal;
import org.bouncycastle.tls.ProtocolVersion;
import org.bouncycastle.tls.PskKeyExchangeMode;
import org.bouncycastle.tls.TlsAuthentication;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.AlertDescription;

/** The host's side: offers one external PSK under its NVMe/TCP identity, TLS 1.3 only, (EC)DHE with it. */
final class NvmeTlsClient extends AbstractTlsClient {
    private final byte[] identity;
    private final byte[] psk;
    private final DhchapHash hash;
    private final TlsPskHandler handler;
    private final boolean pskKeOnly;

    /** {@code pskKeOnly}: offer the PSK without (EC)DHE (psk_ke) instead of with it: for tests of a target's refusal. */
    NvmeTlsClient(String identity, byte[] psk, DhchapHash hash, TlsPskHandler handler, boolean pskKeOnly) {
        super(NvmeTls.crypto());
        this.identity = identity.getBytes(StandardCharsets.UTF_8);
        this.psk = psk.clone();
        this.hash = hash;
        this.handler = handler;
        this.pskKeOnly = pskKeOnly;
    }

    @Override
    protected ProtocolVersion[] getSupportedVersions() {
        return ProtocolVersion.TLSv13.only();
    }

    @Override
    protected int[] getSupportedCipherSuites() {
        return new int[] {NvmeTls.cipherSuite(hash)};
    }

    @Override
    public Vector getExternalPSKs() {
        Vector<Object> v = new Vector<>();
        v.add(new BasicTlsPSKExternal(identity, getCrypto().createSecret(psk), NvmeTls.prf(hash)));
        return v;
    }

    @Override
    public short[] getPskKeyExchangeModes() {
        return new short[] {pskKeOnly ? PskKeyExchangeMode.psk_ke : PskKeyExchangeMode.psk_dhe_ke};
    }

    @Override
    public TlsAuthentication getAuthentication() throws IOException {
        // with an external PSK the server proves itself by the PSK; a certificate is not expected
        throw new TlsFatalAlert(AlertDescription.unexpected_message, "the target asked for certificate authentication");
    }

    @Override
    public void notifyHandshakeComplete() throws IOException {
        super.notifyHandshakeComplete();
        if (handler != null) {
            NvmeTls.complete(handler, new TlsSession(new String(identity, StandardCharsets.UTF_8),
                    NvmeTls.suiteName(context.getSecurityParametersConnection().getCipherSuite()), null), context);
        }
    }

    @Override
    public void notifyAlertRaised(short level, short description, String message, Throwable cause) {
        if (handler != null) {
            handler.alert(true, description, message);
        }
    }

    @Override
    public void notifyAlertReceived(short level, short description) {
        if (handler != null) {
            handler.alert(false, description, null);
        }
    }
}
