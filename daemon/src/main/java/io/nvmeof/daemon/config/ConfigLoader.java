package io.nvmeof.daemon.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.daemon.config.TargetConfig.NamespaceConfig;
import io.nvmeof.daemon.config.TargetConfig.PortConfig;
import io.nvmeof.daemon.config.TargetConfig.SubsystemConfig;
import io.nvmeof.daemon.metrics.MetricsServer;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.protocol.auth.DhGroup;
import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.protocol.auth.DhchapKey;
import io.nvmeof.protocol.tls.TlsPsk;
import io.nvmeof.target.HostSecurity;
import io.nvmeof.target.Qos;
import io.nvmeof.target.Setting;
import io.nvmeof.target.Settings;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.SmallFiles;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
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
            throw new IOException("cannot read the configuration: " + io.nvmeof.fabric.Failures.describe(e), e);
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
        known(root, "", "ports", "subsystems", "settings", "limits", "hosts", "metrics", "management", "rbd_clusters",
                "gateway_group");
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
        Map<String, Qos.Limits> hostQos = new HashMap<>();
        Map<String, Path> keyFiles = new TreeMap<>();
        JsonNode hs = optionalArray(root, "hosts", "");
        for (int i = 0; i < hs.size(); i++) {
            TargetConfig.HostConfig h = Schemas.HOST.read(hs.get(i), "hosts[" + i + "]", secrets);
            hostKeys.add(h.security());
            if (!h.qos().equals(Qos.Limits.NONE)) {
                hostQos.put(h.nqn(), h.qos());
            }
            keyFile(keyFiles, h.nqn(), "dhchap_key", h.dhchapKey());
            keyFile(keyFiles, h.nqn(), "dhchap_ctrl_key", h.dhchapCtrlKey());
            keyFile(keyFiles, h.nqn(), "tls_key", h.tlsKey());
        }
        MetricsServer.Endpoint metrics = metrics(root, secrets, keyFiles);
        List<TargetConfig.RbdClusterConfig> clusters = new ArrayList<>();
        JsonNode rc = optionalArray(root, "rbd_clusters", "");
        for (int i = 0; i < rc.size(); i++) {
            clusters.add(Schemas.RBD_CLUSTER.read(rc.get(i), "rbd_clusters[" + i + "]", secrets));
        }
        TargetConfig.GatewayGroupConfig gateways = root.hasNonNull("gateway_group")
                ? Schemas.GATEWAY_GROUP.read(root.get("gateway_group"), "gateway_group", secrets) : null;
        TargetConfig config = new TargetConfig(ports, subsystems, settings(root), hostKeys, metrics,
                management(root, secrets), hostQos, keyFiles, clusters, gateways);
        crossCheck(config);
        secrets.checkConfigFile();
        return config;
    }

    /** Notes where the secret {@code s} of {@code owner}'s {@code field} came from, if from a file. */
    private static void keyFile(Map<String, Path> files, String owner, String field, Secret<?> s) {
        if (s != null && s.file() != null) {
            files.put(TargetConfig.secret(owner, field), s.file());
        }
    }

    /** The most a key or password file may hold ({@link Secret#MAX_FILE}). */
    public static final int MAX_KEY_FILE = Secret.MAX_FILE;

    /**
     * Checks the key file {@code file} as a host's {@code FIELD_file} is read (private, a regular
     * file of at most {@link #MAX_KEY_FILE} bytes, read without blocking, holding a {@code field}
     * key: dhchap_key, dhchap_ctrl_key or tls_key); a {@link ConfigException} naming {@code at}
     * says what is wrong.
     */
    public static void checkKeyFile(Path file, String field, String at) {
        JsonNode n = JSON.createObjectNode().put(field + "_file", file.toString());
        ((Codec.Spread<?>) Schemas.HOST.field(field).codec()).readFrom(n, at, Codec.Reading.NONE);
    }

    /**
     * A configuration's reading: relative paths are next to its file, and a secret given inline
     * needs the file to be private.
     */
    private static final class Secrets implements Codec.Reading {
        private final Path file;
        private String inlineField;

        Secrets(Path file) {
            this.file = file;
        }

        @Override
        public Path resolve(String path) {
            Path p = Path.of(path);
            if (!p.isAbsolute() && file != null && file.toAbsolutePath().getParent() != null) {
                p = file.toAbsolutePath().getParent().resolve(p);
            }
            return p;
        }

        @Override
        public void inlineSecret(String at) {
            if (inlineField == null) {
                inlineField = at;
            }
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
     * {@code "metrics": "tcp://ADDR:PORT"}: where to serve Prometheus metrics; or the object
     * {@link Schemas#METRICS} reads, for basic authentication and HTTPS.
     */
    private static MetricsServer.Endpoint metrics(JsonNode root, Secrets secrets, Map<String, Path> keyFiles) {
        JsonNode m = root.get("metrics");
        if (m == null || m.isNull()) {
            return null;
        }
        if (m.isTextual()) {
            return MetricsServer.Endpoint.plain((InetSocketAddress) Schemas.METRICS.field("listen").codec()
                    .read(m, "metrics", secrets));
        }
        if (!m.isObject()) {
            throw new ConfigException("metrics", "must be a string tcp://ADDR:PORT or an object with \"listen\"");
        }
        TargetConfig.MetricsConfig c = Schemas.METRICS.read(m, "metrics", secrets);
        keyFile(keyFiles, "metrics", "password", c.password());
        keyFile(keyFiles, "metrics", "tls_keystore_password", c.tlsKeystorePassword());
        return c.endpoint();
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
        gatewayGroup(config);
        Set<String> hostNqns = new HashSet<>();
        for (int i = 0; i < config.hosts().size(); i++) {
            if (!hostNqns.add(config.hosts().get(i).nqn())) {
                throw new ConfigException("hosts[" + i + "].nqn", config.hosts().get(i).nqn() + " is defined twice");
            }
        }
        Set<String> clusters = new HashSet<>();
        for (int i = 0; i < config.rbdClusters().size(); i++) {
            if (!clusters.add(config.rbdClusters().get(i).name())) {
                throw new ConfigException("rbd_clusters[" + i + "].name", config.rbdClusters().get(i).name()
                        + " is defined twice");
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
                String cluster = s.namespaces().get(n).cluster();
                if (cluster != null && !clusters.contains(cluster)) {
                    throw new ConfigException("subsystems[" + i + "].namespaces[" + n + "].cluster", cluster
                            + " is not in rbd_clusters" + (clusters.isEmpty() ? " (none are declared)" : " " + clusters));
                }
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

    /**
     * A gateway group names a declared cluster, itself among its members, members once each,
     * each ANA group once with a preferred member of the group.
     */
    private static void gatewayGroup(TargetConfig config) {
        TargetConfig.GatewayGroupConfig g = config.gatewayGroup();
        if (g == null) {
            return;
        }
        if (config.rbdCluster(g.cluster()) == null) {
            throw new ConfigException("gateway_group.cluster", g.cluster() + " is not in rbd_clusters");
        }
        Set<String> names = new HashSet<>();
        for (int i = 0; i < g.members().size(); i++) {
            if (!names.add(g.members().get(i).name())) {
                throw new ConfigException("gateway_group.members[" + i + "].name", g.members().get(i).name()
                        + " is a member twice");
            }
        }
        if (!names.contains(g.self())) {
            throw new ConfigException("gateway_group.self", g.self() + " is not one of the members " + names);
        }
        Set<Integer> groups = new HashSet<>();
        for (int i = 0; i < g.anaGroups().size(); i++) {
            TargetConfig.GatewayAnaGroup a = g.anaGroups().get(i);
            if (!groups.add(a.grpid())) {
                throw new ConfigException("gateway_group.ana_groups[" + i + "].grpid", a.grpid() + " is listed twice");
            }
            if (!names.contains(a.preferred())) {
                throw new ConfigException("gateway_group.ana_groups[" + i + "].preferred", a.preferred()
                        + " is not one of the members " + names);
            }
        }
    }

    // ---- field helpers: every error names its field ----

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



}
