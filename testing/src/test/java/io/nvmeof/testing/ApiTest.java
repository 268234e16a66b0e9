package io.nvmeof.testing;

import io.nvmeof.fabric.testing.ApiSurface;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The public API of nvmeof-testing is the one recorded in api/nvmeof-testing.api (see {@link ApiSurface}). */
class ApiTest {
    @Test
    void thePublicApiIsTheRecordedOne() throws Exception {
        ApiSurface.check(EmbeddedTarget.class, Path.of("api/nvmeof-testing.api"));
    }
}
