package io.nvmeof.e2e;

/** {@link InProcessSuite} over NVMe/TCP. */
class InProcessTcpTest extends InProcessSuite {
    @Override
    Fabric fabric() {
        return Fabric.TCP;
    }
}
