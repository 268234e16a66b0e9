package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The host identity read through its root seam: never the machine's own /etc. */
class HostIdentityTest {
    private static final String NQN_UUID = "nqn.2014-08.org.nvmexpress:uuid:0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
    private static final String HOSTID = "5a7d0c51-2b9e-4c7f-9d3e-1f2a3b4c5d6e";

    @TempDir
    Path root;

    private void file(String path, String content) throws IOException {
        Path p = root.resolve(path);
        Files.createDirectories(p.getParent());
        Files.writeString(p, content);
    }

    @Test
    void bothFilesUnpairedAreTakenAsTheyAre() throws IOException {
        // what Debian's nvme-cli package writes: a UUID NQN and a different random host ID
        file("etc/nvme/hostnqn", NQN_UUID + "\n");
        file("etc/nvme/hostid", HOSTID + "\n");
        HostIdentity id = HostIdentity.read(root);
        assertEquals(NQN_UUID, id.hostNqn());
        assertEquals(UUID.fromString(HOSTID), id.hostId());
        assertEquals(id, HostIdentity.read(root));
    }

    @Test
    void bothFilesPaired() throws IOException {
        file("etc/nvme/hostnqn", NQN_UUID);
        file("etc/nvme/hostid", NQN_UUID.substring(NQN_UUID.lastIndexOf(':') + 1));
        HostIdentity id = HostIdentity.read(root);
        assertEquals(NQN_UUID, id.hostNqn());
        assertTrue(id.hostNqn().endsWith(id.hostId().toString()));
    }

    @Test
    void onlyAUuidNqnGivesItsOwnUuid() throws IOException {
        file("etc/nvme/hostnqn", NQN_UUID);
        HostIdentity id = HostIdentity.read(root);
        assertEquals(UUID.fromString("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"), id.hostId());
    }

    @Test
    void onlyANamedNqnGivesAStableDerivedId() throws IOException {
        file("etc/nvme/hostnqn", "nqn.2026-11.io.example:host-a");
        HostIdentity a = HostIdentity.read(root);
        assertEquals("nqn.2026-11.io.example:host-a", a.hostNqn());
        assertEquals(a, HostIdentity.read(root));
        assertEquals(a, HostIdentity.of("nqn.2026-11.io.example:host-a", null));
        assertNotEquals(a.hostId(), HostIdentity.of("nqn.2026-11.io.example:host-b", null).hostId());
    }

    @Test
    void onlyAHostIdGivesTheUuidNqn() throws IOException {
        file("etc/nvme/hostid", HOSTID);
        HostIdentity id = HostIdentity.read(root);
        assertEquals("nqn.2014-08.org.nvmexpress:uuid:" + HOSTID, id.hostNqn());
        assertEquals(UUID.fromString(HOSTID), id.hostId());
    }

    @Test
    void neitherFileFallsBackToTheMachineId() throws IOException {
        file("etc/machine-id", "0123456789abcdef0123456789abcdef\n");
        HostIdentity a = HostIdentity.read(root);
        assertTrue(a.hostNqn().startsWith("nqn.2014-08.org.nvmexpress:uuid:"), a.hostNqn());
        assertTrue(a.hostNqn().endsWith(a.hostId().toString()));
        assertEquals(a, HostIdentity.read(root));
        file("etc/machine-id", "fedcba9876543210fedcba9876543210\n");
        assertNotEquals(a, HostIdentity.read(root));
    }

    @Test
    void nothingAtAllIsStableWithinTheProcess() {
        HostIdentity a = HostIdentity.read(root);
        assertTrue(a.hostNqn().endsWith(a.hostId().toString()));
        assertEquals(a, HostIdentity.read(root));
    }

    @Test
    void malformedFilesAreIgnored() throws IOException {
        file("etc/nvme/hostnqn", "not an nqn");
        file("etc/nvme/hostid", "not-a-uuid");
        file("etc/machine-id", "0123456789abcdef0123456789abcdef");
        HostIdentity fromMachine = HostIdentity.read(root);
        Files.delete(root.resolve("etc/nvme/hostnqn"));
        Files.delete(root.resolve("etc/nvme/hostid"));
        assertEquals(HostIdentity.read(root), fromMachine);

        file("etc/nvme/hostnqn", NQN_UUID);
        file("etc/nvme/hostid", "zzzz");        // a bad host ID does not spoil a good NQN
        assertEquals(UUID.fromString("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"), HostIdentity.read(root).hostId());
        file("etc/nvme/hostnqn", "nqn.2014-08.org.nvmexpress:uuid:not-a-uuid");
        file("etc/nvme/hostid", HOSTID);         // a bad NQN does not spoil a good host ID
        assertEquals("nqn.2014-08.org.nvmexpress:uuid:" + HOSTID, HostIdentity.read(root).hostNqn());
    }

    @Test
    void anIdentityNeedsAValidNqnAndAnId() {
        assertThrows(IllegalArgumentException.class, () -> new HostIdentity("bad", UUID.randomUUID()));
        assertThrows(IllegalArgumentException.class, () -> new HostIdentity(NQN_UUID, null));
    }
}
