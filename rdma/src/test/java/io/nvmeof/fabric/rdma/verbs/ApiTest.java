package io.nvmeof.fabric.rdma.verbs;

import io.nvmeof.fabric.testing.ApiSurface;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The public API of nvmeof-rdma is the one recorded in api/nvmeof-rdma.api (see {@link ApiSurface}). */
class ApiTest {
    @Test
    void thePublicApiIsTheRecordedOne() throws Exception {
        ApiSurface.check(VerbsProvider.class, Path.of("api/nvmeof-rdma.api"));
    }
}
