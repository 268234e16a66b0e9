package io.nvmeof.mdns;

import io.nvmeof.fabric.testing.ApiSurface;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The public API of nvmeof-mdns is the one recorded in api/nvmeof-mdns.api (see {@link ApiSurface}). */
class ApiTest {
    @Test
    void thePublicApiIsTheRecordedOne() throws Exception {
        ApiSurface.check(MdnsDiscovery.class, Path.of("api/nvmeof-mdns.api"));
    }
}
