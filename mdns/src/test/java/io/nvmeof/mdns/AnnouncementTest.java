package io.nvmeof.mdns;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** TP8009's service types and TXT keys, written as SPDK writes them and read as nvme-stas reads them. */
class AnnouncementTest {
    @Test
    void tcpAndRdmaAnnouncementsCarryTheirServiceTypeAndTxt() {
        Announcement tcp = new Announcement("a", "tcp", "10.0.0.1", 8009, "nqn.2014-08.org.nvmexpress.discovery");
        assertEquals("_nvme-disc._tcp.local.", Announcement.serviceType("tcp"));
        assertEquals(Map.of("nqn", "nqn.2014-08.org.nvmexpress.discovery", "p", "tcp"), tcp.txt());
        assertEquals("nvme+tcp://10.0.0.1:8009", tcp.uri());
        Announcement rdma = new Announcement("b", "rdma", "fd00::1", 4420, "nqn.2014-08.org.nvmexpress.discovery");
        assertEquals("_nvme-disc._udp.local.", Announcement.serviceType("rdma"));
        assertEquals("roce", rdma.txt().get("p"));
        assertEquals("nvme+rdma://[fd00::1]:4420", rdma.uri());
    }

    @Test
    void txtIsReadAsNvmeStasReadsIt() {
        Map<String, String> raw = new LinkedHashMap<>();
        raw.put("NQN", "nqn.2014-08.org.nvmexpress.discovery");
        raw.put("P", "RoCE");
        raw.put("x", "a=b");
        Map<String, String> t = Announcement.readTxt(raw);
        assertEquals("nqn.2014-08.org.nvmexpress.discovery", t.get("nqn"));
        assertEquals("rdma", Announcement.trtypeOf(t.get("p")));
        assertNull(t.get("x"), "a value with a second '=' is dropped");
        assertEquals("tcp", Announcement.trtypeOf("tcp"));
        assertEquals("rdma", Announcement.trtypeOf("iwarp"));
        assertNull(Announcement.trtypeOf("fc"));
        assertNull(Announcement.trtypeOf(null));
    }
}
