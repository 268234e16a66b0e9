package io.nvmeof.e2e;

/** {@link CommandSetSuite} over NVMe/RDMA on the soft provider. */
class CommandSetRdmaSoftTest extends CommandSetSuite {
    @Override
    Fabric fabric() {
        return Fabric.RDMA_SOFT;
    }
}
