package io.nvmeof.daemon.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.target.AnaState;
import io.nvmeof.target.Port;
import io.nvmeof.target.TargetTransport;
import io.nvmeof.target.TargetTransports;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/** The codecs of a port's fields: its transport, address, transport options, ANA group states and referrals. */
final class PortCodecs {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private PortCodecs() {
    }

    /** A registered transport's {@code trtype}. */
    static final Codec<String> TRTYPE = Codecs.of("one of " + String.join(", ", TargetTransports.names().stream()
            .map(t -> "`" + t + "`").toList()), (n, at, r) -> trtype(Codecs.STRING.read(n, at, r), at), JSON::textNode);

    private static String trtype(String t, String at) {
        if (t != null && !TargetTransports.names().contains(t)) {
            throw new ConfigException(at, "'" + t + "' is not supported (" + String.join(" or ", TargetTransports.names())
                    + ")");
        }
        return t;
    }

    /** An IP address, as text (no name is looked up). */
    static final Codec<String> IP_ADDRESS = Codecs.of("an IP address", (n, at, r) -> {
        String a = Codecs.STRING.read(n, at, r);
        if (a == null) {
            return null;
        }
        try {
            if (!a.matches("[0-9a-fA-F:.\\[\\]]+")) {
                throw new UnknownHostException(a);
            }
            InetAddress.getByName(a);
        } catch (UnknownHostException e) {
            throw new ConfigException(at, "'" + a + "' is not an IP address");
        }
        return a;
    }, JSON::textNode);

    /** The transports' port options, each a key of the port's object, as the transports declare them. */
    static final Codec.Spread<Map<String, String>> OPTIONS = new Codec.Spread<>() {
        @Override
        public List<String> keys() {
            List<String> l = new ArrayList<>();
            for (String t : TargetTransports.names()) {
                TargetTransports.type(t).portOptions().forEach(o -> l.add(o.name()));
            }
            return l;
        }

        @Override
        public Map<String, String> readFrom(JsonNode parent, String at, Codec.Reading reading) {
            Map<String, String> options = new TreeMap<>();
            for (String k : keys()) {
                if (parent.has(k)) {
                    String v = Codecs.STRING.read(parent.get(k), at + "." + k, reading);
                    if (v != null) {
                        options.put(k, v);
                    }
                }
            }
            return options;
        }

        @Override
        public List<String[]> rows(String help) {
            List<String[]> rows = new ArrayList<>();
            for (String t : TargetTransports.names()) {
                for (TargetTransport.PortOption o : TargetTransports.type(t).portOptions()) {
                    rows.add(new String[] {o.name(), "`" + o.values().replace("|", "`, `") + "`",
                        o.help().replace("|", "\\|")});
                }
            }
            return rows;
        }

        @Override
        public JsonNode write(Map<String, String> v) {
            ObjectNode n = JSON.objectNode();
            v.forEach(n::put);
            return n;
        }

        @Override
        public String type() {
            return "the transport's port options";
        }
    };

    /** An ANA group's ID (nvmet's {@code grpid}). */
    static final Codec<Integer> ANA_GROUP_ID = Codecs.range(1, Port.MAX_ANA_GROUP);

    /** An ANA state, as nvmet names them ({@code optimized}, {@code non-optimized}, ...). */
    static final Codec<AnaState> ANA_STATE = Codecs.named(String.join(", ", Arrays.stream(AnaState.values())
            .map(a -> "`" + a.label() + "`").toList()).replaceFirst(", ([^,]*)$", " or $1"), name -> {
                try {
                    return AnaState.of(name);
                } catch (IllegalArgumentException e) {
                    return null;
                }
            }, AnaState::label);

    /**
     * A port's {@code ana_groups}, as nvmetcli writes them: {@code [{"grpid": 1, "ana": {"state":
     * "optimized"}}]}. Groups not named keep nvmet's defaults (1 optimized, others inaccessible).
     */
    static final Codec<SortedMap<Integer, AnaState>> ANA_GROUPS = Codecs.of(Codec.Shape.OBJECT,
            "a list of `{\"grpid\": N, \"ana\": {\"state\": STATE}}`", (n, at, r) -> {
                if (!n.isArray()) {
                    throw new ConfigException(at, "must be an array");
                }
                SortedMap<Integer, AnaState> groups = new TreeMap<>();
                for (int i = 0; i < n.size(); i++) {
                    String gat = at + "[" + i + "]";
                    JsonNode g = ObjectSchema.object(n.get(i), gat);
                    ObjectSchema.known(g, gat, List.of("grpid", "ana"));
                    JsonNode grpid = g.get("grpid");
                    int id = grpid == null ? missing(gat + ".grpid", "a number 1.." + Port.MAX_ANA_GROUP)
                            : ANA_GROUP_ID.read(grpid, gat + ".grpid", r);
                    JsonNode ana = ObjectSchema.object(g.get("ana"), gat + ".ana");
                    ObjectSchema.known(ana, gat + ".ana", List.of("state"));
                    if (!ana.has("state")) {
                        throw new ConfigException(gat + ".ana.state", "is missing (" + ANA_STATE.type().replace("`", "")
                                + ")");
                    }
                    AnaState parsed = ANA_STATE.read(ana.get("state"), gat + ".ana.state", r);
                    if (groups.put(id, parsed) != null) {
                        throw new ConfigException(gat + ".grpid", "group " + id + " is given twice");
                    }
                }
                return groups;
            }, v -> {
                ArrayNode a = JSON.arrayNode();
                v.forEach((id, state) -> {
                    ObjectNode g = a.addObject();
                    g.put("grpid", id);
                    g.putObject("ana").put("state", state.label());
                });
                return a;
            });

    /**
     * A port's {@code referrals}: ours flat ({@code {"name", "trtype", "traddr", "trsvcid",
     * "portid"}}), nvmetcli's with the address in an {@code addr} object; one with {@code
     * "enable": 0} is left out.
     */
    static final Codec<List<Port.Referral>> REFERRALS = Codecs.of(Codec.Shape.OBJECT,
            "a list of `{\"name\", \"trtype\", \"traddr\", \"trsvcid\", \"portid\"}`", (n, at, r) -> {
                if (!n.isArray()) {
                    throw new ConfigException(at, "must be an array");
                }
                List<Port.Referral> out = new ArrayList<>();
                Set<String> names = new HashSet<>();
                for (int i = 0; i < n.size(); i++) {
                    String rat = at + "[" + i + "]";
                    JsonNode ref = ObjectSchema.object(n.get(i), rat);
                    ObjectSchema.known(ref, rat, List.of("name", "trtype", "traddr", "trsvcid", "adrfam", "treq", "portid",
                            "addr", "enable"));
                    if (ref.has("enable") && ref.get("enable").asInt(1) == 0) {
                        continue;
                    }
                    JsonNode addr = ref.has("addr") ? ObjectSchema.object(ref.get("addr"), rat + ".addr") : ref;
                    String addrAt = ref.has("addr") ? rat + ".addr" : rat;
                    String name = Codecs.text(ref, "name", rat, "referral" + (i + 1));
                    if (!names.add(name)) {
                        throw new ConfigException(rat + ".name", "'" + name + "' is used twice");
                    }
                    String trtype = trtype(Codecs.text(addr, "trtype", addrAt, "tcp"), addrAt + ".trtype");
                    String traddr = Codecs.text(addr, "traddr", addrAt, "");
                    if (traddr.isEmpty()) {
                        throw new ConfigException(addrAt + ".traddr", "is missing (the other discovery service's address)");
                    }
                    int trsvcid = addr.has("trsvcid") ? Codecs.range(1, 65535).read(addr.get("trsvcid"), addrAt + ".trsvcid", r)
                            : 8009;
                    int portid = ref.has("portid") ? Codecs.range(0, 0xffff).read(ref.get("portid"), rat + ".portid", r) : 0;
                    out.add(new Port.Referral(name, trtype, traddr, trsvcid, portid));
                }
                return out;
            }, v -> {
                ArrayNode a = JSON.arrayNode();
                for (Port.Referral ref : v) {
                    ObjectNode o = a.addObject();
                    o.put("name", ref.name());
                    o.put("trtype", ref.trtype());
                    o.put("traddr", ref.traddr());
                    o.put("trsvcid", ref.trsvcid());
                    o.put("portid", ref.portid());
                }
                return a;
            });

    private static int missing(String at, String what) {
        throw new ConfigException(at, "must be " + what + " (missing)");
    }
}
