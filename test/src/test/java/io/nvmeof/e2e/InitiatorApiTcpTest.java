package io.nvmeof.e2e;

/** {@link InitiatorApiSuite} over NVMe/TCP. */
class InitiatorApiTcpTest extends InitiatorApiSuite {
    @Override
    Fabric fabric() {
        return Fabric.TCP;
    }
}
