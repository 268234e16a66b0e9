package io.nvmeof.target;

import io.nvmeof.fabric.testing.ApiSurface;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The public API of nvmeof-target is the one recorded in api/nvmeof-target.api (see {@link ApiSurface}). */
class ApiTest {
    @Test
    void thePublicApiIsTheRecordedOne() throws Exception {
        ApiSurface.check(Target.class, Path.of("api/nvmeof-target.api"));
    }
}
