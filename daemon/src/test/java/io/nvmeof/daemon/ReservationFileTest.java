package io.nvmeof.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.Reservations;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The reservations kept for Persist Through Power Loss: read back as written, and never a corrupt file taken for an empty one. */
class ReservationFileTest {
    static final UUID A = UUID.fromString("0a0a0a0a-0000-4000-8000-00000000000a");
    static final UUID B = UUID.fromString("0b0b0b0b-0000-4000-8000-00000000000b");

    @Test
    void whatIsSavedIsLoaded(@TempDir Path dir) throws IOException {
        ReservationFile f = new ReservationFile(dir.resolve("reservations.json"));
        assertEquals(Map.of(), f.load(), "no file yet: nothing kept");
        Reservations.State s = new Reservations.State(0xfffffff0, 4, A, List.of(
                new Reservations.Registrant(A, "nqn.2026-11.io.nvmeof:a", 0xffffffffffffffffL),
                new Reservations.Registrant(B, "nqn.2026-11.io.nvmeof:b", 2)), true);
        f.save(Map.of("nqn.x#1#00", s));
        assertEquals(Map.of("nqn.x#1#00", s), f.load());
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(dir.resolve("reservations.json"))));
    }

    @Test
    void aCorruptFileIsAnErrorNamingIt(@TempDir Path dir) throws IOException {
        Path p = dir.resolve("reservations.json");
        ReservationFile f = new ReservationFile(p);
        for (String bad : List.of("{", "[]", "{\"version\": 2, \"namespaces\": {}}",
                "{\"version\": 1, \"namespaces\": {\"k\": {\"type\": 1, \"holder\": \"" + B + "\", \"generation\": 1,"
                        + " \"registrants\": [{\"host_id\": \"" + A + "\", \"host_nqn\": \"a\", \"key\": \"0x1\"}]}}}",
                "{\"version\": 1, \"namespaces\": {\"k\": {\"type\": 0, \"generation\": 1,"
                        + " \"registrants\": [{\"host_id\": \"not-a-uuid\", \"host_nqn\": \"a\", \"key\": \"0x1\"}]}}}",
                "{\"version\": 1, \"namespaces\": {\"k\": {\"type\": 0, \"generation\": 1,"
                        + " \"registrants\": [{\"host_id\": \"" + A + "\", \"key\": \"0x1\"}]}}}")) {
            Files.writeString(p, bad);
            IOException e = assertThrows(IOException.class, f::load, bad);
            assertTrue(e.getMessage().contains(p.toString()) && e.getMessage().contains("corrupt"), e.getMessage());
        }
    }
}
