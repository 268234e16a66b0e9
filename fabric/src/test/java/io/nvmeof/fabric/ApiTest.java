package io.nvmeof.fabric;

import io.nvmeof.fabric.testing.ApiSurface;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The public API of nvmeof-fabric is the one recorded in api/nvmeof-fabric.api (see {@link ApiSurface}). */
class ApiTest {
    @Test
    void thePublicApiIsTheRecordedOne() throws Exception {
        ApiSurface.check(EventLoops.class, Path.of("api/nvmeof-fabric.api"));
    }

    /** nvmeof-protocol's, checked here: its own tests cannot use this module's test helpers. */
    @Test
    void theProtocolsPublicApiIsTheRecordedOne() throws Exception {
        ApiSurface.check(io.nvmeof.protocol.Nqn.class, Path.of("../nvme-protocol/api/nvmeof-protocol.api"));
    }
}
