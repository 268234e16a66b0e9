package io.nvmeof.fabric.tls;

/**
 * What a finished TLS handshake settled, fired down the pipeline as a user event and kept by
 * the handler: the PSK identity both sides used, the cipher suite, and (on a target) how the
 * host's PSK had been derived.
 */
public record TlsSession(String identity, String cipherSuite, String derivation) {
}
