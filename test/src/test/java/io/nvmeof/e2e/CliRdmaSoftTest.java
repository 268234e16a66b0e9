package io.nvmeof.e2e;

import org.junit.jupiter.api.Tag;

/**
 * {@link CliSuite} over NVMe/RDMA on the soft provider. A long run ({@code mvn -B verify -Plong}):
 * in every run the CLI meets NVMe/RDMA in kernel interop part 3 (our jar in a guest, over
 * soft-RoCE's real verbs, both ways), and the initiator and command set over the soft provider in
 * {@code InitiatorApiRdmaSoftTest} and {@code CommandSetRdmaSoftTest}.
 */
@Tag("long")
class CliRdmaSoftTest extends CliSuite {
    @Override
    Fabric fabric() {
        return Fabric.RDMA_SOFT;
    }
}
