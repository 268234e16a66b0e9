package io.nvmeof.e2e;

/** {@link InitiatorApiSuite} over NVMe/RDMA on the soft provider. */
class InitiatorApiRdmaSoftTest extends InitiatorApiSuite {
    @Override
    Fabric fabric() {
        return Fabric.RDMA_SOFT;
    }
}
