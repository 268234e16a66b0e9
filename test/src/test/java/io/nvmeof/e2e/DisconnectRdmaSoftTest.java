package io.nvmeof.e2e;

/** {@link DisconnectSuite} over NVMe/RDMA on the soft provider. */
class DisconnectRdmaSoftTest extends DisconnectSuite {
    @Override
    Fabric fabric() {
        return Fabric.RDMA_SOFT;
    }
}
