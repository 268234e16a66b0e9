package io.nvmeof.e2e;

/** {@link EndToEndSuite} over NVMe/TCP. */
class EndToEndTcpTest extends EndToEndSuite {
    @Override
    Fabric fabric() {
        return Fabric.TCP;
    }
}
