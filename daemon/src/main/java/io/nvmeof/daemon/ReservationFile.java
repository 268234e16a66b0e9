package io.nvmeof.daemon;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.protocol.Reservation;
import io.nvmeof.target.ReservationStore;
import io.nvmeof.target.Reservations;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The reservations with Persist Through Power Loss on, in one file of the service's state
 * directory beside the management API's {@link StateStore}, replaced whole on each change the same
 * way (a temporary file flushed, renamed over, the directory flushed). Each namespace is known by
 * "subsystem NQN#NSID#NGUID"; its entry has the generation, the reservation's type and holder, and
 * the registrants (Host Identifier, host NQN, key). A file that cannot be read back whole is an
 * error naming it and the entry at fault: reservations are never silently dropped.
 */
public final class ReservationFile implements ReservationStore.Persistence {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final int VERSION = 1;
    private final Path file;

    public ReservationFile(Path file) {
        this.file = file;
    }

    @Override
    public String describe() {
        return file.toString();
    }

    @Override
    public Map<String, Reservations.State> load() throws IOException {
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            return Map.of();
        }
        JsonNode root;
        try {
            root = JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw corrupt("not JSON: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject() || root.path("version").asInt() != VERSION
                || !root.path("namespaces").isObject()) {
            throw corrupt("not reservations of version " + VERSION + " (\"version\" and \"namespaces\")");
        }
        Map<String, Reservations.State> out = new HashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = root.get("namespaces").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            try {
                out.put(e.getKey(), state(e.getValue()));
            } catch (IllegalArgumentException | NullPointerException x) {
                throw corrupt("namespace \"" + e.getKey() + "\": " + x.getMessage());
            }
        }
        return out;
    }

    private IOException corrupt(String why) {
        return new IOException("reservation file " + file + " is corrupt (" + why
                + "); the reservations it kept cannot be restored: repair it, or move it away to drop them");
    }

    private static Reservations.State state(JsonNode n) {
        if (!n.isObject() || !n.path("registrants").isArray()) {
            throw new IllegalArgumentException("not an object with \"registrants\"");
        }
        int type = n.path("type").asInt(-1);
        if (type < 0 || type > Reservation.EXCLUSIVE_ACCESS_ALL_REGISTRANTS) {
            throw new IllegalArgumentException("\"type\" must be 0..6");
        }
        List<Reservations.Registrant> regs = new ArrayList<>();
        for (JsonNode r : n.get("registrants")) {
            regs.add(new Reservations.Registrant(UUID.fromString(text(r, "host_id")), text(r, "host_nqn"),
                    Long.parseUnsignedLong(text(r, "key").replaceFirst("^0x", ""), 16)));
        }
        if (regs.size() > Reservations.MAX_REGISTRANTS) {
            throw new IllegalArgumentException("more than " + Reservations.MAX_REGISTRANTS + " registrants");
        }
        UUID holder = n.hasNonNull("holder") ? UUID.fromString(n.get("holder").asText()) : null;
        if ((type == 0) != (holder == null) || holder != null && regs.stream().noneMatch(r -> r.hostId().equals(holder))) {
            throw new IllegalArgumentException("\"holder\" must be a registrant exactly when there is a reservation");
        }
        if (!n.path("generation").canConvertToLong()) {
            throw new IllegalArgumentException("\"generation\" must be a number");
        }
        return new Reservations.State((int) n.get("generation").asLong(), type, holder, regs, n.path("ptpl").asBoolean(true));
    }

    private static String text(JsonNode n, String field) {
        JsonNode v = n.get(field);
        if (v == null || !v.isTextual()) {
            throw new IllegalArgumentException("a registrant's \"" + field + "\" is missing");
        }
        return v.asText();
    }

    @Override
    public void save(Map<String, Reservations.State> states) throws IOException {
        ObjectNode root = JSON.createObjectNode();
        root.put("version", VERSION);
        ObjectNode nss = root.putObject("namespaces");
        for (Map.Entry<String, Reservations.State> e : states.entrySet()) {
            Reservations.State s = e.getValue();
            ObjectNode n = nss.putObject(e.getKey());
            n.put("generation", Integer.toUnsignedLong(s.generation()));
            n.put("type", s.type());
            n.put("holder", s.holder() == null ? null : s.holder().toString());
            n.put("ptpl", s.ptpl());
            ArrayNode regs = n.putArray("registrants");
            for (Reservations.Registrant r : s.registrants()) {
                regs.addObject().put("host_id", r.hostId().toString()).put("host_nqn", r.hostNqn())
                        .put("key", "0x" + Long.toHexString(r.key()));
            }
        }
        StateStore.writePrivately(file, JSON.writeValueAsString(root) + "\n");
    }
}
