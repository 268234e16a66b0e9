package io.nvmeof.nbd;

import io.nvmeof.fabric.testing.ApiSurface;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The public API of nvmeof-nbd is the one recorded in api/nvmeof-nbd.api (see {@link ApiSurface}). */
class ApiTest {
    @Test
    void thePublicApiIsTheRecordedOne() throws Exception {
        ApiSurface.check(NbdServer.class, Path.of("api/nvmeof-nbd.api"));
    }
}
