package io.nvmeof.initiator;

import io.nvmeof.fabric.testing.ApiSurface;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The public API of nvmeof-initiator is the one recorded in api/nvmeof-initiator.api (see {@link ApiSurface}). */
class ApiTest {
    @Test
    void thePublicApiIsTheRecordedOne() throws Exception {
        ApiSurface.check(Controller.class, Path.of("api/nvmeof-initiator.api"));
    }
}
