package io.nvmeof.daemon.config;

import static io.nvmeof.daemon.config.Field.Apply.IDENTITY;
import static io.nvmeof.daemon.config.Field.Apply.IN_PLACE;
import static io.nvmeof.daemon.config.Field.Apply.REOPEN;
import static io.nvmeof.daemon.config.Field.Apply.RESIZE;
import static io.nvmeof.daemon.config.Field.Apply.RESTART;
import static io.nvmeof.daemon.config.Field.optional;
import static io.nvmeof.daemon.config.Field.required;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.nvmeof.daemon.config.TargetConfig.NamespaceConfig;
import io.nvmeof.daemon.config.TargetConfig.SubsystemConfig;
import io.nvmeof.daemon.metrics.MetricsServer;
import io.nvmeof.protocol.auth.DhchapKey;
import io.nvmeof.protocol.tls.TlsPsk;
import io.nvmeof.target.AnaState;
import io.nvmeof.target.GatewayGroup;
import io.nvmeof.target.HostSecurity;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Port;
import io.nvmeof.target.PortOptionException;
import io.nvmeof.target.ProductVersion;
import io.nvmeof.target.Qos;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.TargetTransport;
import io.nvmeof.target.TargetTransports;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.BiPredicate;
import java.util.function.Function;

/**
 * The configuration's objects, a row per field: what {@link ConfigLoader} reads, {@link
 * ConfigWriter} writes, a reload changes, the management API takes and {@code
 * docs/reference/configuration.md} describes. To add a field, add its row here and its component
 * to the record (the schema refuses a record component without a row), and apply it where the
 * row's {@link Field.Apply} says.
 */
public final class Schemas {
    private static final System.Logger LOG = System.getLogger(ConfigLoader.class.getName());
    private Schemas() {
    }

    /** The lowest limits allowed: waits stay well under a host's 30 s I/O timeout at any queue depth Linux uses. */
    static final long MIN_IOPS = 100;
    static final long MIN_MBYTES = 1;

    /** QoS limits as SPDK's bdev QoS and Ceph's gateways name them; 0 or absent: none. */
    public static final ObjectSchema<Qos.Limits> QOS = new ObjectSchema<>("qos",
            "Rate limits of a namespace (all its hosts together) or of a host (its every namespace), as SPDK's bdev"
                    + " QoS and Ceph's gateways name them. A command waits for its turn; one that moves more than a"
                    + " second of the smallest byte limit is charged in pieces.",
            Qos.Limits.class, List.of(
            optional("rw_ios_per_sec", "rwIosPerSecond", Codecs.limit(MIN_IOPS, 0, "I/Os a second"), 0L, IN_PLACE,
                    "commands a second, reads and writes together (Write Zeroes, deallocate and Flush count one)")
                    .flag("--rw-ios-per-second"),
            optional("rw_mbytes_per_sec", "rwBytesPerSecond", Codecs.limit(MIN_MBYTES, 20, "MiB a second"), 0L, IN_PLACE,
                    "MiB a second read and written together (a Copy counts what it reads and writes)")
                    .flag("--rw-megabytes-per-second"),
            optional("r_mbytes_per_sec", "readBytesPerSecond", Codecs.limit(MIN_MBYTES, 20, "MiB a second"), 0L,
                    IN_PLACE, "MiB a second read").flag("--r-megabytes-per-second"),
            optional("w_mbytes_per_sec", "writeBytesPerSecond", Codecs.limit(MIN_MBYTES, 20, "MiB a second"), 0L,
                    IN_PLACE, "MiB a second written (Write Zeroes and deallocate count their blocks' bytes)")
                    .flag("--w-megabytes-per-second")),
            Set.of(), List.of());

    private static final List<String> BACKENDS = List.of("ram", "null", "file", "block", "rbd");

    /** A namespace and its storage. */
    public static final ObjectSchema<NamespaceConfig> NAMESPACE = new ObjectSchema<>("namespace",
            "A namespace of a subsystem (`subsystems[].namespaces[]`) and the storage behind it. A reload applies"
                    + " a change as its column says; a namespace whose storage changes is opened anew before the old"
                    + " one is closed, so a failure keeps the old one.",
            NamespaceConfig.class, List.of(
            required("nsid", "nsid", Codecs.NSID, "must be a number 1..4294967294 (missing)", IDENTITY,
                    "the namespace ID"),
            required("backend", "backend", Codecs.oneOf(BACKENDS), "is missing (ram, null, file, block or rbd)", REOPEN,
                    "`ram` (memory), `null` (reads zeroes, writes nothing), `file` (a regular file), `block` (a"
                            + " block device) or `rbd` (a Ceph RBD image)").alwaysWritten(),
            optional("path", "path", Codecs.STRING, null, REOPEN, "the file or block device (file and block only)"),
            optional("size", "size", Codecs.SIZE, 0L, RESIZE,
                    "bytes (ram and null: required; file: created or grown to it; block: the device's own)")
                    .noted("the file's or device's own"),
            optional("block_size", "blockSize", Codecs.BLOCK_SIZE, 0, REOPEN,
                    "the logical block size").noted("the device's, else 4096"),
            optional("read_only", "readOnly", Codecs.BOOLEAN, false, REOPEN, "hosts may not write").alwaysWritten(),
            optional("uuid", "uuid", Codecs.UUID_CODEC, null, REOPEN, "the namespace's UUID")
                    .noted("derived from the NQN and NSID"),
            optional("direct_io", "directIo", Codecs.BOOLEAN, false, REOPEN,
                    "bypass the page cache (file and block; required where several gateways share the storage)"),
            optional("visible_to", "visibleTo", Codecs.list(Codecs.NQN), null, IN_PLACE, "the hosts that see it")
                    .noted("every host the subsystem lets in").live(onNamespace(
                            (l, v) -> Objects.equals(l.ns().visibility(), v == null ? null : Set.copyOf(v)),
                            (l, v) -> l.sub().visibility(l.nsid(), v == null ? null : Set.copyOf(v)),
                            (l, v) -> "now visible to " + (v == null ? "every allowed host" : v))),
            optional("ana_grpid", "anaGroup", Codecs.range(1, Port.MAX_ANA_GROUP), 1, IN_PLACE,
                    "its ANA group (nvmet's `ana_grpid`)").live(onNamespace((l, v) -> l.ns().anaGroup() == v,
                            (l, v) -> l.target().anaGroup(l.sub(), l.nsid(), v), (l, v) -> "now in ANA group " + v)),
            optional("allow_shrink", "allowShrink", Codecs.BOOLEAN, false, IN_PLACE,
                    "a change that makes it smaller resizes it in place, losing the data past the new end"),
            optional("qos", "qos", Codecs.object(QOS), Qos.Limits.NONE, IN_PLACE, "its rate limits (see `qos`)")
                    .live(onNamespace((l, v) -> v.equals(l.ns().qos() == null ? Qos.Limits.NONE : l.ns().qos().limits()),
                            (l, v) -> l.ns().qos(v), (l, v) -> "QoS now " + v)),
            optional("enable", "enabled", Codecs.FLAG, true, IN_PLACE,
                    "served (nvmet's `enable`); one that is not stays in the configuration, closed, seen by no host"),
            optional("cluster", "cluster", Codecs.CEPH_NAME, null, REOPEN,
                    "rbd only: the Ceph cluster, by its name in `rbd_clusters`"),
            optional("pool", "pool", Codecs.CEPH_NAME, null, REOPEN, "rbd only: the image's pool"),
            optional("image", "image", Codecs.CEPH_NAME, null, REOPEN,
                    "rbd only: the image (its size is the image's; `ns resize` resizes the image)")),
            Set.of(), List.of(Schemas::namespaceStorage));

    private static final Map<String, Function<NamespaceConfig, String>> NAMESPACE_RBD_FIELDS = Map.of(
            "cluster", NamespaceConfig::cluster, "pool", NamespaceConfig::pool, "image", NamespaceConfig::image);

    /** A namespace as it runs, where its in-place rows are applied: namespace {@code nsid} of {@code sub} in {@code target}. */
    public record RunningNamespace(Target target, Subsystem sub, int nsid) {
        /** The running namespace. */
        public Namespace ns() {
            return sub.namespace(nsid);
        }
    }

    /** A subsystem as it runs, where its in-place rows are applied; {@code config}: all it is to hold. */
    public record RunningSubsystem(Subsystem sub, SubsystemConfig config) {
    }

    /** A port as it runs in {@code target}, where its in-place rows are applied. */
    public record RunningPort(Target target, Port port) {
    }

    private static <T> Field.Live<RunningNamespace, T> onNamespace(BiPredicate<RunningNamespace, T> holds,
            BiConsumer<RunningNamespace, T> set, BiFunction<RunningNamespace, T, String> said) {
        return Field.Live.of(holds, set, said);
    }

    private static <T> Field.Live<RunningSubsystem, T> onSubsystem(BiPredicate<RunningSubsystem, T> holds,
            BiConsumer<RunningSubsystem, T> set, BiFunction<RunningSubsystem, T, String> said) {
        return Field.Live.of(holds, set, said);
    }

    private static <T> Field.Live<RunningPort, T> onPort(BiPredicate<RunningPort, T> holds,
            BiConsumer<RunningPort, T> set, BiFunction<RunningPort, T, String> said) {
        return Field.Live.of(holds, set, said);
    }

    /** The controller ID range the subsystem now gives out. */
    private static String cntlids(RunningSubsystem l, int v) {
        return "controller IDs " + l.config().cntlidMin() + ".." + l.config().cntlidMax();
    }

    /** Lets in exactly {@code hosts}: those no longer listed lose their controllers. */
    private static void allowOnly(Subsystem sub, List<String> hosts) {
        for (String h : List.copyOf(sub.allowedHosts())) {
            if (!hosts.contains(h)) {
                sub.disallowHost(h);
            }
        }
        hosts.forEach(sub::allowHost);
    }

    /**
     * Gives each ANA group of {@code port} its configured state, and a group no longer named
     * nvmet's default (1 optimized, others inaccessible); hosts there are told of a change.
     */
    private static void anaStates(RunningPort l, SortedMap<Integer, AnaState> states) {
        SortedSet<Integer> groups = new TreeSet<>(l.port().anaGroups());
        groups.addAll(states.keySet());
        GatewayGroup gateways = l.target().gatewayGroup();
        for (int g : groups) {
            if (gateways != null && gateways.manages(g)) {
                continue; // its state follows its lease
            }
            AnaState want = states.getOrDefault(g, g == 1 ? AnaState.OPTIMIZED : AnaState.INACCESSIBLE);
            if (l.port().anaState(g) != want || !l.port().anaGroups().contains(g)) {
                l.target().anaState(l.port(), g, want);
            }
        }
    }

    private static boolean holdsAnaStates(RunningPort l, SortedMap<Integer, AnaState> states) {
        if (!l.port().anaGroups().containsAll(states.keySet())) {
            return false;
        }
        GatewayGroup gateways = l.target().gatewayGroup();
        for (int g : l.port().anaGroups()) {
            if (gateways != null && gateways.manages(g)) {
                continue;
            }
            if (l.port().anaState(g) != states.getOrDefault(g, g == 1 ? AnaState.OPTIMIZED : AnaState.INACCESSIBLE)) {
                return false;
            }
        }
        return true;
    }

    /** Serves exactly {@code nqns} through the port: hosts of a subsystem taken out are let go there, as nvmet does. */
    private static void serve(RunningPort l, List<String> nqns) {
        Set<String> dropped = new HashSet<>(l.port().subsystems());
        dropped.removeAll(nqns);
        l.port().subsystems().retainAll(nqns);
        l.port().subsystems().addAll(nqns);
        for (String nqn : dropped) {
            Subsystem sub = l.target().subsystem(nqn);
            if (sub != null) {
                sub.disconnect(l.port());
            }
        }
        l.target().portChanged();
    }

    private static void namespaceStorage(NamespaceConfig n, String at, JsonNode node) {
        String backend = n.backend();
        boolean rbd = backend.equals("rbd");
        for (String f : List.of("cluster", "pool", "image")) {
            if (rbd != (NAMESPACE_RBD_FIELDS.get(f).apply(n) != null)) {
                throw new ConfigException(at + "." + f, rbd ? "is missing; an rbd namespace needs cluster, pool and image"
                        : "makes no sense for a " + backend + " namespace");
            }
        }
        if (rbd) {
            if (n.path() != null || n.size() != 0 || n.directIo()) {
                throw new ConfigException(at + "." + (n.path() != null ? "path" : n.size() != 0 ? "size" : "direct_io"),
                        "makes no sense for an rbd namespace (the image has its own size)");
            }
            return;
        }
        boolean stored = backend.equals("file") || backend.equals("block");
        if (stored && (n.path() == null || n.path().isEmpty())) {
            throw new ConfigException(at + ".path", "is missing; a " + backend + " namespace needs one");
        }
        if (!stored && n.path() != null) {
            throw new ConfigException(at + ".path", "makes no sense for a " + backend + " namespace");
        }
        if (!stored && n.size() == 0) {
            throw new ConfigException(at + ".size", "is missing; a " + backend + " namespace needs one");
        }
        if (backend.equals("block") && n.size() != 0) {
            throw new ConfigException(at + ".size", "comes from the device for a block namespace");
        }
        int bs = n.blockSize() == 0 ? 4096 : n.blockSize();
        if (n.size() % bs != 0) {
            throw new ConfigException(at + ".size", n.size() + " is not a multiple of the " + bs + "-byte block size");
        }
        if (n.directIo() && !stored) {
            throw new ConfigException(at + ".direct_io", "applies to file and block namespaces only");
        }
    }

    /** A subsystem: its identity, who it lets in, and its namespaces. */
    public static final ObjectSchema<SubsystemConfig> SUBSYSTEM = new ObjectSchema<>("subsystem",
            "A subsystem (`subsystems[]`): what hosts connect to, by its NQN.",
            SubsystemConfig.class, List.of(
            required("nqn", "nqn", Codecs.NQN, "must be an NQN string (missing)", IDENTITY, "its NQN"),
            optional("serial", "serial", Codecs.STRING, null, RESTART,
                    "the serial number hosts read")
                    .derivedDefault(v -> TargetConfig.SubsystemConfig.defaultSerial((String) v.get("nqn")), "derived from the NQN")
                    .alwaysWritten(),
            optional("model", "model", Codecs.STRING, "nvmeof-java", RESTART, "the model number hosts read")
                    .alwaysWritten(),
            optional("firmware", "firmware", Codecs.STRING, ProductVersion.FIRMWARE_REVISION, RESTART,
                    "the firmware revision hosts read").alwaysWritten(),
            optional("ieee_oui", "ieeeOui", Codecs.OUI, 0, RESTART, "the IEEE OUI hosts read").alwaysWritten(),
            optional("allowed_hosts", "allowedHosts", Codecs.list(Codecs.NQN), List.<String>of(), IN_PLACE,
                    "the host NQNs it lets in (one taken out loses its controllers)").alwaysWritten().flag("--allow-host")
                    .live(onSubsystem((l, v) -> l.sub().allowedHosts().equals(Set.copyOf(v)),
                            (l, v) -> allowOnly(l.sub(), v), (l, v) -> "allowed hosts now " + v)),
            optional("allow_any_host", "allowAnyHost", Codecs.BOOLEAN, null, IN_PLACE,
                    "any host may connect")
                    .derivedDefault(v -> ((List<?>) v.get("allowed_hosts")).isEmpty(), "true when `allowed_hosts` is empty")
                    .alwaysWritten().live(onSubsystem((l, v) -> l.sub().allowsAnyHost() == v,
                            (l, v) -> l.sub().allowAnyHost(v), (l, v) -> "allow_any_host " + v)),
            optional("namespaces", "namespaces", Codecs.list(Codecs.object(NAMESPACE)), List.<NamespaceConfig>of(),
                    IN_PLACE, "its namespaces (see `namespace`)").alwaysWritten(),
            optional("cntlid_min", "cntlidMin", Codecs.range(1, Subsystem.MAX_CNTLID), 1, IN_PLACE,
                    "the lowest controller ID this process gives out (nvmet's `cntlid_min`; for controllers from now"
                            + " on)").live(onSubsystem((l, v) -> l.sub().cntlidMin() == v,
                            (l, v) -> l.sub().cntlidRange(v, l.config().cntlidMax()), Schemas::cntlids)),
            optional("cntlid_max", "cntlidMax", Codecs.range(1, Subsystem.MAX_CNTLID), Subsystem.MAX_CNTLID, IN_PLACE,
                    "the highest (nvmet's `cntlid_max`); gateways over one subsystem take ranges that do not overlap")
                    .live(onSubsystem((l, v) -> l.sub().cntlidMax() == v,
                            (l, v) -> l.sub().cntlidRange(l.config().cntlidMin(), v), Schemas::cntlids)),
            optional("gateways", "gateways", Codecs.BOOLEAN, false, IN_PLACE,
                    "served by several target processes over shared storage (file and block namespaces then need"
                            + " `direct_io`; Identify says so from now on, connected hosts keep what they read)")
                    .live(onSubsystem((l, v) -> l.sub().gateways() == v, (l, v) -> l.sub().gateways(v),
                            (l, v) -> "gateways " + v))),
            Set.of(), List.of(Schemas::subsystemChecks));

    private static void subsystemChecks(SubsystemConfig s, String at, JsonNode node) {
        if (s.allowAnyHost() && !s.allowedHosts().isEmpty()) {
            throw new ConfigException(at + ".allow_any_host", "is true, but allowed_hosts lists hosts");
        }
        if (s.cntlidMin() > s.cntlidMax()) {
            throw new ConfigException(at + ".cntlid_max", s.cntlidMax() + " is below cntlid_min " + s.cntlidMin());
        }
        if (s.gateways()) {
            shared(node, at, s.namespaces());
        }
    }

    /** A port: where hosts connect, by which transport, and which subsystems they reach there. */
    public static final ObjectSchema<TargetConfig.PortConfig> PORT = new ObjectSchema<>("port",
            "A port (`ports[]`): an address hosts connect to, by one transport, and the subsystems they reach there"
                    + " (none: a discovery-only port; every port also serves the discovery subsystem). A change of"
                    + " address, transport or transport option closes the port and opens it anew.",
            TargetConfig.PortConfig.class, List.of(
            required("portid", "portid", Codecs.range(0, 0xffff), "must be a number 0..65535 (missing)", IDENTITY,
                    "the port's ID (nvmet's `portid`)"),
            optional("trtype", "trtype", PortCodecs.TRTYPE, "tcp", REOPEN, "its transport").alwaysWritten(),
            optional("options", "options", PortCodecs.OPTIONS, Map.<String, String>of(), REOPEN,
                    "the transport's port options"),
            required("traddr", "traddr", PortCodecs.IP_ADDRESS, "is missing (the address to listen on, e.g. 0.0.0.0)",
                    REOPEN, "the address to listen on"),
            optional("trsvcid", "trsvcid", Codecs.range(0, 65535), 4420, REOPEN,
                    "the TCP port, or the RDMA CM port (0: any free one)").alwaysWritten(),
            optional("subsystems", "subsystems", Codecs.list(Codecs.NQN), List.<String>of(), IN_PLACE,
                    "the subsystems served here (one taken out ends its hosts' controllers here)").alwaysWritten()
                    .live(onPort((l, v) -> l.port().subsystems().equals(Set.copyOf(v)), Schemas::serve,
                            (l, v) -> "now serves " + v)),
            optional("ana_groups", "anaGroups", PortCodecs.ANA_GROUPS, Collections.<Integer, AnaState>emptySortedMap(),
                    IN_PLACE, "ANA group states through this port, as nvmetcli writes them; a group not named keeps"
                            + " nvmet's default (1 optimized, others inaccessible)")
                    .live(onPort(Schemas::holdsAnaStates, Schemas::anaStates, (l, v) -> "ANA groups " + (v.isEmpty()
                            ? "at nvmet's defaults" : String.join(", ", v.entrySet().stream()
                                    .map(e -> e.getKey() + " " + e.getValue()).toList())))),
            optional("referrals", "referrals", PortCodecs.REFERRALS, List.<Port.Referral>of(), IN_PLACE,
                    "other discovery services this one's log names (a `name` each, default `referralN`; `trsvcid`"
                            + " 8009 unless given)").live(onPort((l, v) -> l.port().referrals().equals(v),
                            (l, v) -> l.target().referrals(l.port(), v), (l, v) -> "referrals " + v.stream()
                                    .map(r -> r.name() + "=" + r.trtype() + "://" + r.traddr() + ":" + r.trsvcid()).toList())),
            optional("mdns", "mdns", Codecs.BOOLEAN, false, IN_PLACE,
                    "announce this port's discovery controller over mDNS/DNS-SD (`_nvme-disc._tcp`, TP8009) while it"
                            + " listens").flag("--mdns")),
            Set.of("adrfam"), List.of(Schemas::portOptions));

    /** The port's options are its transport's, and as it takes them. */
    private static void portOptions(TargetConfig.PortConfig p, String at, JsonNode node) {
        TargetTransport.Type transport = TargetTransports.type(p.trtype());
        for (String other : TargetTransports.names()) {
            for (TargetTransport.PortOption o : TargetTransports.type(other).portOptions()) {
                if (p.options().containsKey(o.name()) && transport.portOptions().stream()
                        .noneMatch(x -> x.name().equals(o.name()))) {
                    throw new ConfigException(at + "." + o.name(), "applies to " + other + " ports only");
                }
            }
        }
        try {
            transport.options(p.options());
        } catch (PortOptionException e) {
            throw new ConfigException(at + "." + e.option(), e.getMessage());
        }
    }

    /**
     * A subsystem served by several gateways over shared storage: a file or block namespace needs
     * {@code direct_io} (two page caches give stale reads). Identity the configuration leaves to
     * derivation is named in a warning: it is the same in every nvmeof-java gateway, not in
     * another stack's.
     */
    private static void shared(JsonNode s, String at, List<NamespaceConfig> namespaces) {
        for (int i = 0; i < namespaces.size(); i++) {
            NamespaceConfig n = namespaces.get(i);
            String nat = at + ".namespaces[" + i + "]";
            if ((n.backend().equals("file") || n.backend().equals("block")) && !n.directIo()) {
                throw new ConfigException(nat + ".direct_io", "must be true: the subsystem is served by several gateways"
                        + " (gateways: true), and each process's page cache would serve stale reads of the others' writes");
            }
            if (n.backend().equals("ram") || n.backend().equals("null")) {
                throw new ConfigException(nat + ".backend", "a " + n.backend() + " namespace cannot be shared by gateways");
            }
            if (n.uuid() == null && !n.backend().equals("rbd")) { // an image's identity is its own
                LOG.log(System.Logger.Level.WARNING, "{0}.uuid is not set: derived from the NQN and NSID, which every"
                        + " nvmeof-java gateway does alike, but another stack serving the same namespace would not", nat);
            }
        }
        if (!s.has("serial")) {
            LOG.log(System.Logger.Level.WARNING, "{0}.serial is not set: derived from the NQN, which every nvmeof-java"
                    + " gateway does alike, but another stack serving the subsystem would not", at);
        }
    }


    /** The management API: its socket, who may call it, and what paths it may serve. */
    public static final ObjectSchema<TargetConfig.Management> MANAGEMENT = new ObjectSchema<>("management",
            "The management API (`management`): its Unix socket, who may call it besides root and the target's own"
                    + " user, and under which directories it may add file and block namespaces.",
            TargetConfig.Management.class, List.of(
            optional("socket", "socket", Codecs.PATH, null, RESTART,
                    "its Unix socket (default: none, unless the service's runtime directory gives one)"),
            optional("allowed_users", "allowedUsers", Codecs.list(Codecs.PLAIN_NAME), List.<String>of(), IN_PLACE,
                    "users who may call it (with `allowed_groups` unset and this empty: whoever the socket's mode"
                            + " lets connect)").alwaysWritten(),
            optional("allowed_groups", "allowedGroups", Codecs.list(Codecs.PLAIN_NAME), null, IN_PLACE,
                    "groups whose members (by primary group) may call it"),
            optional("allowed_paths", "allowedPaths", Codecs.list(Codecs.DIRECTORY), List.<Path>of(), IN_PLACE,
                    "directories under which it may add file and block namespaces (none: it may not)")
                    .alwaysWritten().flag("--allowed-path"),
            optional("save_config_dir", "saveConfigDir", Codecs.ABSOLUTE_PATH, null, IN_PLACE,
                    "the one directory `save_config` writes into (default: the state directory's `saved/`); outside"
                            + " every allowed path")),
            Set.of(), List.of());

    /**
     * An ANA group's state through one port: what {@code set_ana_state} and {@code nvmeof ana set}
     * take (a port's {@code ana_groups} hold these, in nvmetcli's form).
     */
    public static final ObjectSchema<TargetConfig.AnaGroup> ANA_GROUP = new ObjectSchema<>("ana_group",
            "An ANA group's state through one port (nvmet's `ports/N/ana_groups/G/ana_state`).",
            TargetConfig.AnaGroup.class, List.of(
            required("grpid", "grpid", PortCodecs.ANA_GROUP_ID, "is missing (an ANA group 1.." + Port.MAX_ANA_GROUP + ")",
                    IDENTITY, "the ANA group").flag("--group"),
            required("state", "state", PortCodecs.ANA_STATE, "is missing (" + PortCodecs.ANA_STATE.type().replace("`", "")
                    + ")", IN_PLACE, "its state through the port; hosts there get the ANA change notice")),
            Set.of(), List.of());

    /** A host's entry: what it must prove, and its rate limits. */
    public static final ObjectSchema<TargetConfig.HostConfig> HOST = new ObjectSchema<>("host",
            "A host (`hosts[]`), by its NQN: the keys it must prove itself with (nvmet's `hosts/NQN/dhchap_*`) and"
                    + " its rate limits across every namespace. A key is given inline or, better, in a private file;"
                    + " a changed key takes effect at the host's next Connect or authentication.",
            TargetConfig.HostConfig.class, List.of(
            required("nqn", "nqn", Codecs.NQN, "must be an NQN string (missing)", IDENTITY, "the host's NQN"),
            optional("dhchap_key", "dhchapKey", Secret.codec("dhchap_key", "a DH-HMAC-CHAP secret `DHHC-1:...`",
                    DhchapKey::parse), null, IN_PLACE,
                    "the key the host proves itself with (with one, it must authenticate on every queue)"),
            optional("dhchap_ctrl_key", "dhchapCtrlKey", Secret.codec("dhchap_ctrl_key",
                    "a DH-HMAC-CHAP secret `DHHC-1:...`", DhchapKey::parse), null, IN_PLACE,
                    "the key the target proves itself with when the host asks (needs `dhchap_key`)"),
            optional("dhchap_hashes", "dhchapHashes", Codecs.list(Codecs.HASH), HostSecurity.DEFAULT_HASHES,
                    IN_PLACE, "the hashes taken from it, most preferred first"),
            optional("dhchap_dhgroups", "dhchapDhgroups", Codecs.list(Codecs.DH_GROUP),
                    HostSecurity.DEFAULT_DH_GROUPS, IN_PLACE,
                    "the DH groups taken from it, most preferred first"),
            optional("tls_key", "tlsKey", Secret.codec("tls_key", "a TLS PSK `NVMeTLSkey-1:...`",
                    TlsPsk::parse), null, IN_PLACE,
                    "the PSK it opens NVMe/TCP's secure channel with"),
            optional("qos", "qos", Codecs.object(QOS), Qos.Limits.NONE, IN_PLACE,
                    "its rate limits across every namespace (see `qos`)")),
            Set.of(), List.of((h, at, node) -> {
                if (h.dhchapCtrlKey() != null && h.dhchapKey() == null) {
                    throw new ConfigException(at + ".dhchap_ctrl_key", "needs a dhchap_key too (the host authenticates first)");
                }
            }));

    /**
     * What a host's entry in the management API's state may hold, and {@code set_host_keys} takes:
     * the host's rows but its limits (a state kind of their own), with keys only by file.
     */
    public static final List<String> HOST_KEYS_BY_FILE = HOST.keys().stream().filter(k -> !k.equals("qos")
            && !(HOST.field(k) != null && HOST.field(k).codec() instanceof Codec.Spread<?>)).toList();

    private static final Codec<InetSocketAddress> METRICS_ADDRESS = Codecs.of("`tcp://ADDR:PORT` (port 9748"
            + " unless given)", (n, at, r) -> {
                if (!n.isTextual()) {
                    throw new ConfigException(at, "must be a string tcp://ADDR:PORT");
                }
                try {
                    return MetricsServer.parse(n.asText(), "address");
                } catch (IllegalArgumentException e) {
                    throw new ConfigException(at, e.getMessage());
                }
            }, a -> JsonNodeFactory.instance.textNode(
                    "tcp://" + a.getHostString() + ":" + a.getPort()));

    /** The Prometheus metrics endpoint, in its object form. */
    public static final ObjectSchema<TargetConfig.MetricsConfig> METRICS = new ObjectSchema<>("metrics",
            "Where Prometheus metrics are served (`metrics`): `\"tcp://ADDR:PORT\"` for plain HTTP, or this object for"
                    + " basic authentication and HTTPS. A reload moves the endpoint.",
            TargetConfig.MetricsConfig.class, List.of(
            required("listen", "listen", METRICS_ADDRESS, "must be a string tcp://ADDR:PORT", REOPEN,
                    "the address and port"),
            optional("user", "user", Codecs.STRING, null, REOPEN, "the basic-authentication user (needs `password`)"),
            optional("password", "password", Secret.codec("password", "a string", t -> t), null, REOPEN,
                    "the basic-authentication password"),
            optional("tls_keystore", "tlsKeystore", Codecs.PATH, null, REOPEN,
                    "a private PKCS#12 keystore: serve HTTPS with its key and certificate"),
            optional("tls_keystore_password", "tlsKeystorePassword", Secret.codec("tls_keystore_password", "a string",
                    t -> t), null, REOPEN, "the keystore's password")),
            Set.of(), List.of((m, at, node) -> {
                if ((m.user() == null) != (m.password() == null)) {
                    throw new ConfigException(at + (m.user() == null ? ".user" : ".password"),
                            "basic authentication needs both a user and a password (or password_file)");
                }
                String problem = m.tlsKeystore() == null ? null : PrivateFiles.problem(m.tlsKeystore());
                if (problem != null) {
                    throw new ConfigException(at + ".tls_keystore", problem);
                }
            }));

    /** A Ceph cluster that RBD namespaces name. */
    public static final ObjectSchema<TargetConfig.RbdClusterConfig> RBD_CLUSTER = new ObjectSchema<>("rbd_cluster",
            "A Ceph cluster (`rbd_clusters[]`) that RBD namespaces name: one connection each, shared by its"
                    + " namespaces. The management API names clusters only by these names, never by a configuration"
                    + " file or client of its caller's choosing.",
            TargetConfig.RbdClusterConfig.class, List.of(
            required("name", "name", Codecs.CEPH_NAME, "is missing (what namespaces call it)", IDENTITY,
                    "what namespaces call it"),
            optional("conf", "conf", Codecs.PATH, null, RESTART,
                    "its `ceph.conf` (monitors, keyring)").noted("librados' own search: `$CEPH_CONF`, `/etc/ceph/ceph.conf`"),
            optional("id", "id", Codecs.CEPH_NAME, "admin", RESTART, "the client id (`client.ID` in the keyring)"),
            optional("creatable_pools", "creatablePools", Codecs.list(Codecs.CEPH_NAME), List.<String>of(), IN_PLACE,
                    "pools in which `add_namespace` may create images (`\"create\": true`); none: it may not")),
            Set.of(), List.of());

    /** A member of a gateway group ({@code gateway_group.members[]}). */
    public static final ObjectSchema<TargetConfig.GatewayMember> GATEWAY_MEMBER = new ObjectSchema<>("gateway_member",
            "A gateway of the group: its name, and where hosts reach it.", TargetConfig.GatewayMember.class, List.of(
            required("name", "name", Codecs.CEPH_NAME, "is missing (the member's name)", IDENTITY,
                    "the member's name, as `self` and `preferred` give it"),
            required("address", "address", Codecs.STRING, "is missing (where hosts reach it, HOST:PORT)", IN_PLACE,
                    "where hosts reach it (shown by `get_gateway_group`; hosts find it through discovery)")),
            Set.of(), List.of());

    /** An ANA group a gateway group manages ({@code gateway_group.ana_groups[]}). */
    public static final ObjectSchema<TargetConfig.GatewayAnaGroup> GATEWAY_ANA_GROUP = new ObjectSchema<>(
            "gateway_ana_group", "An ANA group whose owner the gateway group decides, and its preferred owner.",
            TargetConfig.GatewayAnaGroup.class, List.of(
            required("grpid", "grpid", PortCodecs.ANA_GROUP_ID, "is missing (an ANA group 1.." + Port.MAX_ANA_GROUP + ")",
                    IDENTITY, "the ANA group"),
            required("preferred", "preferred", Codecs.CEPH_NAME, "is missing (the member that owns it when healthy)",
                    RESTART, "the member that owns it when healthy (failback returns it there)")),
            Set.of(), List.of());

    /** This gateway's gateway group ({@code gateway_group}). */
    public static final ObjectSchema<TargetConfig.GatewayGroupConfig> GATEWAY_GROUP = new ObjectSchema<>("gateway_group",
            "Gateways on separate machines that serve the same subsystem over RBD images and agree through Ceph who"
                    + " owns each ANA group: a lease per group (`gateway_lease_ms`), the owner optimized and the others"
                    + " non-optimized, a dead or frozen owner fenced (blocklisted) before another takes its groups.",
            TargetConfig.GatewayGroupConfig.class, List.of(
            required("name", "name", Codecs.CEPH_NAME, "is missing (the group's name, the same on every member)",
                    RESTART, "the group's name, the same on every member (it names the lease objects)"),
            required("self", "self", Codecs.CEPH_NAME, "is missing (which member this gateway is)", RESTART,
                    "which member this gateway is"),
            required("cluster", "cluster", Codecs.CEPH_NAME, "is missing (a cluster of rbd_clusters)", RESTART,
                    "the cluster (of `rbd_clusters`) whose images the group serves and where its leases live"),
            optional("pool", "pool", Codecs.CEPH_NAME, "rbd", RESTART, "the pool of the lease objects"),
            required("members", "members", Codecs.list(Codecs.object(GATEWAY_MEMBER)), "is missing (the group's"
                    + " gateways)", RESTART, "the group's gateways"),
            required("ana_groups", "anaGroups", Codecs.list(Codecs.object(GATEWAY_ANA_GROUP)), "is missing (the ANA"
                    + " groups the group manages)", RESTART, "the ANA groups the group manages (others stay manual)"),
            optional("failback", "failback", Codecs.BOOLEAN, true, RESTART,
                    "a group goes back to its preferred member once that one is healthy again"),
            optional("failback_delay_ms", "failbackDelayMs", Codecs.range(0, 3_600_000), 30_000, RESTART,
                    "how long the preferred member must be healthy before it takes its group back")),
            Set.of(), List.of());

    /** Every object, in the order the reference gives them. */
    public static final List<ObjectSchema<?>> ALL = List.of(PORT, SUBSYSTEM, NAMESPACE, QOS, HOST, MANAGEMENT, METRICS,
            RBD_CLUSTER, GATEWAY_GROUP, GATEWAY_MEMBER, GATEWAY_ANA_GROUP);
}
