package io.nvmeof.daemon;

import io.nvmeof.fabric.testing.ApiSurface;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The public API of nvmeof-daemon is the one recorded in api/nvmeof-daemon.api (see {@link ApiSurface}). */
class ApiTest {
    @Test
    void thePublicApiIsTheRecordedOne() throws Exception {
        ApiSurface.check(Daemon.class, Path.of("api/nvmeof-daemon.api"));
    }
}
