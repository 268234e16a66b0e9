package io.nvmeof.e2e;

/** {@link ReconnectSuite} over NVMe/RDMA on the soft provider. */
class ReconnectRdmaSoftTest extends ReconnectSuite {
    @Override
    Fabric fabric() {
        return Fabric.RDMA_SOFT;
    }
}
