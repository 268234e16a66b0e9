package io.nvmeof.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/** An instance field: a new target per test, stopped after it. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TargetPerTestTest {
    @NvmeofTarget
    EmbeddedTarget target;
    static InetSocketAddress previous;

    @Test
    @Order(1)
    void first() throws IOException {
        assertNotNull(target);
        previous = target.address();
        Connections.writeAndRead(target.uri());
    }

    @Test
    @Order(2)
    void second(URI uri) throws IOException {
        assertNotEquals(previous, target.address());
        assertTrue(!Connections.listening(previous), "the first test's target still listens on " + previous);
        assertEquals(target.uri(), uri.toString());
        Connections.writeAndRead(uri.toString());
    }
}

