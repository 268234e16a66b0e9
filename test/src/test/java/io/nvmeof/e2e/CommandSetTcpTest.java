package io.nvmeof.e2e;

/** {@link CommandSetSuite} over NVMe/TCP. */
class CommandSetTcpTest extends CommandSetSuite {
    @Override
    Fabric fabric() {
        return Fabric.TCP;
    }
}
