package io.nvmeof.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.daemon.config.ConfigLoader;
import io.nvmeof.daemon.config.TargetConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateStoreTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String A = "nqn.2026-11.io.nvmeof:a";

    @TempDir
    Path dir;

    private static ObjectNode file(String namespaces) throws IOException {
        return (ObjectNode) JSON.readTree("""
                {"ports": [{"portid": 1, "trtype": "tcp", "traddr": "127.0.0.1", "trsvcid": 4420, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "namespaces": [%s]}]}""".formatted(A, A, namespaces));
    }

    /** The API's entries are as fine as its changes: the operator's later edit of anything else takes effect. */
    @Test
    void theFilesOwnEditsStillTakeEffectUnderTheApisChanges() throws IOException {
        ObjectNode state = StateStore.empty();
        ((ObjectNode) state.get("namespaces")).set(A + "#3", JSON.readTree("{\"nsid\": 3, \"backend\": \"ram\", \"size\": 4096}"));
        ((ObjectNode) state.get("subsystem_hosts")).put(A + "#nqn.2014-08.org.nvmexpress:uuid:h1", true);
        String one = "{\"nsid\": 1, \"backend\": \"ram\", \"size\": 4096}";
        String two = "{\"nsid\": 2, \"backend\": \"ram\", \"size\": 8192}";
        TargetConfig before = ConfigLoader.parse(StateStore.merge(file(one + "," + two), state), null);
        assertEquals(List.of(1, 2, 3), before.subsystems().get(0).namespaces().stream().map(n -> n.nsid()).toList());
        assertEquals(List.of("nqn.2014-08.org.nvmexpress:uuid:h1"), before.subsystems().get(0).allowedHosts());
        // the operator takes namespace 2 out of the file: it goes, the API's namespace 3 stays
        TargetConfig after = ConfigLoader.parse(StateStore.merge(file(one), state), null);
        assertEquals(List.of(1, 3), after.subsystems().get(0).namespaces().stream().map(n -> n.nsid()).toList());
        // a subsystem the API removed leaves no port pointing at it
        ((ObjectNode) state.get("subsystems")).putNull(A);
        TargetConfig gone = ConfigLoader.parse(StateStore.merge(file(one), state), null);
        assertEquals(List.of(), gone.subsystems());
        assertEquals(List.of(), gone.ports().get(0).subsystems());
    }

    @Test
    void savedPrivatelyAndReadBackAndACorruptFileIsNamed() throws IOException {
        StateStore store = new StateStore(dir.resolve("state/state.json"));
        assertTrue(StateStore.isEmpty(store.load()), "no file yet: nothing changed");
        ObjectNode state = StateStore.empty();
        ((ObjectNode) state.get("subsystems")).set(A, JSON.readTree("{\"nqn\": \"" + A + "\"}"));
        store.save(state);
        assertEquals(state, store.load());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(store.file())));
        assertEquals(List.of("state.json"), Files.list(store.file().getParent()).map(p -> p.getFileName().toString()).toList(),
                "no temporary file left");
        Files.writeString(store.file(), "{\"version\": 1, \"subsystems\": {\"x\"");
        IOException e = assertThrows(IOException.class, store::load);
        assertTrue(e.getMessage().startsWith("state file " + store.file() + " is corrupt"), e.getMessage());
        Files.writeString(store.file(), "{\"version\": 9}");
        e = assertThrows(IOException.class, store::load);
        assertTrue(e.getMessage().contains("is not a state of this version"), e.getMessage());
    }
}
