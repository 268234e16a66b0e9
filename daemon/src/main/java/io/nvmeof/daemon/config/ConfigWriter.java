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
 * with its value, every port, subsystem, namespace and host. Keys are secrets: one that came
 * from a key file is written as that file's path ({@code dhchap_key_file}, ...) in every form;
 * one given inline is written as {@link Secrets} says.
 */
public final class ConfigWriter {
    /** What becomes of keys and passwords given inline. */
    public enum Secrets {
        /** Only that a key is there ({@code --show-config}, {@code get_config}). */
        HIDDEN,
        /**
         * A marker that the loader refuses, saying to move the key to a key file: what {@code
         * save_config} writes, so that no file it writes holds a key.
         */
        SAVED,
        /** The key itself: only for a configuration that stays in memory (the daemon's merge). */
        WRITTEN
    }

    /** What stands for a key that is not shown. */
    public static final String HIDDEN_TEXT = "(set, not shown)";
    /** What stands for an inline key in a saved configuration; the loader refuses it with what to do. */
    public static final String NOT_SAVED = "(inline key not saved: move it to a key file)";

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
            ObjectNode n = host(h, c, secrets);
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
            root.set("metrics", metrics(c.metrics(), c, secrets));
        }
        if (!c.management().equals(TargetConfig.Management.NONE)) {
            root.set("management", Schemas.MANAGEMENT.write(c.management()));
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

    /** A port ({@link Schemas#PORT}). */
    public static ObjectNode port(PortConfig p) {
        return Schemas.PORT.write(p);
    }

    /** A subsystem and its namespaces ({@link Schemas#SUBSYSTEM}). */
    public static ObjectNode subsystem(SubsystemConfig s) {
        return Schemas.SUBSYSTEM.write(s);
    }

    /** A namespace ({@link Schemas#NAMESPACE}). */
    public static ObjectNode namespace(NamespaceConfig ns) {
        return Schemas.NAMESPACE.write(ns);
    }

    /** QoS limits as the configuration names them (MiB a second; only those set). */
    public static ObjectNode qos(io.nvmeof.target.Qos.Limits l) {
        return Schemas.QOS.write(l);
    }

    /** A host's entry; its keys as {@code c} says they came, and {@code secrets} says for inline ones. */
    public static ObjectNode host(HostSecurity h, TargetConfig c, Secrets secrets) {
        ObjectNode n = JSON.createObjectNode();
        n.put("nqn", h.nqn());
        if (h.hostKey() != null) {
            secret(n, "dhchap_key", h.hostKey().format(), c.keyFile(h.nqn(), "dhchap_key"), secrets);
        }
        if (h.controllerKey() != null) {
            secret(n, "dhchap_ctrl_key", h.controllerKey().format(), c.keyFile(h.nqn(), "dhchap_ctrl_key"), secrets);
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
            secret(n, "tls_key", h.tlsKey().format(), c.keyFile(h.nqn(), "tls_key"), secrets);
        }
        return n;
    }

    /** A secret: its file's path as {@code FIELD_file} if it came from one, else as {@code secrets} says. */
    private static void secret(ObjectNode n, String field, String value, java.nio.file.Path file, Secrets secrets) {
        if (file != null) {
            n.put(field + "_file", file.toString());
            return;
        }
        n.put(field, switch (secrets) {
            case HIDDEN -> HIDDEN_TEXT;
            case SAVED -> NOT_SAVED;
            case WRITTEN -> value;
        });
    }

    private static ObjectNode metrics(MetricsServer.Endpoint m, TargetConfig c, Secrets secrets) {
        ObjectNode n = JSON.createObjectNode();
        n.put("listen", "tcp://" + m.address().getHostString() + ":" + m.address().getPort());
        if (m.user() != null) {
            n.put("user", m.user());
            secret(n, "password", m.password(), c.keyFile("metrics", "password"), secrets);
        }
        if (m.keystore() != null) {
            n.put("tls_keystore", m.keystore().toString());
            if (m.keystorePassword() != null) {
                secret(n, "tls_keystore_password", m.keystorePassword(), c.keyFile("metrics", "tls_keystore_password"),
                        secrets);
            }
        }
        return n;
    }
}
