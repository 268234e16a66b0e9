package io.nvmeof.e2e;

/** {@link InProcessSuite} over NVMe/RDMA on the soft provider. */
class InProcessRdmaSoftTest extends InProcessSuite {
    @Override
    Fabric fabric() {
        return Fabric.RDMA_SOFT;
    }
}
