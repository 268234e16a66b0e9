package io.nvmeof.e2e;

/** {@link EndToEndSuite} over NVMe/RDMA on the soft provider. */
class EndToEndRdmaSoftTest extends EndToEndSuite {
    @Override
    Fabric fabric() {
        return Fabric.RDMA_SOFT;
    }
}
