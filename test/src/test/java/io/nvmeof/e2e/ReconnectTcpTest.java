package io.nvmeof.e2e;

/** {@link ReconnectSuite} over NVMe/TCP. */
class ReconnectTcpTest extends ReconnectSuite {
    @Override
    Fabric fabric() {
        return Fabric.TCP;
    }
}
