/**
 * NVMe, NVMe over Fabrics and NVMe/TCP wire formats: commands, completions, statuses, identify
 * data, log pages, PDUs, and the DH-HMAC-CHAP and TLS PSK derivations. It needs the JDK alone,
 * so it is a named module; the other libraries carry an Automatic-Module-Name until their
 * dependencies (Netty, jnr-ffi, DiSNI) are modules themselves.
 */
module io.nvmeof.protocol {
    exports io.nvmeof.protocol;
    exports io.nvmeof.protocol.auth;
    exports io.nvmeof.protocol.rdma;
    exports io.nvmeof.protocol.tcp;
    exports io.nvmeof.protocol.tls;
}
