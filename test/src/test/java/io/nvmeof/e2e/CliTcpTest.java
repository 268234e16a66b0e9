package io.nvmeof.e2e;

/** {@link CliSuite} over NVMe/TCP. */
class CliTcpTest extends CliSuite {
    @Override
    Fabric fabric() {
        return Fabric.TCP;
    }
}
