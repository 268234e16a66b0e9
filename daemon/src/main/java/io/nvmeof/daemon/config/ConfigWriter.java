package io.nvmeof.daemon.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.daemon.config.TargetConfig.NamespaceConfig;
import io.nvmeof.daemon.config.TargetConfig.PortConfig;
import io.nvmeof.daemon.config.TargetConfig.SubsystemConfig;
import io.nvmeof.daemon.metrics.MetricsServer;
import io.nvmeof.protocol.auth.DhGroup;
import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.target.HostSecurity;
import io.nvmeof.target.Qos;
import io.nvmeof.target.Setting;
import io.nvmeof.target.Settings;
import io.nvmeof.target.Target;
import java.util.Map;

/**
 * Writes a configuration in our JSON form, as {@link ConfigLoader} reads it back: every setting
 * with its value, every port, subsystem, namespace and host. Keys are secrets: one that came
 * from a key file is written as that file's path ({@code dhchap_key_file}, ...) in every form;
 * one given inline is written as {@link Secrets} says ({@link Secret#shown}).
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
        for (TargetConfig.HostConfig h : c.hostEntries()) {
            hosts.add(Schemas.HOST.write(h.shown(secrets)));
        }
        if (c.metrics() != null) {
            root.set("metrics", Schemas.METRICS.write(c.metricsEntry().shown(secrets)));
        }
        if (!c.rbdClusters().isEmpty()) {
            ArrayNode clusters = root.putArray("rbd_clusters");
            c.rbdClusters().forEach(rc -> clusters.add(Schemas.RBD_CLUSTER.write(rc)));
        }
        if (c.gatewayGroup() != null) {
            root.set("gateway_group", Schemas.GATEWAY_GROUP.write(c.gatewayGroup()));
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
    public static ObjectNode qos(Qos.Limits l) {
        return Schemas.QOS.write(l);
    }
}
