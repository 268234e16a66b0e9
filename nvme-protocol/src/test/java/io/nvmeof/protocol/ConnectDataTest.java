package io.nvmeof.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class ConnectDataTest {
    @Test
    void layout() {
        UUID id = UUID.fromString("00112233-4455-6677-8899-aabbccddeeff");
        ByteBuffer buf = Flyweight.allocate(ConnectData.SIZE);
        ConnectData d = new ConnectData().wrap(buf, 0);
        d.hostId(id).cntlid(0xffff).subsystemNqn("nqn.2024-01.io.nvmeof:sub").hostNqn("nqn.2014-08.org.nvmexpress:uuid:" + id);
        assertEquals("00112233445566778899aabbccddeeff", Hex.of(buf, 0, 16));
        assertEquals("ffff", Hex.of(buf, 16, 2));
        assertEquals(Hex.of(ByteBuffer.wrap("nqn.2024-01.io.nvmeof:sub".getBytes()), 0, 25), Hex.of(buf, 256, 25));
        assertEquals(0, buf.get(256 + 25));
        assertEquals('n', buf.get(512));
        assertEquals(1024, ConnectData.SIZE);
        assertEquals(256, ConnectData.SUBNQN_OFFSET);
        assertEquals(512, ConnectData.HOSTNQN_OFFSET);

        ConnectData r = new ConnectData().wrap(buf, 0);
        assertEquals(id, r.hostId());
        assertEquals(0xffff, r.cntlid());
        assertEquals("nqn.2024-01.io.nvmeof:sub", r.subsystemNqn());
        assertEquals("nqn.2014-08.org.nvmexpress:uuid:" + id, r.hostNqn());
        assertThrows(IllegalArgumentException.class, () -> r.hostNqn("n".repeat(257)));
    }
}
