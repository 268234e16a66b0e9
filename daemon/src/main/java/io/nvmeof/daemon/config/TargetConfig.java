package io.nvmeof.daemon.config;

import io.nvmeof.daemon.metrics.MetricsServer;
import io.nvmeof.protocol.auth.DhGroup;
import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.protocol.auth.DhchapKey;
import io.nvmeof.protocol.tls.TlsPsk;
import io.nvmeof.target.AnaState;
import io.nvmeof.target.HostSecurity;
import io.nvmeof.target.Port;
import io.nvmeof.target.Qos;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.BackendSpec;
import io.nvmeof.target.backend.RbdCluster;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

/**
 * The target's configuration, in the nouns of Linux nvmet: ports, subsystems, namespaces,
 * allowed hosts, and what each host must prove (DH-HMAC-CHAP keys); and where the
 * Prometheus metrics are served ({@code metrics}, null: nowhere). Values are validated; {@link ConfigLoader} builds it from JSON.
 */
public record TargetConfig(List<PortConfig> ports, List<SubsystemConfig> subsystems, Target.Options settings,
                           List<HostSecurity> hosts, MetricsServer.Endpoint metrics, Management management,
                           Map<String, Qos.Limits> hostQos, Map<String, Path> keyFiles,
                           List<RbdClusterConfig> rbdClusters, GatewayGroupConfig gatewayGroup) {

    public TargetConfig {
        hosts = List.copyOf(hosts);
        settings = settings.withIoExecutor(null);
        management = management == null ? Management.NONE : management;
        hostQos = hostQos == null ? Map.of() : Map.copyOf(hostQos);
        keyFiles = keyFiles == null ? Map.of() : Map.copyOf(keyFiles);
        rbdClusters = rbdClusters == null ? List.of() : List.copyOf(rbdClusters);
    }

    /** Without a gateway group. */
    public TargetConfig(List<PortConfig> ports, List<SubsystemConfig> subsystems, Target.Options settings,
                        List<HostSecurity> hosts, MetricsServer.Endpoint metrics, Management management,
                        Map<String, Qos.Limits> hostQos, Map<String, Path> keyFiles, List<RbdClusterConfig> rbdClusters) {
        this(ports, subsystems, settings, hosts, metrics, management, hostQos, keyFiles, rbdClusters, null);
    }

    /** Without RBD clusters. */
    public TargetConfig(List<PortConfig> ports, List<SubsystemConfig> subsystems, Target.Options settings,
                        List<HostSecurity> hosts, MetricsServer.Endpoint metrics, Management management,
                        Map<String, Qos.Limits> hostQos, Map<String, Path> keyFiles) {
        this(ports, subsystems, settings, hosts, metrics, management, hostQos, keyFiles, List.of());
    }

    /**
     * A Ceph cluster RBD namespaces name ({@code rbd_clusters[]}, {@link Schemas#RBD_CLUSTER}): its
     * configuration file and client id, and the pools the management API may create images in.
     */
    public record RbdClusterConfig(String name, Path conf, String id, List<String> creatablePools) {
        public RbdClusterConfig {
            creatablePools = List.copyOf(creatablePools);
        }

        /** What names its connection. */
        public RbdCluster.Key key() {
            return new RbdCluster.Key(conf == null ? null : conf.toString(), id);
        }
    }

    /** The declared RBD cluster {@code name}, or null. */
    public RbdClusterConfig rbdCluster(String name) {
        return rbdClusters.stream().filter(c -> c.name().equals(name)).findFirst().orElse(null);
    }

    /** The storage of namespace {@code n}: an RBD namespace's through the cluster it names. */
    public BackendSpec spec(NamespaceConfig n) {
        if (!n.backend().equals("rbd")) {
            return n.spec();
        }
        RbdClusterConfig c = rbdCluster(n.cluster());
        if (c == null) {
            throw new IllegalStateException("no RBD cluster " + n.cluster()); // the loader checks it
        }
        return BackendSpec.rbd(c.key(), n.pool(), n.image(), n.blockSize(), n.readOnly());
    }

    /**
     * The key (or password) file a secret came from, by {@link #secret}'s name; null if it was
     * given inline (or is not there). A written configuration names the file, never the key.
     */
    public Path keyFile(String owner, String field) {
        return keyFiles.get(secret(owner, field));
    }

    /** The name of a secret in {@link #keyFiles}: its owner (a host's NQN, or "metrics") and its field. */
    public static String secret(String owner, String field) {
        return owner + " " + field;
    }

    /** Without key files. */
    public TargetConfig(List<PortConfig> ports, List<SubsystemConfig> subsystems, Target.Options settings,
                        List<HostSecurity> hosts, MetricsServer.Endpoint metrics, Management management,
                        Map<String, Qos.Limits> hostQos) {
        this(ports, subsystems, settings, hosts, metrics, management, hostQos, Map.of());
    }

    /** Without per-host QoS. */
    public TargetConfig(List<PortConfig> ports, List<SubsystemConfig> subsystems, Target.Options settings,
                        List<HostSecurity> hosts, MetricsServer.Endpoint metrics, Management management) {
        this(ports, subsystems, settings, hosts, metrics, management, Map.of());
    }

    /**
     * This gateway's gateway group ({@code gateway_group}, {@link Schemas#GATEWAY_GROUP}): gateways
     * that serve the same subsystem over RBD images of cluster {@code cluster} and agree through
     * lease objects in {@code pool} who owns each listed ANA group.
     */
    public record GatewayGroupConfig(String name, String self, String cluster, String pool, List<GatewayMember> members,
                                     List<GatewayAnaGroup> anaGroups, boolean failback, int failbackDelayMs) {
        public GatewayGroupConfig {
            members = List.copyOf(members);
            anaGroups = List.copyOf(anaGroups);
        }
    }

    /** A member of a gateway group: its name and the address hosts reach it at (for people and {@code nvmeof gw show}). */
    public record GatewayMember(String name, String address) {
    }

    /** An ANA group a gateway group manages, and the member that owns it when healthy. */
    public record GatewayAnaGroup(int grpid, String preferred) {
    }

    /** An ANA group's state through a port ({@link Schemas#ANA_GROUP}: what {@code set_ana_state} sets). */
    public record AnaGroup(int grpid, AnaState state) {
    }

    /**
     * A host's entry ({@code hosts[]}, {@link Schemas#HOST}): what it must prove and its rate
     * limits. The configuration keeps its parts apart: {@link #security()} in {@link #hosts()}, its
     * limits in {@link #hostQos()} and its key files in {@link #keyFiles()}.
     */
    public record HostConfig(String nqn, Secret<DhchapKey> dhchapKey,
                             Secret<DhchapKey> dhchapCtrlKey,
                             List<DhchapHash> dhchapHashes,
                             List<DhGroup> dhchapDhgroups,
                             Secret<TlsPsk> tlsKey, Qos.Limits qos) {
        public HostConfig {
            dhchapHashes = List.copyOf(dhchapHashes);
            dhchapDhgroups = List.copyOf(dhchapDhgroups);
            qos = qos == null ? Qos.Limits.NONE : qos;
        }

        /** What it must prove. */
        public HostSecurity security() {
            return new HostSecurity(nqn, value(dhchapKey), value(dhchapCtrlKey), dhchapHashes, dhchapDhgroups,
                    value(tlsKey));
        }

        /** The same with its inline keys as {@code shown} says. */
        HostConfig shown(ConfigWriter.Secrets shown) {
            return new HostConfig(nqn, TargetConfig.shown(dhchapKey, shown), TargetConfig.shown(dhchapCtrlKey, shown), dhchapHashes,
                    dhchapDhgroups, TargetConfig.shown(tlsKey, shown), qos);
        }
    }

    /**
     * The metrics endpoint's object form ({@code "metrics": {...}}, {@link Schemas#METRICS}); its
     * {@link #endpoint()} is what the configuration keeps.
     */
    public record MetricsConfig(InetSocketAddress listen, String user, Secret<String> password,
                                Path tlsKeystore, Secret<String> tlsKeystorePassword) {
        /** The endpoint it describes. */
        public MetricsServer.Endpoint endpoint() {
            return new MetricsServer.Endpoint(listen, user, value(password), tlsKeystore, value(tlsKeystorePassword));
        }

        /** The same with its inline passwords as {@code shown} says. */
        MetricsConfig shown(ConfigWriter.Secrets shown) {
            return new MetricsConfig(listen, user, TargetConfig.shown(password, shown), tlsKeystore, TargetConfig.shown(tlsKeystorePassword, shown));
        }
    }

    /** Each host's entry, as {@link Schemas#HOST} reads and writes it: those with keys, then those with limits only. */
    public List<HostConfig> hostEntries() {
        List<HostConfig> l = new ArrayList<>();
        Set<String> withQos = new TreeSet<>(hostQos.keySet());
        for (HostSecurity h : hosts) {
            withQos.remove(h.nqn());
            l.add(new HostConfig(h.nqn(), secret(h.hostKey(), h.nqn(), "dhchap_key"),
                    secret(h.controllerKey(), h.nqn(), "dhchap_ctrl_key"), h.hashes(), h.dhGroups(),
                    secret(h.tlsKey(), h.nqn(), "tls_key"), hostQos.get(h.nqn())));
        }
        for (String nqn : withQos) {
            l.add(new HostConfig(nqn, null, null, HostSecurity.DEFAULT_HASHES, HostSecurity.DEFAULT_DH_GROUPS, null,
                    hostQos.get(nqn)));
        }
        return l;
    }

    /** The metrics endpoint's object, as {@link Schemas#METRICS} writes it; null if none. */
    public MetricsConfig metricsEntry() {
        return metrics == null ? null : new MetricsConfig(metrics.address(), metrics.user(),
                secret(metrics.password(), "metrics", "password"), metrics.keystore(),
                secret(metrics.keystorePassword(), "metrics", "tls_keystore_password"));
    }

    /** {@code value} (a key, or a password) as a secret of {@code owner}'s {@code field}, from its file if it had one. */
    private <T> Secret<T> secret(T value, String owner, String field) {
        if (value == null) {
            return null;
        }
        String text = value instanceof DhchapKey k ? k.format()
                : value instanceof TlsPsk t ? t.format() : value.toString();
        return Secret.of(value, text, keyFile(owner, field));
    }

    private static <T> T value(Secret<T> s) {
        return s == null ? null : s.value();
    }

    private static <T> Secret<T> shown(Secret<T> s, ConfigWriter.Secrets shown) {
        return s == null ? null : s.shown(shown);
    }

    /**
     * The management API ({@code "management"}): where its socket is (null: none, unless the
     * service's runtime directory gives one), who may call it besides root and the target's own
     * user, under which directories file and block namespaces may be added through it, and the
     * one directory {@code save_config} writes into ({@code saveConfigDir}; null: the state
     * directory's {@code saved/}, or nowhere without one).
     */
    public record Management(Path socket, List<String> allowedUsers, List<String> allowedGroups,
                             List<Path> allowedPaths, Path saveConfigDir) {
        public static final Management NONE = new Management(null, List.of(), null, List.of(), null);

        public Management {
            allowedUsers = List.copyOf(allowedUsers);
            allowedGroups = allowedGroups == null ? null : List.copyOf(allowedGroups);
            allowedPaths = List.copyOf(allowedPaths);
        }
    }

    /** Without a metrics endpoint. */
    public TargetConfig(List<PortConfig> ports, List<SubsystemConfig> subsystems, Target.Options settings,
                        List<HostSecurity> hosts) {
        this(ports, subsystems, settings, hosts, null, Management.NONE);
    }

    public TargetConfig(List<PortConfig> ports, List<SubsystemConfig> subsystems, Target.Options settings) {
        this(ports, subsystems, settings, List.of());
    }

    public TargetConfig(List<PortConfig> ports, List<SubsystemConfig> subsystems) {
        this(ports, subsystems, Target.Options.defaults());
    }

    /** The same with the metrics endpoint at {@code address}, plain HTTP (null: none). */
    public TargetConfig withMetrics(InetSocketAddress address) {
        return new TargetConfig(ports, subsystems, settings, hosts, address == null ? null
                : metrics != null ? new MetricsServer.Endpoint(address, metrics.user(), metrics.password(),
                        metrics.keystore(), metrics.keystorePassword()) : MetricsServer.Endpoint.plain(address), management,
                hostQos, keyFiles, rbdClusters, gatewayGroup);
    }

    /** The same with other settings. */
    public TargetConfig withSettings(Target.Options settings) {
        return new TargetConfig(ports, subsystems, settings, hosts, metrics, management, hostQos, keyFiles, rbdClusters, gatewayGroup);
    }

    /** The same with another management section. */
    public TargetConfig withManagement(Management management) {
        return new TargetConfig(ports, subsystems, settings, hosts, metrics, management, hostQos, keyFiles, rbdClusters, gatewayGroup);
    }

    /**
     * A port: where hosts connect, and which subsystems they reach there (none: discovery only).
     * {@code trtype} names a registered transport (tcp, rdma); {@code options} are that
     * transport's port options (rdma: {@code provider}), as configured.
     */
    public record PortConfig(int portid, String trtype, Map<String, String> options, String traddr, int trsvcid,
                             List<String> subsystems, SortedMap<Integer, AnaState> anaGroups,
                             List<Port.Referral> referrals, boolean mdns) {
        public PortConfig {
            options = Map.copyOf(options);
            anaGroups = Collections.unmodifiableSortedMap(new TreeMap<>(anaGroups));
            referrals = List.copyOf(referrals);
        }

        public PortConfig(int portid, String trtype, Map<String, String> options, String traddr, int trsvcid,
                          List<String> subsystems) {
            this(portid, trtype, options, traddr, trsvcid, subsystems, new TreeMap<>(), List.of(), false);
        }

        public PortConfig(int portid, String trtype, String traddr, int trsvcid, List<String> subsystems) {
            this(portid, trtype, Map.of(), traddr, trsvcid, subsystems);
        }

        PortConfig withId(int id) {
            return new PortConfig(id, trtype, options, traddr, trsvcid, subsystems, anaGroups, referrals, mdns);
        }
    }

    /**
     * A subsystem. {@code cntlidMin..cntlidMax}: the controller IDs this process gives out (nvmet's
     * {@code cntlid_min}/{@code cntlid_max}); {@code gateways}: served by several target processes
     * over shared storage (file namespaces then need {@code direct_io}; fused Compare and Write is
     * not offered).
     */
    public record SubsystemConfig(String nqn, String serial, String model, String firmware, int ieeeOui,
                                  boolean allowAnyHost, List<String> allowedHosts, List<NamespaceConfig> namespaces,
                                  int cntlidMin, int cntlidMax, boolean gateways) {
        public SubsystemConfig(String nqn, String serial, String model, String firmware, int ieeeOui,
                               boolean allowAnyHost, List<String> allowedHosts, List<NamespaceConfig> namespaces) {
            this(nqn, serial, model, firmware, ieeeOui, allowAnyHost, allowedHosts, namespaces, 1, Subsystem.MAX_CNTLID, false);
        }

        /** The namespaces it serves: those {@link NamespaceConfig#enabled}. */
        public List<NamespaceConfig> served() {
            return namespaces.stream().filter(NamespaceConfig::enabled).toList();
        }

        /**
         * The serial number of subsystem {@code nqn} when none is given: 16 hex digits from the
         * NQN's hash, the same at every start (hosts see it in Identify Controller).
         */
        public static String defaultSerial(String nqn) {
            return String.format("%016x", nqn.hashCode() & 0xffffffffL).substring(0, 16);
        }
    }

    /**
     * A namespace. {@code backend} is ram, null, file or block; {@code size} is bytes (0: the
     * file's or device's own); {@code blockSize} 512 or 4096 (0: the device's own);
     * {@code visibleTo} the hosts that see it (null: every host the subsystem lets in);
     * {@code anaGroup} its ANA group (nvmet's {@code ana_grpid}, 1 unless set); {@code allowShrink}:
     * a reload or change that makes it smaller resizes it in place (otherwise that is refused);
     * {@code qos} its rate limits (none unless set); {@code enabled}: served (nvmet's {@code
     * enable}; a namespace that is not is kept in the configuration, closed, and no host sees it);
     * {@code cluster}, {@code pool}, {@code image}: an RBD namespace's image, in a cluster of {@code
     * rbd_clusters} (null for other backends).
     */
    public record NamespaceConfig(int nsid, String backend, String path, long size, int blockSize, boolean readOnly,
                                  UUID uuid, boolean directIo, List<String> visibleTo, int anaGroup, boolean allowShrink,
                                  Qos.Limits qos, boolean enabled, String cluster, String pool,
                                  String image) {
        public NamespaceConfig {
            visibleTo = visibleTo == null ? null : List.copyOf(visibleTo);
            qos = qos == null ? Qos.Limits.NONE : qos;
        }

        /** Not on RBD. */
        public NamespaceConfig(int nsid, String backend, String path, long size, int blockSize, boolean readOnly, UUID uuid,
                               boolean directIo, List<String> visibleTo, int anaGroup, boolean allowShrink,
                               Qos.Limits qos, boolean enabled) {
            this(nsid, backend, path, size, blockSize, readOnly, uuid, directIo, visibleTo, anaGroup, allowShrink, qos,
                    enabled, null, null, null);
        }

        /** Enabled. */
        public NamespaceConfig(int nsid, String backend, String path, long size, int blockSize, boolean readOnly, UUID uuid,
                               boolean directIo, List<String> visibleTo, int anaGroup, boolean allowShrink,
                               Qos.Limits qos) {
            this(nsid, backend, path, size, blockSize, readOnly, uuid, directIo, visibleTo, anaGroup, allowShrink, qos, true);
        }

        public NamespaceConfig(int nsid, String backend, String path, long size, int blockSize, boolean readOnly, UUID uuid,
                               boolean directIo, List<String> visibleTo, int anaGroup, boolean allowShrink) {
            this(nsid, backend, path, size, blockSize, readOnly, uuid, directIo, visibleTo, anaGroup, allowShrink, null);
        }

        public NamespaceConfig(int nsid, String backend, String path, long size, int blockSize, boolean readOnly, UUID uuid,
                               boolean directIo, List<String> visibleTo, int anaGroup) {
            this(nsid, backend, path, size, blockSize, readOnly, uuid, directIo, visibleTo, anaGroup, false);
        }

        public NamespaceConfig(int nsid, String backend, String path, long size, int blockSize, boolean readOnly, UUID uuid,
                               boolean directIo, List<String> visibleTo) {
            this(nsid, backend, path, size, blockSize, readOnly, uuid, directIo, visibleTo, 1);
        }

        public NamespaceConfig(int nsid, String backend, String path, long size, int blockSize, boolean readOnly, UUID uuid,
                               boolean directIo) {
            this(nsid, backend, path, size, blockSize, readOnly, uuid, directIo, null);
        }

        /** A namespace {@code nsid} of the storage {@code spec} describes. */
        public static NamespaceConfig of(int nsid, BackendSpec spec) {
            return new NamespaceConfig(nsid, spec.kind(), spec.path(), spec.size(), spec.blockSize(), spec.readOnly(), null,
                    spec.directIo());
        }

        /** A namespace {@code nsid} on the RBD image {@code spec} names, in the cluster called {@code cluster}. */
        public static NamespaceConfig rbd(int nsid, String cluster, BackendSpec spec) {
            return new NamespaceConfig(nsid, "rbd", null, 0, spec.blockSize(), spec.readOnly(), null, false, null, 1, false,
                    null, true, cluster, spec.pool(), spec.image());
        }

        /** Its storage (not on RBD: {@link TargetConfig#spec} opens those through their cluster). */
        public BackendSpec spec() {
            return new BackendSpec(backend, path, size, blockSize, readOnly, directIo);
        }

        /** The hosts that see it, as a set, or null for every host the subsystem lets in. */
        public Set<String> visibility() {
            return visibleTo == null ? null : Set.copyOf(visibleTo);
        }

        /** Whether two configs describe the same storage but for its size (a reload resizes such a namespace in place). */
        public boolean sameStorageButSize(NamespaceConfig o) {
            return Schemas.NAMESPACE.sameIn(this, o, Set.of(Field.Apply.REOPEN));
        }

        /** Whether two configs describe the same storage (a reload keeps such a namespace open). */
        public boolean sameStorage(NamespaceConfig o) {
            return Schemas.NAMESPACE.sameIn(this, o, Set.of(Field.Apply.REOPEN, Field.Apply.RESIZE));
        }
    }
}
