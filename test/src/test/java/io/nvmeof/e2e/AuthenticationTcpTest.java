package io.nvmeof.e2e;

/** {@link AuthenticationSuite} over NVMe/TCP. */
class AuthenticationTcpTest extends AuthenticationSuite {
    @Override
    Fabric fabric() {
        return Fabric.TCP;
    }
}
