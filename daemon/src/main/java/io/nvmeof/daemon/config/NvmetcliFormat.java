package io.nvmeof.daemon.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.protocol.auth.DhGroup;
import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.target.HostSecurity;
import io.nvmeof.target.TcpTransport;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * What {@code nvmetcli save} writes for the Linux kernel target, translated into our format in
 * front of the one reader, as nvmetcli's own {@code dump()} and {@code _setup_attrs()} walk one
 * tree: {@code ports[].addr} flattened (its {@code tsas}/{@code treq} become the tcp transport's
 * {@code tls}), {@code subsystems[].attr} lifted, {@code namespaces[].device} made a file or block
 * namespace (a disabled one left out), {@code hosts[].dhchap} made our host keys. An error the
 * reader finds in the translation names the field as the nvmetcli file has it ({@link #theirs}).
 * Fields nvmetcli writes that the target does not take are named in a warning each.
 */
final class NvmetcliFormat {
    private static final System.Logger LOG = System.getLogger(ConfigLoader.class.getName());
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private static final Set<String> SUBSYSTEM = Set.of("nqn", "attr", "allowed_hosts", "namespaces");
    private static final Set<String> SUBSYSTEM_ATTR = Set.of("allow_any_host", "serial", "model", "firmware",
            "ieee_oui", "cntlid_min", "cntlid_max");
    private static final Set<String> NAMESPACE = Set.of("nsid", "enable", "device", "ana_grpid");
    private static final Set<String> DEVICE = Set.of("path", "uuid");
    private static final Set<String> PORT = Set.of("portid", "addr", "subsystems", "ana_groups", "referrals");
    private static final Set<String> ADDR = Set.of("trtype", "traddr", "trsvcid", "adrfam", "tsas", "treq");
    private static final Set<String> HOST = Set.of("nqn", "dhchap");
    private static final Set<String> DHCHAP = Set.of("key", "ctrl_key", "hash", "dhgroup");

    /** Our document, and for each of its paths that moved, the path the nvmetcli file has. */
    private final ObjectNode ours = JSON.objectNode();
    private final Map<String, String> theirs = new HashMap<>();

    private NvmetcliFormat() {
    }

    /** nvmetcli writes ports[].addr and subsystems[].attr objects. */
    static boolean is(JsonNode root) {
        for (JsonNode p : root.path("ports")) {
            if (p.has("addr")) {
                return true;
            }
        }
        for (JsonNode s : root.path("subsystems")) {
            if (s.has("attr")) {
                return true;
            }
        }
        return false;
    }

    /** Reads the nvmetcli document {@code root} by translating it and reading the translation with {@code reader}. */
    static TargetConfig read(JsonNode root, Function<JsonNode, TargetConfig> reader) {
        NvmetcliFormat t = new NvmetcliFormat();
        t.translate(root);
        try {
            return reader.apply(t.ours);
        } catch (ConfigException e) {
            String field = t.theirs(e.field());
            throw field.equals(e.field()) ? e : new ConfigException(field, e.getMessage().substring(e.field().length() + 2));
        }
    }

    /** The nvmetcli path of our {@code field}: the longest moved path it starts with, replaced. */
    String theirs(String field) {
        String best = null;
        for (String k : theirs.keySet()) {
            boolean under = field.equals(k) || field.startsWith(k + ".") || field.startsWith(k + "[");
            if (under && (best == null || k.length() > best.length())) {
                best = k;
            }
        }
        return best == null ? field : theirs.get(best) + field.substring(best.length());
    }

    private void translate(JsonNode root) {
        ObjectSchema.known(root, "", List.of("hosts", "ports", "subsystems"));
        ArrayNode subs = ours.putArray("subsystems");
        JsonNode sl = array(root, "subsystems", "");
        for (int i = 0; i < sl.size(); i++) {
            subs.add(subsystem(sl.get(i), "subsystems[" + i + "]", "subsystems[" + subs.size() + "]"));
        }
        ArrayNode ports = ours.putArray("ports");
        JsonNode pl = array(root, "ports", "");
        for (int i = 0; i < pl.size(); i++) {
            ports.add(port(pl.get(i), "ports[" + i + "]", "ports[" + ports.size() + "]"));
        }
        ArrayNode hosts = ours.putArray("hosts");
        JsonNode hl = array(root, "hosts", "");
        for (int i = 0; i < hl.size(); i++) {
            ObjectNode h = host(hl.get(i), "hosts[" + i + "]", "hosts[" + hosts.size() + "]");
            if (h != null) {
                hosts.add(h);
            }
        }
    }

    private ObjectNode subsystem(JsonNode s, String at, String to) {
        object(s, at);
        ignored(s, at, SUBSYSTEM);
        JsonNode attr = s.path("attr");
        ignored(attr, at + ".attr", SUBSYSTEM_ATTR);
        ObjectNode o = JSON.objectNode();
        move(s, "nqn", o, "nqn", at, to);
        for (String f : List.of("serial", "model", "firmware", "ieee_oui", "cntlid_min", "cntlid_max")) {
            if (!blank(attr.get(f))) {
                move(attr, f, o, f, at + ".attr", to);
            }
        }
        boolean any = "1".equals(attr.path("allow_any_host").asText("0"));
        o.put("allow_any_host", any);
        theirs.put(to + ".allow_any_host", at + ".attr.allow_any_host");
        // with any host allowed the kernel ignores the list: so does the translation
        if (s.has("allowed_hosts") && !any) {
            move(s, "allowed_hosts", o, "allowed_hosts", at, to);
        }
        ArrayNode nss = o.putArray("namespaces");
        JsonNode nl = array(s, "namespaces", at);
        for (int n = 0; n < nl.size(); n++) {
            String nat = at + ".namespaces[" + n + "]";
            String nto = to + ".namespaces[" + nss.size() + "]";
            JsonNode ns = object(nl.get(n), nat);
            ignored(ns, nat, NAMESPACE);
            if (ns.has("enable") && ns.get("enable").asInt(1) == 0) {
                continue;
            }
            JsonNode dev = ns.path("device");
            ignored(dev, nat + ".device", DEVICE);
            String path = dev.path("path").asText("");
            if (path.isEmpty()) {
                throw new ConfigException(nat + ".device.path", "is missing");
            }
            ObjectNode x = nss.addObject();
            theirs.put(nto, nat);
            move(ns, "nsid", x, "nsid", nat, nto);
            x.put("backend", path.startsWith("/dev/") ? "block" : "file");
            move(dev, "path", x, "path", nat + ".device", nto);
            theirs.put(nto + ".backend", nat + ".device.path");
            if (!blank(dev.get("uuid"))) {
                move(dev, "uuid", x, "uuid", nat + ".device", nto);
            }
            if (ns.has("ana_grpid")) {
                move(ns, "ana_grpid", x, "ana_grpid", nat, nto);
            }
        }
        theirs.put(to, at);
        return o;
    }

    private ObjectNode port(JsonNode p, String at, String to) {
        object(p, at);
        ignored(p, at, PORT);
        JsonNode addr = object(p.get("addr"), at + ".addr");
        ignored(addr, at + ".addr", ADDR);
        ObjectNode o = JSON.objectNode();
        theirs.put(to, at);
        move(p, "portid", o, "portid", at, to);
        for (String f : List.of("trtype", "traddr", "trsvcid", "adrfam")) {
            move(addr, f, o, f, at + ".addr", to);
            theirs.put(to + "." + f, at + ".addr." + f); // named so even where it is missing
        }
        // TLS: addr.tsas (tls1.3) with addr.treq, as the tcp transport's "tls" option
        String tsas = addr.path("tsas").asText("none");
        String treq = addr.path("treq").asText("not specified");
        String tls = tsas.equals("tls1.3") ? (treq.equals("required") ? "required" : "optional")
                : tsas.equals("none") || tsas.isEmpty() ? null : "tsas " + tsas;
        if (tls != null) {
            o.put(TcpTransport.TLS, tls);
            theirs.put(to + "." + TcpTransport.TLS, at + ".addr.tsas");
        }
        for (String f : List.of("subsystems", "ana_groups", "referrals")) {
            if (p.has(f)) {
                o.set(f, p.get(f));
            }
        }
        return o;
    }

    /** A host: with a DH-HMAC-CHAP key, our host entry; without, nothing (it needs no entry). */
    private ObjectNode host(JsonNode h, String at, String to) {
        object(h, at);
        noStrayKeys(h, at, false);
        ignored(h, at, HOST);
        Codecs.nqn(h.get("nqn"), at + ".nqn", Codec.Reading.NONE); // checked even where the host needs no entry
        JsonNode d = h.path("dhchap");
        if (!d.isObject()) {
            return null;
        }
        String dat = at + ".dhchap";
        ignored(d, dat, DHCHAP);
        if (blank(d.get("key")) && blank(d.get("ctrl_key"))) {
            return null;
        }
        ObjectNode o = JSON.objectNode();
        theirs.put(to, at);
        move(h, "nqn", o, "nqn", at, to);
        for (String[] f : new String[][] {{"key", "dhchap_key"}, {"ctrl_key", "dhchap_ctrl_key"}}) {
            if (!blank(d.get(f[0]))) {
                move(d, f[0], o, f[1], dat, to);
            }
        }
        // nvmet's one hash and group are its preference: it falls back to any the host offers
        if (!blank(d.get("hash"))) {
            preferring(o.putArray("dhchap_hashes"), d.get("hash"), HostSecurity.DEFAULT_HASHES);
            theirs.put(to + ".dhchap_hashes[0]", dat + ".hash");
        }
        if (!blank(d.get("dhgroup"))) {
            preferring(o.putArray("dhchap_dhgroups"), d.get("dhgroup"), HostSecurity.DEFAULT_DH_GROUPS);
            theirs.put(to + ".dhchap_dhgroups[0]", dat + ".dhgroup");
        }
        return o;
    }

    /** {@code first} (as written), then each of {@code defaults} it is not. */
    private static void preferring(ArrayNode into, JsonNode first, List<?> defaults) {
        into.add(first);
        String name = first.asText();
        for (Object d : defaults) {
            boolean same = d instanceof DhchapHash h ? h.equals(DhchapHash.named(name))
                    : d instanceof DhGroup g && g.equals(DhGroup.named(name));
            if (!same) {
                into.add(d.toString());
            }
        }
    }

    /** Copies {@code from.f} (at {@code at}) to {@code to.g} (at {@code toAt}), remembering where it came from. */
    private void move(JsonNode from, String f, ObjectNode to, String g, String at, String toAt) {
        if (from.has(f)) {
            to.set(g, from.get(f));
            theirs.put(toAt + "." + g, at + "." + f);
        }
    }

    private static boolean blank(JsonNode v) {
        return v == null || v.isNull() || v.isTextual() && v.asText().isEmpty();
    }

    private static JsonNode object(JsonNode n, String at) {
        return ObjectSchema.object(n, at);
    }

    private static JsonNode array(JsonNode parent, String field, String at) {
        JsonNode n = parent.get(field);
        if (n == null) {
            return JSON.arrayNode();
        }
        if (!n.isArray()) {
            throw new ConfigException(at.isEmpty() ? field : at + "." + field, "must be an array");
        }
        return n;
    }

    /** Names, in a warning each, the fields of {@code node} outside {@code taken}: the target runs without them. */
    private static void ignored(JsonNode node, String at, Set<String> taken) {
        if (!node.isObject()) {
            return;
        }
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!taken.contains(f)) {
                JsonNode v = node.get(f);
                boolean empty = v.isNull() || v.isTextual() && v.asText().isEmpty() || v.isContainerNode() && v.isEmpty();
                if (!empty) {
                    LOG.log(System.Logger.Level.WARNING, "{0}.{1} is ignored: the nvmetcli format''s {1} is not"
                            + " supported here (taken: {2})", at, ObjectSchema.fieldName(f),
                            String.join(", ", new TreeSet<>(taken)));
                }
            }
        }
    }

    /**
     * Refuses a host entry that carries something key-like (a field named like a key, secret or
     * PSK) anywhere but where keys are taken from: loaded, the host would have no key and connect
     * without authenticating.
     */
    private static void noStrayKeys(JsonNode node, String at, boolean taken) {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            JsonNode v = node.get(f);
            String path = at + "." + ObjectSchema.fieldName(f);
            boolean keyLike = f.toLowerCase(Locale.ROOT).matches(".*(key|secret|psk).*");
            boolean here = taken && (f.equals("key") || f.equals("ctrl_key"));
            if (keyLike && !here && !(v.isNull() || v.isTextual() && v.asText().isEmpty())) {
                throw new ConfigException(path, "looks like a key, but keys are taken only from dhchap.key and"
                        + " dhchap.ctrl_key; refusing the host rather than letting it in without one");
            }
            if (v.isObject()) {
                noStrayKeys(v, path, f.equals("dhchap") && at.matches("hosts\\[\\d+\\]"));
            }
        }
    }
}
