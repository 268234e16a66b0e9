package io.nvmeof.daemon;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.daemon.config.Schemas;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

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
    /**
     * The kinds of entry: subsystems (by NQN: their attributes, or null), namespaces ("NQN#NSID":
     * the namespace, or null), subsystem_hosts ("NQN#HOST": allowed or not), ports (by PORTID),
     * port_subsystems ("PORTID#NQN": served there or not), port_ana ("PORTID#GRPID": the ANA
     * group's state through the port, or null for the file's), hosts (by NQN: the files their keys
     * are in, never a key, or null), host_qos (by NQN: the host's rate limits).
     * Each is as fine as what the API changes, so that an operator's later edit of the file to
     * anything else still takes effect.
     */
    static final List<String> KINDS = List.of("subsystems", "namespaces", "subsystem_hosts", "ports",
            "port_subsystems", "port_ana", "hosts", "host_qos");
    /** What a host entry may hold: what {@code set_host_keys} takes (keys by file, by absolute path). */
    public static final List<String> HOST_FIELDS = Schemas.HOST_KEYS_BY_FILE;
    private static final System.Logger LOG = System.getLogger(StateStore.class.getName());
    private static final SecureRandom RANDOM = new SecureRandom();
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
        for (String k : KINDS) {
            n.putObject(k);
        }
        return n;
    }

    /**
     * The state saved, or an empty one if there is no file yet. A file that cannot be read as
     * a state is an error naming it: it is never silently reset. A host entry that holds more
     * than {@code set_host_keys} takes (a key written inline, as {@code set_qos} once copied
     * them; a key file by relative path; anything else) is dropped with a warning naming the
     * host, so its keys come from the configuration file again; its rate limits move to {@code
     * host_qos}. {@link #scrubbed} says whether that happened, so the caller saves it at once.
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
        for (String k : KINDS) {
            JsonNode entries = state.get(k);
            if (entries == null) {
                state.putObject(k);
            } else if (!entries.isObject()) {
                throw new IOException("state file " + file + ": \"" + k + "\" is not an object; it is corrupt");
            }
        }
        scrubbed = scrubHosts(state);
        return state;
    }

    private List<String> scrubbed = List.of();
    private final Map<String, JsonNode> dropped = new TreeMap<>();

    /** The hosts whose entries the last {@link #load} dropped (see there). */
    public List<String> scrubbed() {
        return scrubbed;
    }

    /** What the last {@link #load} dropped for host {@code nqn} (null: nothing), to keep its keys in key files. */
    public JsonNode dropped(String nqn) {
        return dropped.get(nqn);
    }

    /** Drops host entries that hold more than {@code set_host_keys} takes; their QoS moves to host_qos. */
    private List<String> scrubHosts(ObjectNode state) {
        ObjectNode hosts = (ObjectNode) state.get("hosts");
        ObjectNode qos = (ObjectNode) state.get("host_qos");
        List<String> dropped = new ArrayList<>();
        List<String> names = new ArrayList<>();
        hosts.fieldNames().forEachRemaining(names::add);
        for (String nqn : names) {
            JsonNode h = hosts.get(nqn);
            if (h.isNull()) {
                continue;
            }
            String problem = hostProblem(h);
            if (problem == null) {
                continue;
            }
            if (h.has("qos") && !qos.has(nqn)) {
                qos.set(nqn, h.get("qos"));
            }
            this.dropped.put(nqn, hosts.remove(nqn));
            dropped.add(nqn);
            LOG.log(System.Logger.Level.WARNING, "state file {0}: host {1}''s entry {2}; dropped, so its keys come from"
                    + " the configuration file and its key files again", file, nqn, problem);
        }
        return dropped;
    }

    /** Null if {@code h} is what {@code set_host_keys} makes, else what is wrong with it. */
    static String hostProblem(JsonNode h) {
        if (!h.isObject()) {
            return "is not an object";
        }
        for (Iterator<String> it = h.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!HOST_FIELDS.contains(f)) {
                return f.endsWith("_key") ? "held a key inline (" + f + ")" : "held " + f;
            }
            if (f.endsWith("_file") && !(h.get(f).isTextual() && h.get(f).asText().startsWith("/"))) {
                return "named " + f + " by a relative path";
            }
        }
        return null;
    }

    /** Replaces the saved state with {@code state}, atomically and durably. */
    public void save(ObjectNode state) throws IOException {
        writePrivately(file, JSON.writeValueAsString(state) + "\n");
    }

    /**
     * Replaces {@code file} with {@code text}, readable by its owner only: written to a new
     * temporary file beside it (a name of its own, created exclusively with mode 0600 and no
     * link followed, so nothing planted there is written through), flushed to the disk, renamed
     * over it (which replaces a link there, never what it points to), the directory flushed, so
     * that a crash leaves the old file or the new one, never a mixture.
     */
    public static void writePrivately(Path file, String text) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = dir.resolve("." + file.getFileName() + "." + Long.toUnsignedString(RANDOM.nextLong(), 36) + ".tmp");
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        try (FileChannel ch = FileChannel.open(tmp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rw-------")))) {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            while (b.hasRemaining()) {
                ch.write(b);
            }
            ch.force(true);
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        }
    }

    /** The configuration {@code base} (our JSON form) with {@code state} over it. */
    public static ObjectNode merge(ObjectNode base, ObjectNode state) {
        ObjectNode out = base.deepCopy();
        ArrayNode subsystems = array(out, "subsystems");
        ArrayNode ports = array(out, "ports");
        for (Map.Entry<String, JsonNode> e : entries(state, "subsystems")) {
            ObjectNode existing = find(subsystems, "nqn", e.getKey());
            if (e.getValue().isNull()) {
                remove(subsystems, "nqn", e.getKey());
                for (JsonNode p : ports) {
                    remove((ArrayNode) p.path("subsystems"), e.getKey());
                }
            } else if (existing != null) {
                e.getValue().fields().forEachRemaining(f -> existing.set(f.getKey(), f.getValue()));
            } else {
                ObjectNode s = e.getValue().deepCopy();
                s.putArray("namespaces");
                s.putArray("allowed_hosts");
                subsystems.add(s);
            }
        }
        for (Map.Entry<String, JsonNode> e : entries(state, "namespaces")) {
            String[] k = e.getKey().split("#", 2);
            ObjectNode s = find(subsystems, "nqn", k[0]);
            if (s != null) {
                ArrayNode l = array(s, "namespaces");
                remove(l, "nsid", k[1]);
                if (!e.getValue().isNull()) {
                    l.add(e.getValue());
                }
            }
        }
        for (Map.Entry<String, JsonNode> e : entries(state, "subsystem_hosts")) {
            String[] k = e.getKey().split("#", 2);
            ObjectNode s = find(subsystems, "nqn", k[0]);
            if (s != null) {
                ArrayNode l = array(s, "allowed_hosts");
                remove(l, k[1]);
                if (e.getValue().asBoolean()) {
                    l.add(k[1]);
                }
                s.put("allow_any_host", false);
            }
        }
        for (Map.Entry<String, JsonNode> e : entries(state, "ports")) {
            remove(ports, "portid", e.getKey());
            if (!e.getValue().isNull()) {
                ports.add(e.getValue().deepCopy());
            }
        }
        for (Map.Entry<String, JsonNode> e : entries(state, "port_subsystems")) {
            String[] k = e.getKey().split("#", 2);
            ObjectNode p = find(ports, "portid", k[0]);
            if (p != null) {
                ArrayNode l = array(p, "subsystems");
                remove(l, k[1]);
                if (e.getValue().asBoolean() && find(subsystems, "nqn", k[1]) != null) {
                    l.add(k[1]);
                }
            }
        }
        for (Map.Entry<String, JsonNode> e : entries(state, "port_ana")) {
            String[] k = e.getKey().split("#", 2);
            ObjectNode p = find(ports, "portid", k[0]);
            if (p != null && !e.getValue().isNull()) {
                ArrayNode groups = array(p, "ana_groups");
                remove(groups, "grpid", k[1]);
                ObjectNode g = groups.addObject();
                g.put("grpid", Integer.parseInt(k[1]));
                g.putObject("ana").put("state", e.getValue().asText());
            }
        }
        ArrayNode hosts = array(out, "hosts");
        for (Map.Entry<String, JsonNode> e : entries(state, "hosts")) {
            JsonNode qos = find(hosts, "nqn", e.getKey()) != null ? find(hosts, "nqn", e.getKey()).get("qos") : null;
            remove(hosts, "nqn", e.getKey());
            if (!e.getValue().isNull()) {
                ObjectNode h = e.getValue().deepCopy();
                if (qos != null) {
                    h.set("qos", qos); // keys and rate limits are changed apart
                }
                hosts.add(h);
            }
        }
        for (Map.Entry<String, JsonNode> e : entries(state, "host_qos")) {
            ObjectNode h = find(hosts, "nqn", e.getKey());
            if (h == null) {
                h = hosts.addObject().put("nqn", e.getKey());
            }
            h.set("qos", e.getValue());
        }
        return out;
    }

    private static List<Map.Entry<String, JsonNode>> entries(ObjectNode state, String kind) {
        List<Map.Entry<String, JsonNode>> l = new ArrayList<>();
        JsonNode n = state.get(kind);
        if (n != null) {
            n.fields().forEachRemaining(l::add);
        }
        return l;
    }

    private static ArrayNode array(ObjectNode parent, String field) {
        JsonNode n = parent.get(field);
        return n != null && n.isArray() ? (ArrayNode) n : parent.putArray(field);
    }

    private static ObjectNode find(ArrayNode list, String key, String value) {
        for (JsonNode n : list) {
            if (n.isObject() && n.path(key).asText().equals(value)) {
                return (ObjectNode) n;
            }
        }
        return null;
    }

    private static void remove(ArrayNode list, String key, String value) {
        for (int i = list.size() - 1; i >= 0; i--) {
            if (list.get(i).path(key).asText().equals(value)) {
                list.remove(i);
            }
        }
    }

    private static void remove(ArrayNode list, String value) {
        for (int i = list.size() - 1; i >= 0; i--) {
            if (list.get(i).asText().equals(value)) {
                list.remove(i);
            }
        }
    }

    /** Whether {@code state} changes nothing. */
    public static boolean isEmpty(ObjectNode state) {
        for (String k : KINDS) {
            if (state.has(k) && !state.get(k).isEmpty()) {
                return false;
            }
        }
        return true;
    }
}
