package io.nvmeof.daemon.config;

import io.nvmeof.target.Qos;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.protocol.auth.DhGroup;
import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.protocol.auth.DhchapKey;
import io.nvmeof.protocol.tls.TlsPsk;
import io.nvmeof.target.HostSecurity;
import io.nvmeof.target.Setting;
import io.nvmeof.target.Settings;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.SmallFiles;
import io.nvmeof.daemon.config.TargetConfig.NamespaceConfig;
import io.nvmeof.daemon.config.TargetConfig.PortConfig;
import io.nvmeof.daemon.config.TargetConfig.SubsystemConfig;
import io.nvmeof.daemon.metrics.MetricsServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Reads the target's JSON configuration, in either of two forms:
 * <ul>
 * <li>ours: {@code "ports"}, {@code "subsystems"} with their namespaces and the {@code
 * "management"} section as {@link Schemas} gives their fields (docs/reference/configuration.md
 * is made from it), {@code "settings"} as {@link Settings} does, and {@code "hosts"} and {@code
 * "metrics"} as this class reads them;</li>
 * <li>what {@code nvmetcli save} writes for the Linux kernel target, translated into ours first
 * ({@link NvmetcliFormat}: {@code ports[].addr},
 * {@code subsystems[].attr}, {@code namespaces[].device}, {@code ports[].addr.tsas/treq},
 * {@code hosts[].dhchap} with the
 * {@code key}, {@code ctrl_key}, {@code hash} and {@code dhgroup} of configfs's
 * {@code dhchap_*} host attributes), so its users can move over.</li>
 * </ul>
 * Every error is a {@link ConfigException} that names the field and the bad value. Keys are
 * secrets: a configuration that holds one, and a key file, must not be readable by others
 * (mode o-r), or the target refuses it; key files given by relative path are found next to
 * the configuration.
 */
public final class ConfigLoader {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ConfigLoader() {
    }

    public static TargetConfig load(Path file) throws IOException {
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new IOException("cannot read config " + file + ": " + e.getMessage(), e);
        }
        return parse(text, file);
    }

    public static TargetConfig parse(String text) {
        return parse(text, null);
    }

    /** Parses {@code text}, read from {@code file} (null: not from a file, so no mode to check). */
    static TargetConfig parse(String text, Path file) {
        return parse(tree(text), file);
    }

    /** The JSON document {@code text}; a {@link ConfigException} says where it is not JSON. */
    public static JsonNode tree(String text) {
        try {
            JsonNode root = JSON.readTree(text);
            return root == null ? JSON.nullNode() : root;
        } catch (JsonProcessingException e) {
            throw new ConfigException("(document)", "not valid JSON: " + e.getOriginalMessage() + " at line "
                    + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr());
        }
    }

    /**
     * Reads the configuration {@code root}, which came from {@code file} (null: from no file, so
     * no mode to check and relative key paths are refused).
     */
    public static TargetConfig parse(JsonNode root, Path file) {
        Secrets secrets = new Secrets(file);
        if (root == null || !root.isObject()) {
            throw new ConfigException("(document)", "must be a JSON object with \"ports\" and \"subsystems\"");
        }
        // the file's mode is checked with the rest, so that an error in a translation names nvmetcli's field
        return NvmetcliFormat.is(root) ? NvmetcliFormat.read(root, ours -> fromOurs(ours, secrets)) : fromOurs(root, secrets);
    }

    // ---- our format ----

    private static TargetConfig fromOurs(JsonNode root, Secrets secrets) {
        known(root, "", "ports", "subsystems", "settings", "limits", "hosts", "metrics", "management");
        List<SubsystemConfig> subsystems = new ArrayList<>();
        JsonNode subs = array(root, "subsystems", "");
        for (int i = 0; i < subs.size(); i++) {
            subsystems.add(Schemas.SUBSYSTEM.read(subs.get(i), "subsystems[" + i + "]", secrets));
        }
        List<PortConfig> ports = new ArrayList<>();
        JsonNode pl = array(root, "ports", "");
        for (int i = 0; i < pl.size(); i++) {
            ports.add(Schemas.PORT.read(pl.get(i), "ports[" + i + "]", secrets));
        }
        List<HostSecurity> hostKeys = new ArrayList<>();
        java.util.Map<String, Qos.Limits> hostQos = new java.util.HashMap<>();
        JsonNode hs = optionalArray(root, "hosts", "");
        for (int i = 0; i < hs.size(); i++) {
            String at = "hosts[" + i + "]";
            JsonNode h = object(hs.get(i), at);
            known(h, at, "nqn", "dhchap_key", "dhchap_ctrl_key", "dhchap_key_file", "dhchap_ctrl_key_file",
                    "dhchap_hashes", "dhchap_dhgroups", "tls_key", "tls_key_file", "qos");
            String nqn = name(h.get("nqn"), at + ".nqn");
            if (h.has("qos")) {
                hostQos.put(nqn, Schemas.QOS.read(h.get("qos"), at + ".qos", secrets));
            }
            DhchapKey key = secrets.key(h, "dhchap_key", at, nqn);
            DhchapKey ctrl = secrets.key(h, "dhchap_ctrl_key", at, nqn);
            if (ctrl != null && key == null) {
                throw new ConfigException(at + ".dhchap_ctrl_key", "needs a dhchap_key too (the host authenticates first)");
            }
            List<DhchapHash> hashes = list(h, "dhchap_hashes", at, ConfigLoader::hash);
            List<DhGroup> groups = list(h, "dhchap_dhgroups", at, ConfigLoader::dhGroup);
            hostKeys.add(new HostSecurity(nqn, key, ctrl, hashes, groups, secrets.tlsKey(h, "tls_key", at, nqn)));
        }
        MetricsServer.Endpoint metrics = metrics(root, secrets);
        TargetConfig config = new TargetConfig(ports, subsystems, settings(root), hostKeys, metrics,
                management(root, secrets), hostQos, secrets.files);
        crossCheck(config);
        secrets.checkConfigFile();
        return config;
    }

    private static DhchapHash hash(JsonNode n, String at) {
        DhchapHash h = n != null && n.isTextual() ? DhchapHash.named(n.asText()) : null;
        if (h == null) {
            throw new ConfigException(at, "must be sha256, sha384 or sha512, got " + n);
        }
        return h;
    }

    private static DhGroup dhGroup(JsonNode n, String at) {
        DhGroup g = n != null && n.isTextual() ? DhGroup.named(n.asText()) : null;
        if (g == null) {
            throw new ConfigException(at, "must be null, ffdhe2048, ffdhe3072, ffdhe4096, ffdhe6144 or ffdhe8192, got " + n);
        }
        return g;
    }

    /**
     * Keys read for a configuration: inline ones (the configuration file must then be private) and
     * key files (which must be private themselves).
     */
    /** The most a key or password file may hold: keys are tens of bytes, a few KiB covers any. */
    public static final int MAX_KEY_FILE = 8 << 10;

    /**
     * Checks the key file {@code file} as a configuration's {@code FIELD_file} is read (private,
     * a regular file of at most {@link #MAX_KEY_FILE} bytes, read without blocking, holding a
     * {@code field} key: dhchap_key, dhchap_ctrl_key or tls_key); a {@link ConfigException}
     * naming {@code at} says what is wrong.
     */
    public static void checkKeyFile(Path file, String field, String at) {
        JsonNode n = JSON.createObjectNode().put(field + "_file", file.toString());
        Secrets secrets = new Secrets(null);
        if (field.startsWith("tls")) {
            secrets.tlsKey(n, field, at, null);
        } else {
            secrets.key(n, field, at, null);
        }
    }

    private static final class Secrets implements Codec.Reading {
        private final Path file;
        private String inlineField;
        /** Where each secret that came from a file came from ({@link TargetConfig#secret} names). */
        final Map<String, Path> files = new TreeMap<>();

        Secrets(Path file) {
            this.file = file;
        }

        /** The TLS PSK in {@code <field>} or in the file named by {@code <field>_file}; null if neither. */
        TlsPsk tlsKey(JsonNode h, String field, String at, String owner) {
            String[] where = new String[1];
            String text = secret(h, field, at, where, owner);
            try {
                return text == null ? null : TlsPsk.parse(text);
            } catch (IllegalArgumentException e) {
                throw new ConfigException(where[0], e.getMessage());
            }
        }

        /** The DH-HMAC-CHAP key in {@code <field>} or in the file named by {@code <field>_file}; null if neither. */
        DhchapKey key(JsonNode h, String field, String at, String owner) {
            String[] where = new String[1];
            String text = secret(h, field, at, where, owner);
            try {
                return text == null ? null : DhchapKey.parse(text);
            } catch (IllegalArgumentException e) {
                throw new ConfigException(where[0], e.getMessage());
            }
        }

        /** A secret's text in {@code <field>} or the private file named by {@code <field>_file}; null if neither. */
        String text(JsonNode node, String field, String at, String owner) {
            return secret(node, field, at, new String[1], owner);
        }

        /** A path as written in the configuration: relative ones are next to the configuration file. */
        @Override
        public Path resolve(String path) {
            Path p = Path.of(path);
            if (!p.isAbsolute() && file != null && file.toAbsolutePath().getParent() != null) {
                p = file.toAbsolutePath().getParent().resolve(p);
            }
            return p;
        }

        /**
         * A secret's text, inline or from its private file; {@code where[0]} names the field it came
         * from; a file is recorded under {@code owner} (null: not recorded).
         */
        private String secret(JsonNode h, String field, String at, String[] where, String owner) {
            String inline = string(h, field, at, null);
            String path = string(h, field + "_file", at, null);
            if (ConfigWriter.NOT_SAVED.equals(inline)) {
                throw new ConfigException(at + "." + field, "inline key not saved: move it to a key file and name that"
                        + " file in " + field + "_file (save_config never writes a key)");
            }
            if (ConfigWriter.HIDDEN_TEXT.equals(inline)) {
                throw new ConfigException(at + "." + field, "is the placeholder that stands for a key not shown: give the"
                        + " key's file in " + field + "_file");
            }
            if (inline != null && path != null) {
                throw new ConfigException(at + "." + field, "is given inline and as " + field + "_file; give one");
            }
            if (inline == null && path == null) {
                return null;
            }
            where[0] = at + "." + (inline != null ? field : field + "_file");
            String text = inline;
            if (inline != null) {
                if (inlineField == null) {
                    inlineField = where[0];
                }
            } else {
                Path p = resolve(path);
                String problem = PrivateFiles.problem(p);
                if (problem != null) {
                    throw new ConfigException(where[0], problem);
                }
                try {
                    text = new String(SmallFiles.read(p, MAX_KEY_FILE), java.nio.charset.StandardCharsets.UTF_8).trim();
                } catch (IOException e) {
                    throw new ConfigException(where[0], "cannot read " + p + ": " + e.getMessage());
                }
                if (owner != null) {
                    files.put(TargetConfig.secret(owner, field), p);
                }
            }
            return text;
        }

        /** A configuration that holds a key inline must be private. */
        void checkConfigFile() {
            if (inlineField == null || file == null) {
                return;
            }
            String problem = PrivateFiles.problem(file);
            if (problem != null) {
                throw new ConfigException(inlineField, "is a secret in a configuration that others can read: " + problem
                        + " (or put the key in a " + inlineField.substring(inlineField.lastIndexOf('.') + 1)
                        + "_file only the target can read)");
            }
        }
    }

    /**
     * {@code "metrics": "tcp://ADDR:PORT"}: where to serve Prometheus metrics; or {@code {"listen":
     * "tcp://ADDR:PORT", "user", "password" | "password_file", "tls_keystore",
     * "tls_keystore_password" | "tls_keystore_password_file"}} for basic authentication and HTTPS.
     */
    private static MetricsServer.Endpoint metrics(JsonNode root, Secrets secrets) {
        JsonNode m = root.get("metrics");
        if (m == null || m.isNull()) {
            return null;
        }
        if (m.isTextual()) {
            return MetricsServer.Endpoint.plain(metricsAddress(m, "metrics"));
        }
        if (!m.isObject()) {
            throw new ConfigException("metrics", "must be a string tcp://ADDR:PORT or an object with \"listen\"");
        }
        known(m, "metrics", "listen", "user", "password", "password_file", "tls_keystore", "tls_keystore_password",
                "tls_keystore_password_file");
        JsonNode listen = m.get("listen");
        if (listen == null || !listen.isTextual()) {
            throw new ConfigException("metrics.listen", "must be a string tcp://ADDR:PORT");
        }
        InetSocketAddress address = metricsAddress(listen, "metrics.listen");
        String user = string(m, "user", "metrics", null);
        String password = secrets.text(m, "password", "metrics", "metrics");
        if ((user == null) != (password == null)) {
            throw new ConfigException(user == null ? "metrics.user" : "metrics.password",
                    "basic authentication needs both a user and a password (or password_file)");
        }
        String keystore = string(m, "tls_keystore", "metrics", null);
        Path ks = null;
        if (keystore != null) {
            ks = secrets.resolve(keystore);
            String problem = PrivateFiles.problem(ks);
            if (problem != null) {
                throw new ConfigException("metrics.tls_keystore", problem);
            }
        }
        return new MetricsServer.Endpoint(address, user, password, ks, secrets.text(m, "tls_keystore_password", "metrics", "metrics"));
    }

    private static InetSocketAddress metricsAddress(JsonNode n, String at) {
        try {
            return MetricsServer.parse(n.asText(), "address");
        } catch (IllegalArgumentException e) {
            throw new ConfigException(at, e.getMessage());
        }
    }

    /** {@code "management"}: the management API's socket and who and what it admits ({@link Schemas#MANAGEMENT}). */
    private static TargetConfig.Management management(JsonNode root, Secrets secrets) {
        JsonNode m = root.get("management");
        return m == null || m.isNull() ? TargetConfig.Management.NONE : Schemas.MANAGEMENT.read(m, "management", secrets);
    }

    /**
     * {@code "settings": {KEY: value}}, a row of {@link Settings} each (and {@code "limits"}, the
     * name of the object before it held every setting, read alike); the rest stay at their defaults.
     */
    static Target.Options settings(JsonNode root) {
        Target.Options o = Target.Options.defaults();
        Set<String> seen = new HashSet<>();
        for (String object : List.of("settings", "limits")) {
            if (!root.has(object)) {
                continue;
            }
            JsonNode l = object(root.get(object), object);
            for (Iterator<String> it = l.fieldNames(); it.hasNext(); ) {
                String key = it.next();
                String at = object + "." + key;
                Setting<?> s = Settings.byKey(key);
                if (s == null) {
                    throw new ConfigException(at, "is not a setting (settings: " + String.join(", ", settingKeys()) + ")");
                }
                if (!seen.add(key)) {
                    throw new ConfigException(at, "is given in both settings and limits; give it once");
                }
                o = withSetting(o, s, l.get(key), at);
            }
        }
        return o;
    }

    /** {@code o} with setting {@code s} at the JSON value {@code v}; errors name {@code at}. */
    static <T> Target.Options withSetting(Target.Options o, Setting<T> s, JsonNode v, String at) {
        if (v == null || !v.isValueNode() || v.isNull()) {
            throw new ConfigException(at, "must be " + s.typeText() + ", got " + v);
        }
        try {
            return o.with(s, s.parse(v.asText()));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(at, e.getMessage());
        }
    }

    private static List<String> settingKeys() {
        List<String> l = new ArrayList<>();
        for (Setting<?> s : Settings.ALL) {
            l.add(s.key());
        }
        return l;
    }

    /**
     * QoS limits as SPDK's bdev QoS and Ceph's gateways name them ({@link Schemas#QOS}): {@code
     * rw_ios_per_sec}, {@code rw_mbytes_per_sec}, {@code r_mbytes_per_sec}, {@code
     * w_mbytes_per_sec} (MiB a second); 0 or absent: none.
     */
    public static Qos.Limits qosLimits(JsonNode node, String at) {
        return Schemas.QOS.read(node, at, Codec.Reading.NONE);
    }

    // ---- checks across the document ----

    private static void crossCheck(TargetConfig config) {
        Set<String> hostNqns = new HashSet<>();
        for (int i = 0; i < config.hosts().size(); i++) {
            if (!hostNqns.add(config.hosts().get(i).nqn())) {
                throw new ConfigException("hosts[" + i + "].nqn", config.hosts().get(i).nqn() + " is defined twice");
            }
        }
        Set<String> nqns = new HashSet<>();
        for (int i = 0; i < config.subsystems().size(); i++) {
            SubsystemConfig s = config.subsystems().get(i);
            if (s.nqn().equals(Nqn.DISCOVERY)) {
                throw new ConfigException("subsystems[" + i + "].nqn", "the discovery NQN is the target's own");
            }
            if (!nqns.add(s.nqn())) {
                throw new ConfigException("subsystems[" + i + "].nqn", s.nqn() + " is defined twice");
            }
            for (int n = 0; n < s.namespaces().size(); n++) {
                List<String> v = s.namespaces().get(n).visibleTo();
                for (int h = 0; v != null && !s.allowAnyHost() && h < v.size(); h++) {
                    if (!s.allowedHosts().contains(v.get(h))) {
                        throw new ConfigException("subsystems[" + i + "].namespaces[" + n + "].visible_to[" + h + "]",
                                v.get(h) + " is not in the subsystem's allowed_hosts");
                    }
                }
            }
            Set<Integer> nsids = new HashSet<>();
            for (int n = 0; n < s.namespaces().size(); n++) {
                if (!nsids.add(s.namespaces().get(n).nsid())) {
                    throw new ConfigException("subsystems[" + i + "].namespaces[" + n + "].nsid",
                            Integer.toUnsignedString(s.namespaces().get(n).nsid()) + " is used twice in " + s.nqn());
                }
            }
        }
        Set<Integer> ids = new HashSet<>();
        Set<String> addresses = new HashSet<>();
        for (int i = 0; i < config.ports().size(); i++) {
            PortConfig p = config.ports().get(i);
            if (!ids.add(p.portid())) {
                throw new ConfigException("ports[" + i + "].portid", p.portid() + " is used twice");
            }
            if (p.trsvcid() != 0 && !addresses.add(p.traddr() + "/" + p.trsvcid())) {
                throw new ConfigException("ports[" + i + "].trsvcid", p.traddr() + ":" + p.trsvcid() + " is used twice");
            }
            for (int s = 0; s < p.subsystems().size(); s++) {
                if (!nqns.contains(p.subsystems().get(s))) {
                    throw new ConfigException("ports[" + i + "].subsystems[" + s + "]",
                            p.subsystems().get(s) + " is not a configured subsystem");
                }
            }
        }
        if (config.ports().isEmpty()) {
            throw new ConfigException("ports", "at least one port is needed");
        }
    }

    // ---- field helpers: every error names its field ----

    static String defaultSerial(String nqn) {
        return String.format("%016x", nqn.hashCode() & 0xffffffffL).substring(0, 16);
    }

    private static void known(JsonNode node, String at, String... fields) {
        ObjectSchema.known(node, at, List.of(fields));
    }

    private static JsonNode object(JsonNode n, String at) {
        return ObjectSchema.object(n, at);
    }

    private static JsonNode array(JsonNode parent, String field, String at) {
        JsonNode n = parent.get(field);
        String path = at.isEmpty() ? field : at + "." + field;
        if (n == null) {
            throw new ConfigException(path, "is missing");
        }
        if (!n.isArray()) {
            throw new ConfigException(path, "must be an array");
        }
        return n;
    }

    private static JsonNode optionalArray(JsonNode parent, String field, String at) {
        return parent.has(field) ? array(parent, field, at) : JSON.createArrayNode();
    }

    /** The items of an optional array field, each read by {@code item} with its path ({@code at.field[i]}). */
    private static <T> List<T> list(JsonNode parent, String field, String at,
                                    java.util.function.BiFunction<JsonNode, String, T> item) {
        List<T> out = new ArrayList<>();
        JsonNode a = optionalArray(parent, field, at);
        for (int i = 0; i < a.size(); i++) {
            out.add(item.apply(a.get(i), at + "." + field + "[" + i + "]"));
        }
        return out;
    }

    private static String string(JsonNode parent, String field, String at, String dflt) {
        return Codecs.text(parent, field, at, dflt);
    }

    /** A subsystem or host name ({@link Codecs#NQN}). */
    private static String name(JsonNode n, String at) {
        return Codecs.nqn(n, at, Codec.Reading.NONE);
    }
}
