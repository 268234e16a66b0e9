package io.nvmeof.e2e;

/** {@link DisconnectSuite} over NVMe/TCP. */
class DisconnectTcpTest extends DisconnectSuite {
    @Override
    Fabric fabric() {
        return Fabric.TCP;
    }
}
