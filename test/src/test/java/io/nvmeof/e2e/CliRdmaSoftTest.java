package io.nvmeof.e2e;

/** {@link CliSuite} over NVMe/RDMA on the soft provider. */
class CliRdmaSoftTest extends CliSuite {
    @Override
    Fabric fabric() {
        return Fabric.RDMA_SOFT;
    }
}
