package io.nvmeof.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Discovery Information Management's data (TP8010) in golden bytes, and hostile data refused by field. */
class DiscoveryInformationTest {
    static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:0b6f8c1e-4a8a-4b7e-9d4c-2f1e3a5b6c7d";

    /**
     * A host's registration laid out byte by byte as libnvme's nvmf_dim sends it: extended
     * format, ETYPE host, EKTYPE 5Fh, one entry with an empty TRADDR, the host identifier
     * attribute and a symbolic name padded with spaces to a multiple of 4.
     */
    @Test
    void readsAHostRegistrationAsLibnvmeWritesIt() throws Exception {
        byte[] id = new byte[16];
        for (int i = 0; i < 16; i++) {
            id[i] = (byte) (0xa0 + i);
        }
        String sym = "rack4-h"; // 7 bytes -> EXATLEN 8
        int tel = 1032 + 4 + 16 + 4 + 8;
        ByteBuffer b = ByteBuffer.allocate(1024 + tel).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(0, 1024 + tel).putLong(8, 1).putShort(16, (short) 2).putShort(18, (short) 1).putShort(22, (short) 0x5f);
        b.put(24, HOST.getBytes(StandardCharsets.US_ASCII));
        b.put(280, "h1.lab".getBytes(StandardCharsets.US_ASCII));
        b.put(536, "Linux 6.12".getBytes(StandardCharsets.US_ASCII));
        int e = 1024;
        b.put(e, (byte) 3).put(e + 1, (byte) 1);
        b.put(e + 256, HOST.getBytes(StandardCharsets.US_ASCII));
        b.putInt(e + 1024, tel).putShort(e + 1028, (short) 2);
        b.putShort(e + 1032, (short) 1).putShort(e + 1034, (short) 16).put(e + 1036, id);
        b.putShort(e + 1052, (short) 2).putShort(e + 1054, (short) 8).put(e + 1056, (sym + " ").getBytes(StandardCharsets.US_ASCII));
        DiscoveryInformation d = DiscoveryInformation.parse(b, b.capacity(), 16);
        assertEquals(DiscoveryInformation.ETYPE_HOST, d.entityType());
        assertEquals(HOST, d.entityId());
        assertEquals("h1.lab", d.entityName());
        assertEquals("Linux 6.12", d.entityVersion());
        DiscoveryInformation.Entry x = d.entries().get(0);
        assertEquals(DiscoveryLogEntry.TRTYPE_TCP, x.trtype());
        assertEquals("", x.traddr());
        assertEquals(HOST, x.nqn());
        assertArrayEquals(id, x.hostId());
        assertEquals(sym, x.symbolicName());
        // and our encoder writes the same layout (with the symbolic name NUL padded)
        ByteBuffer ours = d.encode();
        assertEquals(b.capacity(), ours.capacity());
        assertEquals(Hex.of(b, 0, 24), Hex.of(ours, 0, 24));
        assertEquals(Hex.of(b, 1024 + 1024, 32), Hex.of(ours, 1024 + 1024, 32));
        assertEquals(d, DiscoveryInformation.parse(ours, ours.capacity(), 16));
    }

    @Test
    void aTargetsRegistrationRoundTripsInTheExtendedFormat() throws Exception {
        DiscoveryInformation d = new DiscoveryInformation(DiscoveryInformation.ETYPE_DDC, "nqn.2026-12.io.nvmeof:gw", "gw", "v",
                List.of(new DiscoveryInformation.Entry(3, 1, 2, 2, 7, 0xffff, 32, "4420", "nqn.2026-12.io.nvmeof:vol", "10.0.0.1",
                        null, null, "")));
        ByteBuffer b = d.encode();
        assertEquals(1024 + 1032, b.getInt(0));
        assertEquals(1, b.getLong(8));
        assertEquals(2, b.getShort(16));
        assertEquals(2, b.getShort(18));
        assertEquals(0x5f, b.getShort(22));
        assertEquals(Hex.clean("03 01 02 02 0700 ffff 2000"), Hex.of(b, 1024, 10));
        assertEquals(1032, b.getInt(1024 + 1024));
        assertEquals(0, b.getShort(1024 + 1028));
        assertEquals(d, DiscoveryInformation.parse(b, b.capacity(), 16));
    }

    @Test
    void hostileDataIsRefusedNamingTheField() {
        ByteBuffer good = new DiscoveryInformation(DiscoveryInformation.ETYPE_DDC, "nqn.2026-12.io.nvmeof:gw", "", "",
                List.of(new DiscoveryInformation.Entry(3, 1, 2, 2, 1, 0xffff, 32, "4420", "nqn.2026-12.io.nvmeof:v", "10.0.0.1",
                        null, null, "named"))).encode();
        assertEquals("TDL", field(good, good.capacity() - 4));
        assertEquals("TDL", field(ByteBuffer.allocate(100), 100));
        assertEquals("NUMENT", field(with(good, b -> b.putLong(8, 2)), good.capacity()));
        assertEquals("NUMENT", field(with(good, b -> b.putLong(8, -1)), good.capacity()));
        assertEquals("NUMENT", field(with(good, b -> b.putLong(8, 1)), good.capacity(), 0));
        assertEquals("ENTFMT", field(with(good, b -> b.putShort(16, (short) 9)), good.capacity()));
        assertEquals("ETYPE", field(with(good, b -> b.putShort(18, (short) 0)), good.capacity()));
        assertEquals("EID", field(with(good, b -> b.put(24, new byte[256])), good.capacity()));
        assertEquals("EID", field(with(good, b -> b.put(30, (byte) 0x0a)), good.capacity()));
        assertEquals("entry 0 TEL", field(with(good, b -> b.putInt(2048, 1030)), good.capacity()));
        assertEquals("entry 0 TEL", field(with(good, b -> b.putInt(2048, 1 << 30)), good.capacity()));
        assertEquals("entry 0 attribute 0 EXATLEN", field(with(good, b -> b.putShort(2058, (short) 400)), good.capacity()));
        assertEquals("entry 0 attribute 1", field(with(good, b -> b.putShort(2052, (short) 2)), good.capacity()));
        assertEquals("entry 0 attribute 0 host identifier", field(with(good, b -> b.putShort(2056, (short) 1)), good.capacity()));
        assertEquals("entry 0 TRADDR", field(with(good, b -> b.put(1024 + 512, (byte) 0xff)), good.capacity()));
        // a symbolic name longer than any name field: refused, not kept (the attribute is in TEL here)
        String longName = "n".repeat(DiscoveryInformation.SYMBOLIC_NAME_MAX + 4);
        ByteBuffer big = new DiscoveryInformation(DiscoveryInformation.ETYPE_DDC, "nqn.2026-12.io.nvmeof:gw", "", "",
                List.of(new DiscoveryInformation.Entry(3, 1, 2, 2, 1, 0xffff, 32, "4420", "nqn.2026-12.io.nvmeof:v", "10.0.0.1",
                        null, null, longName))).encode();
        assertEquals("entry 0 attribute 0 symbolic name", field(big, big.capacity()));
    }

    interface Change {
        void apply(ByteBuffer b);
    }

    static ByteBuffer with(ByteBuffer b, Change c) {
        ByteBuffer copy = ByteBuffer.allocate(b.capacity()).order(ByteOrder.LITTLE_ENDIAN);
        copy.put(0, b, 0, b.capacity());
        c.apply(copy);
        return copy;
    }

    static String field(ByteBuffer b, int length) {
        return field(b, length, 1024);
    }

    static String field(ByteBuffer b, int length, long max) {
        return assertThrows(DiscoveryInformation.MalformedException.class, () -> DiscoveryInformation.parse(b, length, max)).field;
    }
}
