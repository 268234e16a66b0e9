package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class NvmeofUriTest {
    @Test
    void parsesTheDocumentedForm() {
        NvmeofUri u = NvmeofUri.parse("nvme+tcp://127.0.0.1:4420/nqn.2026-11.io.nvmeof:disk?nsid=3");
        assertEquals("tcp", u.transport());
        assertEquals("127.0.0.1", u.host());
        assertEquals(4420, u.port());
        assertEquals("nqn.2026-11.io.nvmeof:disk", u.subsystemNqn());
        assertEquals(3, u.nsid());
        assertEquals("nvme+tcp://127.0.0.1:4420/nqn.2026-11.io.nvmeof:disk?nsid=3", u.toString());
        NvmeofUri d = NvmeofUri.parse("nvme+tcp://localhost/nqn.2026-11.io.nvmeof:disk");
        assertEquals(4420, d.port());
        assertEquals(0, d.nsid());
        assertEquals(8009, NvmeofUri.parse("nvme+tcp://localhost").port());
    }

    @Test
    void parsesRdmaWithProvider() {
        NvmeofUri u = NvmeofUri.parse("nvme+rdma://192.168.1.5/nqn.2026-11.io.nvmeof:disk?provider=soft&nsid=2");
        assertEquals("rdma", u.transport());
        assertEquals(4420, u.port());
        assertEquals("soft", u.option("provider"));
        assertEquals(2, u.nsid());
        assertEquals("nvme+rdma://192.168.1.5:4420/nqn.2026-11.io.nvmeof:disk?nsid=2&provider=soft", u.toString());
        assertEquals(4420, NvmeofUri.parse("nvme+rdma://10.0.0.1").port(), "RDMA discovery is on 4420");
        assertEquals(null, NvmeofUri.parse("nvme+rdma://10.0.0.1/nqn.2026-11.io.nvmeof:disk").option("provider"));
        assertMessage("nvme+rdma://10.0.0.1/nqn.2026-11.io.nvmeof:disk?provider=magic", "provider must be one of");
        assertMessage("nvme+tcp://10.0.0.1/nqn.2026-11.io.nvmeof:disk?provider=soft", "unknown parameter 'provider' for nvme+tcp");
    }

    @Test
    void errorsSayWhatIsWrong() {
        assertMessage("http://h:1/nqn.2026-11.io.nvmeof:x", "scheme must be nvme+");
        assertMessage("nvme+tcp:///nqn.2026-11.io.nvmeof:x", "no host");
        assertMessage("nvme+tcp://h:1/notanqn", "NQN must look like");
        assertMessage("nvme+tcp://h:1/nqn.2026-11.io.nvmeof:x?nsid=0", "nsid must be");
        assertMessage("nvme+tcp://h:1/nqn.2026-11.io.nvmeof:x?colour=red", "unknown parameter");
        assertMessage("nvme+tcp://h 1", "bad URI");
    }

    private static void assertMessage(String uri, String part) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NvmeofUri.parse(uri));
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }
}
