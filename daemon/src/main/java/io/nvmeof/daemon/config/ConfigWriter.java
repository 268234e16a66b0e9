package io.nvmeof.daemon.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.protocol.auth.DhGroup;
import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.target.HostSecurity;
import io.nvmeof.target.Setting;
import io.nvmeof.target.Settings;
import io.nvmeof.target.Target;
import io.nvmeof.daemon.config.TargetConfig.NamespaceConfig;
import io.nvmeof.daemon.config.TargetConfig.PortConfig;
import io.nvmeof.daemon.config.TargetConfig.SubsystemConfig;
import io.nvmeof.daemon.metrics.MetricsServer;
import java.util.Map;

/**
 * Writes a configuration in our JSON form, as {@link ConfigLoader} reads it back: every setting
 * with its value, every port, subsystem, namespace and host. Keys are secrets: {@link
 * Secrets#HIDDEN} writes in their place only that a key is there ({@code --show-config}, the
 * management API); {@link Secrets#WRITTEN} writes them (a saved configuration, a private file).
 */
public final class ConfigWriter {
    /** What becomes of keys and passwords. */
    public enum Secrets { HIDDEN, WRITTEN }

    /** What stands for a key that is not shown. */
    public static final String HIDDEN_TEXT = "(set, not shown)";

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private ConfigWriter() {
    }

    /** The configuration as JSON text. */
    public static String write(TargetConfig c, Secrets secrets) {
        try {
            return JSON.writeValueAsString(tree(c, secrets)) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The configuration as a JSON tree. */
    public static ObjectNode tree(TargetConfig c, Secrets secrets) {
        ObjectNode root = JSON.createObjectNode();
        root.set("settings", settings(c.settings()));
        ArrayNode ports = root.putArray("ports");
        for (PortConfig p : c.ports()) {
            ports.add(port(p));
        }
        ArrayNode subs = root.putArray("subsystems");
        for (SubsystemConfig s : c.subsystems()) {
            subs.add(subsystem(s));
        }
        ArrayNode hosts = root.putArray("hosts");
        java.util.Set<String> withQos = new java.util.HashSet<>(c.hostQos().keySet());
        for (HostSecurity h : c.hosts()) {
            ObjectNode n = host(h, secrets);
            if (withQos.remove(h.nqn())) {
                n.set("qos", qos(c.hostQos().get(h.nqn())));
            }
            hosts.add(n);
        }
        for (String nqn : new java.util.TreeSet<>(withQos)) {
            ObjectNode n = hosts.addObject();
            n.put("nqn", nqn);
            n.set("qos", qos(c.hostQos().get(nqn)));
        }
        if (c.metrics() != null) {
            root.set("metrics", metrics(c.metrics(), secrets));
        }
        if (!c.management().equals(TargetConfig.Management.NONE)) {
            ObjectNode m = root.putObject("management");
            if (c.management().socket() != null) {
                m.put("socket", c.management().socket().toString());
            }
            ArrayNode users = m.putArray("allowed_users");
            c.management().allowedUsers().forEach(users::add);
            if (c.management().allowedGroups() != null) {
                ArrayNode groups = m.putArray("allowed_groups");
                c.management().allowedGroups().forEach(groups::add);
            }
            ArrayNode paths = m.putArray("allowed_paths");
            c.management().allowedPaths().forEach(p -> paths.add(p.toString()));
        }
        return root;
    }

    /** Every setting, in table order. */
    public static ObjectNode settings(Target.Options o) {
        ObjectNode n = JSON.createObjectNode();
        for (Setting<?> s : Settings.ALL) {
            Object v = o.get(s);
            if (v instanceof Integer i) {
                n.put(s.key(), i);
            } else if (v instanceof Long l) {
                n.put(s.key(), l);
            } else if (v instanceof Boolean b) {
                n.put(s.key(), b);
            } else {
                n.put(s.key(), s.formatObject(v));
            }
        }
        return n;
    }

    public static ObjectNode port(PortConfig p) {
        ObjectNode n = JSON.createObjectNode();
        n.put("portid", p.portid());
        n.put("trtype", p.trtype());
        n.put("traddr", p.traddr());
        n.put("trsvcid", p.trsvcid());
        for (Map.Entry<String, String> e : p.options().entrySet()) {
            n.put(e.getKey(), e.getValue());
        }
        ArrayNode subs = n.putArray("subsystems");
        p.subsystems().forEach(subs::add);
        if (!p.referrals().isEmpty()) {
            ArrayNode refs = n.putArray("referrals");
            for (io.nvmeof.target.Port.Referral r : p.referrals()) {
                ObjectNode o = refs.addObject();
                o.put("name", r.name());
                o.put("trtype", r.trtype());
                o.put("traddr", r.traddr());
                o.put("trsvcid", r.trsvcid());
                o.put("portid", r.portid());
            }
        }
        if (!p.anaGroups().isEmpty()) {
            ArrayNode groups = n.putArray("ana_groups");
            p.anaGroups().forEach((id, state) -> {
                ObjectNode g = groups.addObject();
                g.put("grpid", id);
                g.putObject("ana").put("state", state.label());
            });
        }
        return n;
    }

    public static ObjectNode subsystem(SubsystemConfig s) {
        ObjectNode n = JSON.createObjectNode();
        n.put("nqn", s.nqn());
        n.put("serial", s.serial());
        n.put("model", s.model());
        n.put("firmware", s.firmware());
        n.put("ieee_oui", String.format("0x%06x", s.ieeeOui()));
        n.put("allow_any_host", s.allowAnyHost());
        ArrayNode hosts = n.putArray("allowed_hosts");
        s.allowedHosts().forEach(hosts::add);
        if (s.cntlidMin() != 1 || s.cntlidMax() != io.nvmeof.target.Subsystem.MAX_CNTLID) {
            n.put("cntlid_min", s.cntlidMin());
            n.put("cntlid_max", s.cntlidMax());
        }
        if (s.gateways()) {
            n.put("gateways", true);
        }
        ArrayNode nss = n.putArray("namespaces");
        for (NamespaceConfig ns : s.namespaces()) {
            nss.add(namespace(ns));
        }
        return n;
    }

    public static ObjectNode namespace(NamespaceConfig ns) {
        ObjectNode n = JSON.createObjectNode();
        n.put("nsid", Integer.toUnsignedLong(ns.nsid()));
        n.put("backend", ns.backend());
        if (ns.path() != null) {
            n.put("path", ns.path());
        }
        if (ns.size() != 0) {
            n.put("size", ns.size());
        }
        if (ns.blockSize() != 0) {
            n.put("block_size", ns.blockSize());
        }
        n.put("read_only", ns.readOnly());
        if (ns.uuid() != null) {
            n.put("uuid", ns.uuid().toString());
        }
        if (ns.directIo()) {
            n.put("direct_io", true);
        }
        if (ns.visibleTo() != null) {
            ArrayNode v = n.putArray("visible_to");
            ns.visibleTo().forEach(v::add);
        }
        if (ns.anaGroup() != 1) {
            n.put("ana_grpid", ns.anaGroup());
        }
        if (ns.allowShrink()) {
            n.put("allow_shrink", true);
        }
        if (!ns.qos().none()) {
            n.set("qos", qos(ns.qos()));
        }
        return n;
    }

    /** QoS limits as the configuration names them (MiB a second; only those set). */
    public static ObjectNode qos(io.nvmeof.target.Qos.Limits l) {
        ObjectNode q = JSON.createObjectNode();
        if (l.rwIosPerSecond() != 0) {
            q.put("rw_ios_per_sec", l.rwIosPerSecond());
        }
        if (l.rwBytesPerSecond() != 0) {
            q.put("rw_mbytes_per_sec", l.rwBytesPerSecond() >> 20);
        }
        if (l.readBytesPerSecond() != 0) {
            q.put("r_mbytes_per_sec", l.readBytesPerSecond() >> 20);
        }
        if (l.writeBytesPerSecond() != 0) {
            q.put("w_mbytes_per_sec", l.writeBytesPerSecond() >> 20);
        }
        return q;
    }

    public static ObjectNode host(HostSecurity h, Secrets secrets) {
        ObjectNode n = JSON.createObjectNode();
        n.put("nqn", h.nqn());
        if (h.hostKey() != null) {
            n.put("dhchap_key", secrets == Secrets.WRITTEN ? h.hostKey().format() : HIDDEN_TEXT);
        }
        if (h.controllerKey() != null) {
            n.put("dhchap_ctrl_key", secrets == Secrets.WRITTEN ? h.controllerKey().format() : HIDDEN_TEXT);
        }
        if (h.hostKey() != null) {
            ArrayNode hashes = n.putArray("dhchap_hashes");
            for (DhchapHash x : h.hashes()) {
                hashes.add(x.toString());
            }
            ArrayNode groups = n.putArray("dhchap_dhgroups");
            for (DhGroup g : h.dhGroups()) {
                groups.add(g.toString());
            }
        }
        if (h.tlsKey() != null) {
            n.put("tls_key", secrets == Secrets.WRITTEN ? h.tlsKey().format() : HIDDEN_TEXT);
        }
        return n;
    }

    private static ObjectNode metrics(MetricsServer.Endpoint m, Secrets secrets) {
        ObjectNode n = JSON.createObjectNode();
        n.put("listen", "tcp://" + m.address().getHostString() + ":" + m.address().getPort());
        if (m.user() != null) {
            n.put("user", m.user());
            n.put("password", secrets == Secrets.WRITTEN ? m.password() : HIDDEN_TEXT);
        }
        if (m.keystore() != null) {
            n.put("tls_keystore", m.keystore().toString());
            if (m.keystorePassword() != null) {
                n.put("tls_keystore_password", secrets == Secrets.WRITTEN ? m.keystorePassword() : HIDDEN_TEXT);
            }
        }
        return n;
    }
}
