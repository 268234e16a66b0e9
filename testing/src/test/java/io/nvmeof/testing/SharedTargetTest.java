package io.nvmeof.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/** A static field: one target for the class; faults lifted after each test, data kept. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SharedTargetTest {
    @NvmeofTarget(namespaces = {"2MiB", "1MiB"}, blockSize = 512)
    static EmbeddedTarget shared;
    static InetSocketAddress first;

    @Test
    @Order(1)
    void setsAFaultAndWrites(EmbeddedTarget injected) throws IOException {
        assertSame(shared, injected);
        first = shared.address();
        Connections.writeAndRead(shared.uri());
        shared.failNext(NvmOpcode.READ.code, 100, Status.UNRECOVERED_READ_ERROR);
        assertEquals(1, shared.faults().rules().size());
    }

    @Test
    @Order(2)
    void getsTheSameTargetWithItsDataAndNoFaults() throws IOException {
        assertEquals(first, shared.address());
        assertTrue(shared.faults().rules().isEmpty());
        try (Controller c = Nvmeof.connect(shared.uri(), Connections.quick())) {
            BlockDevice d = c.namespace(1);
            assertEquals(512, d.blockSize());
            assertEquals(2 << 20, d.size());
            assertEquals(1 << 20, c.namespace(2).size());
            ByteBuffer in = ByteBuffer.allocateDirect(512);
            d.read(0, in);
            assertEquals(42, in.get(0));
        }
    }
}

