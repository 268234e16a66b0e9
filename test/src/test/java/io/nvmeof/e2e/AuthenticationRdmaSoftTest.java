package io.nvmeof.e2e;

/** {@link AuthenticationSuite} over NVMe/RDMA (soft provider): authentication is transport independent. */
class AuthenticationRdmaSoftTest extends AuthenticationSuite {
    @Override
    Fabric fabric() {
        return Fabric.RDMA_SOFT;
    }
}
