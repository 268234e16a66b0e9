package io.nvmeof.daemon;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The changes made through the management API, kept across restarts in one file of the
 * service's state directory: for each subsystem (by NQN), port (by PORTID) and host (by NQN)
 * the API changed, what it is now, or null where the API removed it. At start the daemon
 * applies the operator's configuration file, then these. The file is replaced whole on each
 * change: written to a temporary file, flushed to the disk, renamed over the old one, and the
 * directory flushed, so that a crash leaves the old state or the new one, never a mixture.
 * The operator's configuration file is never written.
 */
public final class StateStore {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    /** The kinds of entry, each keyed by its own field. */
    static final Map<String, String> KINDS = Map.of("subsystems", "nqn", "ports", "portid", "hosts", "nqn");
    private static final int VERSION = 1;

    private final Path file;

    public StateStore(Path file) {
        this.file = file;
    }

    public Path file() {
        return file;
    }

    /** An empty state: the file's configuration as it is. */
    public static ObjectNode empty() {
        ObjectNode n = JSON.createObjectNode();
        n.put("version", VERSION);
        for (String k : KINDS.keySet()) {
            n.putObject(k);
        }
        return n;
    }

    /**
     * The state saved, or an empty one if there is no file yet. A file that cannot be read as
     * a state is an error naming it: it is never silently reset.
     */
    public ObjectNode load() throws IOException {
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            return empty();
        }
        JsonNode n;
        try {
            n = JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IOException("state file " + file + " is corrupt (not JSON: " + e.getOriginalMessage()
                    + "); move it away to start from the configuration file alone", e);
        }
        if (n == null || !n.isObject() || n.path("version").asInt() != VERSION) {
            throw new IOException("state file " + file + " is not a state of this version (\"version\": " + VERSION
                    + "); move it away to start from the configuration file alone");
        }
        ObjectNode state = (ObjectNode) n;
        for (String k : KINDS.keySet()) {
            JsonNode entries = state.get(k);
            if (entries == null) {
                state.putObject(k);
            } else if (!entries.isObject()) {
                throw new IOException("state file " + file + ": \"" + k + "\" is not an object; it is corrupt");
            }
        }
        return state;
    }

    /** Replaces the saved state with {@code state}, atomically and durably. */
    public void save(ObjectNode state) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        byte[] bytes = (JSON.writeValueAsString(state) + "\n").getBytes(StandardCharsets.UTF_8);
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-------"));
            ByteBuffer b = ByteBuffer.wrap(bytes);
            while (b.hasRemaining()) {
                ch.write(b);
            }
            ch.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel dir = FileChannel.open(file.toAbsolutePath().getParent(), StandardOpenOption.READ)) {
            dir.force(true);
        }
    }

    /**
     * The configuration {@code base} (our JSON form) with {@code state} over it: an entry of the
     * state replaces the item of the same key, or removes it where it is null.
     */
    public static ObjectNode merge(ObjectNode base, ObjectNode state) {
        ObjectNode out = base.deepCopy();
        for (Map.Entry<String, String> kind : KINDS.entrySet()) {
            JsonNode entries = state.get(kind.getKey());
            if (entries == null || entries.isEmpty()) {
                continue;
            }
            ArrayNode list = out.has(kind.getKey()) && out.get(kind.getKey()).isArray()
                    ? (ArrayNode) out.get(kind.getKey()) : out.putArray(kind.getKey());
            for (Iterator<Map.Entry<String, JsonNode>> it = entries.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                for (int i = list.size() - 1; i >= 0; i--) {
                    if (list.get(i).path(kind.getValue()).asText().equals(e.getKey())) {
                        list.remove(i);
                    }
                }
                if (!e.getValue().isNull()) {
                    list.add(e.getValue());
                }
            }
        }
        return out;
    }

    /** Whether {@code state} changes nothing. */
    public static boolean isEmpty(ObjectNode state) {
        for (String k : KINDS.keySet()) {
            if (state.has(k) && !state.get(k).isEmpty()) {
                return false;
            }
        }
        return true;
    }

    /** The kinds of entry a state has. */
    public static List<String> kinds() {
        return List.copyOf(KINDS.keySet());
    }
}
