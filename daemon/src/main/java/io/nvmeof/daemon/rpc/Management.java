package io.nvmeof.daemon.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.daemon.Daemon;
import io.nvmeof.daemon.NamespacePaths;
import io.nvmeof.daemon.RamBudget;
import io.nvmeof.daemon.StateStore;
import io.nvmeof.daemon.config.Codec;
import io.nvmeof.daemon.config.Codecs;
import io.nvmeof.daemon.config.ConfigApplier;
import io.nvmeof.daemon.config.ConfigException;
import io.nvmeof.daemon.config.ConfigLoader;
import io.nvmeof.daemon.config.ConfigWriter;
import io.nvmeof.daemon.config.ObjectSchema;
import io.nvmeof.daemon.config.Schemas;
import io.nvmeof.daemon.config.TargetConfig.PortConfig;
import io.nvmeof.daemon.config.TargetConfig.SubsystemConfig;
import io.nvmeof.daemon.config.TargetConfig;
import io.nvmeof.fabric.Failures;
import io.nvmeof.fabric.Sizes;
import io.nvmeof.protocol.DiscoveryInformation;
import io.nvmeof.protocol.DiscoveryLogEntry;
import io.nvmeof.target.AnaState;
import io.nvmeof.target.CentralDiscovery;
import io.nvmeof.target.Controller;
import io.nvmeof.target.GatewayGroup;
import io.nvmeof.target.IoStats;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Port;
import io.nvmeof.target.Reservations;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.RbdBackend;
import io.nvmeof.target.backend.RbdImages;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.UUID;

/**
 * The methods of the management API, in the nouns of the configuration (SPDK's JSON-RPC and
 * Ceph's gateway API serve theirs alike). Changes go through {@link Daemon#change}: one step
 * each, kept in the state store, written to the log with the caller. Keys come only from files
 * named by absolute path, and are never sent back; file and block namespaces are taken only
 * under the configured {@code management.allowed_paths}.
 */
public final class Management {
    private static final System.Logger LOG = System.getLogger(Management.class.getName());

    /** A method: its parameters, its result. */
    @FunctionalInterface
    private interface Method {
        JsonNode call(ObjectNode params, RpcServer.Caller caller) throws IOException;
    }

    private final Daemon daemon;
    private final Map<String, Method> methods = new LinkedHashMap<>();
    private final Map<String, String> help = new LinkedHashMap<>();

    public Management(Daemon daemon) {
        this.daemon = daemon;
        add("rpc_get_methods", "the methods, each with what it does", (p, c) -> {
            ObjectNode r = Rpc.JSON.createObjectNode();
            help.forEach(r::put);
            return r;
        });
        add("get_config", "the configuration in effect (the file with the API's changes over it; keys not shown)",
                (p, c) -> ConfigWriter.tree(daemon.configuration(), ConfigWriter.Secrets.HIDDEN));
        add("save_config", "{path}: writes the configuration in effect as one file (mode 0600) that --config takes,"
                + " into management.save_config_dir (the state directory's saved/ by default): path is a file name"
                + " there. Keys are never written: one from a key file as that file's path, an inline one as a marker"
                + " the loader refuses", this::saveConfig);
        add("get_subsystems", "the subsystems, with their namespaces, allowed hosts and connected controllers, and"
                + " the namespaces the API added that are not served because their paths are refused now",
                (p, c) -> subsystems());
        add("get_stats", "per namespace: commands, bytes and errors by kind; connections; buffer use", (p, c) -> stats());
        add("create_subsystem", braces(CREATE_SUBSYSTEM) + ": a subsystem, as the configuration's (its namespaces"
                + " come by add_namespace)", this::createSubsystem);
        add("delete_subsystem", "{nqn}: its controllers end; ports stop listing it", this::deleteSubsystem);
        add("add_namespace", braces(ADD_NAMESPACE) + ": a namespace, as the configuration's (nsid: the next free one"
                + " unless given; path: under management.allowed_paths; rbd: a cluster of rbd_clusters by name, and with"
                + " create: true and a size the image is made, in a pool of that cluster's creatable_pools only); it"
                + " persists", this::addNamespace);
        add("remove_namespace", "{nqn, nsid}", this::removeNamespace);
        add("set_qos", "{nqn, nsid} or {host}, and " + String.join(", ", Schemas.QOS.keys())
                + " (0: none): a namespace's or a host's rate limits, at once; it persists", this::setQos);
        add("resize_namespace", "{nqn, nsid, size, shrink}: changes a namespace's size in place under running I/O (no"
                + " size: a file or device namespace takes its storage's size now); smaller only with shrink: true;"
                + " hosts get the namespace attribute notice; it persists", this::resizeNamespace);
        add("add_host", "{nqn, host}: lets a host into a subsystem", (p, c) -> allowedHost(p, c, true));
        add("remove_host", "{nqn, host}: takes a host out of a subsystem; its controllers end", (p, c) -> allowedHost(p, c, false));
        add("set_host_keys", braces(SET_HOST_KEYS)
                + ": what the host must prove (keys from private files, by absolute path)",
                this::setHostKeys);
        add("remove_host_keys", "{host}", this::removeHostKeys);
        add("add_port", braces(ADD_PORT) + ": a port, as the configuration's (portid: one past the largest unless"
                + " given)", this::addPort);
        add("remove_port", "{portid}: stops listening there; its connections end", this::removePort);
        add("add_port_subsystem", "{portid, nqn}: serves a subsystem on a port", (p, c) -> portSubsystem(p, c, true));
        add("remove_port_subsystem", "{portid, nqn}: stops serving a subsystem on a port; its connections there end",
                (p, c) -> portSubsystem(p, c, false));
        add("set_ana_state", braces(SET_ANA_STATE) + " (state: " + Schemas.ANA_GROUP.field("state").codec().type()
                + "): an ANA group's state through a port (nvmet's ports/N/ana_groups/G/ana_state); hosts there get the ANA"
                + " change notice. The operator decides, except for the groups a gateway group manages (refused)",
                this::setAnaState);
        add("get_gateway_group", "this gateway's gateway group: its members, each managed ANA group's preferred member,"
                + " role here and lease holder, the counts of lease changes and fencings, and the latest events; null"
                + " without one", (p, c) -> gatewayGroup());
        add("get_cdc_registrations", "as a central discovery controller (setting cdc): each registration of a target,"
                + " gateway or host: who registered (registrant, the host NQN it came through), the entity (type host, ddc"
                + " or cdc; its NQN, name and version), its address, whether its discovery controller is connected, when"
                + " it was last updated, and its entries", (p, c) -> cdcRegistrations());
        add("get_ana_states", "per port: each ANA group's state there, and the namespaces in each group", (p, c) -> anaStates());
        add("get_reservations", "{nqn, nsid}: a namespace's reservation: generation, type, holder, PTPL, and each"
                + " registration (host NQN, host ID, key, whether it holds)", (p, c) -> reservations(p));
        add("clear_registrations", "{nqn, nsid, host, host_id}: removes a namespace's registrations (of host NQN host,"
                + " of host ID host_id, or all), as if each had unregistered; their hosts are told. Kept as PTPL keeps"
                + " the reservation", this::clearRegistrations);
    }

    /** What create_subsystem, add_namespace and set_qos take: the schema's fields, and what names the object. */
    private static final List<String> CREATE_SUBSYSTEM = params(List.of(), Schemas.SUBSYSTEM, "namespaces");
    private static final List<String> ADD_NAMESPACE = plus(params(List.of("nqn"), Schemas.NAMESPACE), "create");
    private static final List<String> SET_QOS = params(List.of("nqn", "nsid", "host"), Schemas.QOS);
    private static final List<String> ADD_PORT = params(List.of(), Schemas.PORT);
    private static final List<String> SET_ANA_STATE = params(List.of("portid"), Schemas.ANA_GROUP);

    /** {@code names} and {@code more}. */
    private static List<String> plus(List<String> names, String... more) {
        List<String> l = new ArrayList<>(names);
        l.addAll(List.of(more));
        return List.copyOf(l);
    }

    /** {@code first}, then the keys of {@code schema} but {@code except}. */
    private static List<String> params(List<String> first, ObjectSchema<?> schema, String... except) {
        List<String> l = new ArrayList<>(first);
        schema.keys().stream().filter(k -> !List.of(except).contains(k) && !l.contains(k)).forEach(l::add);
        return List.copyOf(l);
    }

    /** What {@code set_host_keys} takes: what a host entry of the state may hold, the host named "host". */
    private static final List<String> SET_HOST_KEYS = StateStore.HOST_FIELDS.stream()
            .map(f -> f.equals("nqn") ? "host" : f).toList();

    private static String braces(List<String> names) {
        return "{" + String.join(", ", names) + "}";
    }

    /** The methods as a Markdown table: each with what it takes and does, as rpc_get_methods gives them. */
    public static String reference() {
        StringBuilder b = new StringBuilder("| method | what it takes and does |\n|---|---|\n");
        new Management(null).help.forEach((name, what) -> b.append("| `").append(name).append("` | ")
                .append(what.replace("|", "\\|")).append(" |\n"));
        return b.toString();
    }

    private void add(String name, String what, Method m) {
        methods.put(name, m);
        help.put(name, what);
    }

    /**
     * Null if {@code caller} may manage the target, else why not. Root and the target's own
     * user always may. Unless {@code management.allowed_users} or {@code allowed_groups} are
     * set, so may whoever the socket's mode let connect (its group: the kernel counts
     * supplementary groups there); once they are set, only those users, and callers whose
     * group (the primary one, which SO_PEERCRED reports) is listed.
     */
    String authorize(RpcServer.Caller caller) {
        String self = System.getProperty("user.name");
        if (caller.user().equals("root") || caller.user().equals(self)) {
            return null; // without the daemon's lock: a change in progress never delays them
        }
        TargetConfig.Management m = daemon.configuration().management();
        if (m.allowedUsers().contains(caller.user())) {
            return null;
        }
        if (m.allowedGroups() == null && m.allowedUsers().isEmpty()) {
            return null;
        }
        List<String> groups = m.allowedGroups() != null ? m.allowedGroups() : List.of();
        if (groups.contains(caller.group())) {
            return null;
        }
        return "not authorized: " + caller + " may not manage this target (management.allowed_users: "
                + m.allowedUsers() + ", allowed_groups: " + groups + ")";
    }

    /** Answers one call. */
    ObjectNode call(String method, ObjectNode params, JsonNode id, RpcServer.Caller caller) {
        Method m = methods.get(method);
        if (m == null) {
            return Rpc.error(id, Rpc.METHOD_NOT_FOUND, "no method " + method + " (rpc_get_methods lists them)", null);
        }
        try {
            return Rpc.result(id, m.call(params, caller));
        } catch (ParamException e) {
            return Rpc.error(id, Rpc.INVALID_PARAMS, e.getMessage(), e.field);
        } catch (ConfigException e) {
            return Rpc.error(id, Rpc.INVALID_PARAMS, e.getMessage(), e.field());
        } catch (RamBudget.Exceeded e) {
            return Rpc.error(id, Rpc.INVALID_PARAMS, "params." + e.field() + ": " + e.getMessage(), "params." + e.field());
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "management API: {0} by {1} failed: {2}", method, caller,
                    Failures.describe(e));
            return Rpc.error(id, Rpc.FAILED, Failures.describe(e), null);
        }
    }

    /** A bad parameter: {@code params.NAME}. */
    static final class ParamException extends IllegalArgumentException {
        final String field;

        ParamException(String name, String problem) {
            super("params." + name + ": " + problem);
            this.field = "params." + name;
        }
    }

    private static String text(ObjectNode p, String name) {
        JsonNode n = p.get(name);
        if (n == null || !n.isTextual() || n.asText().isEmpty()) {
            throw new ParamException(name, "is missing (a string)");
        }
        return n.asText();
    }

    private static void only(ObjectNode p, String... names) {
        only(p, List.of(names));
    }

    private static void only(ObjectNode p, List<String> ok) {
        for (Iterator<String> it = p.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!ok.contains(f)) {
                throw new ParamException(f, "is not a parameter of this method (" + String.join(", ", ok) + ")");
            }
        }
    }

    private static String who(RpcServer.Caller c, String method) {
        return c + " (" + method + ")";
    }

    private static ObjectNode changes(ConfigApplier.Changes c) {
        ObjectNode r = Rpc.JSON.createObjectNode();
        ArrayNode l = r.putArray("changes");
        c.lines().forEach(l::add);
        return r;
    }

    private static SubsystemConfig subsystem(TargetConfig current, String nqn) {
        for (SubsystemConfig s : current.subsystems()) {
            if (s.nqn().equals(nqn)) {
                return s;
            }
        }
        throw new ParamException("nqn", "no subsystem " + nqn);
    }

    private JsonNode createSubsystem(ObjectNode p, RpcServer.Caller c) throws IOException {
        only(p, CREATE_SUBSYSTEM);
        String nqn = text(p, "nqn");
        return changes(daemon.change((state, current) -> {
            for (SubsystemConfig s : current.subsystems()) {
                if (s.nqn().equals(nqn)) {
                    throw new ParamException("nqn", "subsystem " + nqn + " exists");
                }
            }
            ObjectNode s = p.deepCopy();
            s.remove("allowed_hosts");
            if (!s.has("allow_any_host")) {
                s.put("allow_any_host", !p.has("allowed_hosts") || p.get("allowed_hosts").isEmpty());
            }
            kind(state, "subsystems").set(nqn, s);
            // a subsystem made again after a removal starts empty
            forget(state, "namespaces", nqn + "#");
            forget(state, "subsystem_hosts", nqn + "#");
            for (JsonNode h : p.path("allowed_hosts")) {
                kind(state, "subsystem_hosts").put(nqn + "#" + h.asText(), true);
            }
        }, who(c, "create_subsystem " + nqn)));
    }

    private JsonNode deleteSubsystem(ObjectNode p, RpcServer.Caller c) throws IOException {
        only(p, "nqn");
        String nqn = text(p, "nqn");
        return changes(daemon.change((state, current) -> {
            subsystem(current, nqn);
            kind(state, "subsystems").putNull(nqn);
            forget(state, "namespaces", nqn + "#");
            forget(state, "subsystem_hosts", nqn + "#");
        }, who(c, "delete_subsystem " + nqn)));
    }

    /** The object of one kind of entry of {@code state}. */
    private static ObjectNode kind(ObjectNode state, String kind) {
        return (ObjectNode) state.get(kind);
    }

    /** Drops the entries of {@code kind} whose keys start with {@code prefix}. */
    private static void forget(ObjectNode state, String kind, String prefix) {
        List<String> keys = new ArrayList<>();
        kind(state, kind).fieldNames().forEachRemaining(keys::add);
        keys.stream().filter(k -> k.startsWith(prefix)).forEach(kind(state, kind)::remove);
    }

    private JsonNode addNamespace(ObjectNode p, RpcServer.Caller c) throws IOException {
        only(p, ADD_NAMESPACE);
        String nqn = text(p, "nqn");
        ObjectNode ns = p.deepCopy();
        ns.remove("nqn");
        if (p.has("path")) {
            try {
                // the resolved path is what is kept and served: a link re-pointed later changes nothing
                ns.put("path", daemon.paths().resolve(text(p, "path")).toString());
            } catch (NamespacePaths.Refused e) {
                throw new ParamException("path", e.getMessage());
            }
        }
        if (p.path("create").asBoolean(false)) {
            createImage(ns);
        } else if (p.has("create") && !p.get("create").isBoolean()) {
            throw new ParamException("create", "must be true or false");
        }
        ns.remove("create");
        long ramSize = "ram".equals(p.path("backend").asText()) && p.has("size") ? size(p) : 0;
        return changes(daemon.change((state, current) -> {
            RamBudget.check(daemon.target(), ramSize, "size"); // under the daemon's lock: calls at once cannot overcommit
            SubsystemConfig sub = subsystem(current, nqn);
            if (!ns.has("nsid")) {
                long max = 0;
                for (TargetConfig.NamespaceConfig n : sub.namespaces()) {
                    max = Math.max(max, Integer.toUnsignedLong(n.nsid()));
                }
                ns.put("nsid", max + 1);
            } else {
                if (!ns.get("nsid").canConvertToLong()) {
                    throw new ParamException("nsid", "must be a number");
                }
                for (TargetConfig.NamespaceConfig n : sub.namespaces()) {
                    if (Integer.toUnsignedLong(n.nsid()) == ns.get("nsid").asLong()) {
                        throw new ParamException("nsid", "namespace " + Integer.toUnsignedString(n.nsid()) + " of "
                                + nqn + " exists");
                    }
                }
            }
            kind(state, "namespaces").set(nqn + "#" + ns.get("nsid").asLong(), ns);
        }, who(c, "add_namespace " + nqn)));
    }

    /**
     * Makes the RBD image {@code ns} names, of its {@code size} (taken out of {@code ns}: the image
     * has it from then on), as Ceph's gateway does: only in a cluster of the configuration's, by
     * its name, and in one of that cluster's creatable pools.
     */
    private void createImage(ObjectNode ns) throws IOException {
        if (!"rbd".equals(ns.path("backend").asText())) {
            throw new ParamException("create", "only an rbd namespace's image is created");
        }
        for (String f : List.of("cluster", "pool", "image", "size")) {
            if (!ns.has(f)) {
                throw new ParamException(f, "is missing: creating an image needs cluster, pool, image and size");
            }
        }
        String cluster = text(ns, "cluster");
        String pool = text(ns, "pool");
        String image = text(ns, "image");
        for (String f : List.of("cluster", "pool", "image")) {
            try {
                Codecs.CEPH_NAME.read(ns.get(f), "params." + f, Codec.Reading.NONE);
            } catch (ConfigException e) {
                throw new ParamException(f, e.getMessage().substring(e.field().length() + 2));
            }
        }
        long size = size(ns);
        TargetConfig.RbdClusterConfig c = daemon.configuration().rbdCluster(cluster);
        if (c == null) {
            throw new ParamException("cluster", cluster + " is not among the configuration's rbd_clusters");
        }
        if (!c.creatablePools().contains(pool)) {
            throw new ParamException("pool", pool + " is not among " + cluster + "'s creatable_pools "
                    + c.creatablePools() + ": images are created only there");
        }
        try {
            RbdImages.create(c.key(), pool, image, size);
        } catch (RbdImages.Exists e) {
            throw new ParamException("image", e.getMessage());
        }
        ns.remove("size");
        LOG.log(System.Logger.Level.INFO, "management API: created RBD image {0}/{1} of {2} bytes in cluster {3}", pool,
                image, size, cluster);
    }

    private JsonNode removeNamespace(ObjectNode p, RpcServer.Caller c) throws IOException {
        only(p, "nqn", "nsid");
        String nqn = text(p, "nqn");
        if (!p.path("nsid").canConvertToLong()) {
            throw new ParamException("nsid", "is missing (a number)");
        }
        long nsid = p.get("nsid").asLong();
        return changes(daemon.change((state, current) -> {
            if (subsystem(current, nqn).namespaces().stream().noneMatch(n -> Integer.toUnsignedLong(n.nsid()) == nsid)) {
                throw new ParamException("nsid", "no namespace " + nsid + " in " + nqn);
            }
            kind(state, "namespaces").putNull(nqn + "#" + nsid);
        }, who(c, "remove_namespace " + nqn + " " + nsid)));
    }

    private JsonNode setQos(ObjectNode p, RpcServer.Caller c) throws IOException {
        only(p, SET_QOS);
        ObjectNode limits = p.deepCopy();
        limits.remove(List.of("nqn", "nsid", "host"));
        try {
            ConfigLoader.qosLimits(limits, "qos"); // the configuration's checks, named for the call
        } catch (ConfigException e) {
            throw new ParamException(e.field().replaceFirst("^qos\\.", ""), e.getMessage().substring(e.field().length() + 2));
        }
        if (p.has("host") == p.has("nqn")) {
            throw new ParamException("host", "name either a host, or a subsystem (nqn) and a namespace (nsid)");
        }
        if (p.has("host")) {
            String host = text(p, "host");
            // a kind of its own: the host's keys stay the configuration's and its key files'
            return changes(daemon.change((state, current) -> kind(state, "host_qos").set(host, limits),
                    who(c, "set_qos " + host)));
        }
        String nqn = text(p, "nqn");
        if (!p.path("nsid").canConvertToLong()) {
            throw new ParamException("nsid", "is missing (a number)");
        }
        long nsid = p.get("nsid").asLong();
        return changes(daemon.change((state, current) -> {
            TargetConfig.NamespaceConfig n = subsystem(current, nqn).namespaces().stream()
                    .filter(x -> Integer.toUnsignedLong(x.nsid()) == nsid).findFirst()
                    .orElseThrow(() -> new ParamException("nsid", "no namespace " + nsid + " in " + nqn));
            ObjectNode ns = ConfigWriter.namespace(n);
            ns.set("qos", limits);
            kind(state, "namespaces").set(nqn + "#" + nsid, ns);
        }, who(c, "set_qos " + nqn + " " + nsid)));
    }

    private JsonNode resizeNamespace(ObjectNode p, RpcServer.Caller c) throws IOException {
        only(p, "nqn", "nsid", "size", "shrink");
        String nqn = text(p, "nqn");
        if (!p.path("nsid").canConvertToLong()) {
            throw new ParamException("nsid", "is missing (a number)");
        }
        long nsid = p.get("nsid").asLong();
        long size = p.has("size") ? size(p) : 0;
        boolean shrink = p.path("shrink").asBoolean(false);
        Namespace running = daemon.target().subsystem(nqn) == null ? null
                : daemon.target().subsystem(nqn).namespace((int) nsid);
        if (running != null && running.backend() instanceof RbdBackend rbd) {
            // the image is resized (as rbd resize would), then the namespace takes its new size in place
            if (size == 0) {
                throw new ParamException("size", "is missing: give the image's new size");
            }
            if (size < rbd.size() && !shrink) {
                throw new ParamException("size", size + " is smaller than its " + rbd.size() + " bytes; shrinking loses"
                        + " the data past the new end: give \"shrink\": true to shrink");
            }
            if (size % rbd.blockSize() != 0) {
                throw new ParamException("size", size + " is not a multiple of its " + rbd.blockSize() + "-byte blocks");
            }
            try {
                running.withBackend(b -> rbd.resizeImage(size)); // not while a removal closes the image
            } catch (ClosedChannelException e) {
                throw new ParamException("nsid", "namespace " + nsid + " of " + nqn + " is being removed");
            }
            return changes(daemon.change((state, current) -> {
            }, who(c, "resize_namespace " + nqn + " " + nsid)));
        }
        return changes(daemon.change((state, current) -> {
            TargetConfig.NamespaceConfig n = subsystem(current, nqn).namespaces().stream()
                    .filter(x -> Integer.toUnsignedLong(x.nsid()) == nsid).findFirst()
                    .orElseThrow(() -> new ParamException("nsid", "no namespace " + nsid + " in " + nqn));
            if (n.backend().equals("ram") && size > n.size()) {
                RamBudget.check(daemon.target(), size - n.size(), "size");
            }
            if (size == 0 && !(n.backend().equals("file") || n.backend().equals("block"))) {
                throw new ParamException("size", "is missing: a " + n.backend() + " namespace has no storage of its own to take it from");
            }
            if (size != 0 && n.backend().equals("block")) {
                throw new ParamException("size", "comes from the device for a block namespace: resize the device, then call"
                        + " this without a size");
            }
            ObjectNode ns = ConfigWriter.namespace(n);
            if (size != 0) {
                ns.put("size", size);
            } else {
                ns.remove("size");
            }
            if (shrink) {
                ns.put("allow_shrink", true);
            } else {
                ns.remove("allow_shrink");
            }
            kind(state, "namespaces").set(nqn + "#" + nsid, ns);
        }, who(c, "resize_namespace " + nqn + " " + nsid)));
    }

    private JsonNode allowedHost(ObjectNode p, RpcServer.Caller c, boolean add) throws IOException {
        only(p, "nqn", "host");
        String nqn = text(p, "nqn");
        String host = text(p, "host");
        return changes(daemon.change((state, current) -> {
            if (add == subsystem(current, nqn).allowedHosts().contains(host)) {
                throw new ParamException("host", host + (add ? " is allowed in " : " is not allowed in ") + nqn + " already");
            }
            kind(state, "subsystem_hosts").put(nqn + "#" + host, add);
        }, who(c, (add ? "add_host " : "remove_host ") + nqn + " " + host)));
    }

    private JsonNode setHostKeys(ObjectNode p, RpcServer.Caller c) throws IOException {
        // its parameters are what a host entry of the state may hold, the host named "host"
        only(p, SET_HOST_KEYS.toArray(String[]::new));
        String host = text(p, "host");
        // the host's rows check the rest as a configuration's would, with the files checked next
        ObjectNode entry = p.deepCopy();
        entry.remove("host");
        entry.put("nqn", host);
        entry.remove(StateStore.HOST_FIELDS.stream().filter(f -> f.endsWith("_file")).toList());
        try {
            Schemas.HOST.read(entry, "params", Codec.Reading.NONE);
        } catch (ConfigException e) {
            throw e.field().equals("params.nqn") ? new ParamException("host", e.getMessage()) : e;
        }
        boolean any = false;
        for (String f : StateStore.HOST_FIELDS.stream().filter(f -> f.endsWith("_file")).toList()) {
            if (p.has(f)) {
                keyFile(text(p, f), f); // read here, outside the daemon's lock: a bad file fails the call alone
                any = true;
            }
        }
        if (!any) {
            throw new ParamException("dhchap_key_file", "is missing: name a key file (dhchap_key_file or tls_key_file);"
                    + " remove_host_keys takes a host's keys away");
        }
        return changes(daemon.change((state, current) -> {
            ObjectNode h = p.deepCopy();
            h.remove("host");
            h.put("nqn", host);
            kind(state, "hosts").set(host, h);
        }, who(c, "set_host_keys " + host)));
    }

    private JsonNode removeHostKeys(ObjectNode p, RpcServer.Caller c) throws IOException {
        only(p, "host");
        String host = text(p, "host");
        return changes(daemon.change((state, current) -> {
            if (current.hosts().stream().noneMatch(h -> h.nqn().equals(host))) {
                throw new ParamException("host", "host " + host + " has no keys");
            }
            kind(state, "hosts").putNull(host);
        }, who(c, "remove_host_keys " + host)));
    }

    private JsonNode addPort(ObjectNode p, RpcServer.Caller c) throws IOException {
        only(p, ADD_PORT);
        for (String f : List.of("trtype", "traddr")) {
            text(p, f);
        }
        return changes(daemon.change((state, current) -> {
            ObjectNode port = p.deepCopy();
            if (!port.has("portid")) {
                int id = 1;
                for (PortConfig q : current.ports()) {
                    id = Math.max(id, q.portid() + 1);
                }
                port.put("portid", id);
            }
            int id = port.get("portid").asInt();
            for (PortConfig q : current.ports()) {
                if (q.portid() == id) {
                    throw new ParamException("portid", "port " + id + " exists");
                }
            }
            kind(state, "ports").set(Integer.toString(id), port);
            forget(state, "port_subsystems", id + "#");
        }, who(c, "add_port")));
    }

    private JsonNode removePort(ObjectNode p, RpcServer.Caller c) throws IOException {
        only(p, "portid");
        if (!p.path("portid").canConvertToInt()) {
            throw new ParamException("portid", "is missing (a number)");
        }
        int id = p.get("portid").asInt();
        return changes(daemon.change((state, current) -> {
            if (current.ports().stream().noneMatch(q -> q.portid() == id)) {
                throw new ParamException("portid", "no port " + id);
            }
            kind(state, "ports").putNull(Integer.toString(id));
            forget(state, "port_subsystems", id + "#");
        }, who(c, "remove_port " + id)));
    }

    private JsonNode portSubsystem(ObjectNode p, RpcServer.Caller c, boolean add) throws IOException {
        only(p, "portid", "nqn");
        if (!p.path("portid").canConvertToInt()) {
            throw new ParamException("portid", "is missing (a number)");
        }
        int id = p.get("portid").asInt();
        String nqn = text(p, "nqn");
        return changes(daemon.change((state, current) -> {
            PortConfig port = current.ports().stream().filter(q -> q.portid() == id).findFirst()
                    .orElseThrow(() -> new ParamException("portid", "no port " + id));
            subsystem(current, nqn);
            if (add == port.subsystems().contains(nqn)) {
                throw new ParamException("nqn", "port " + id + (add ? " serves " : " does not serve ") + nqn + " already");
            }
            kind(state, "port_subsystems").put(id + "#" + nqn, add);
        }, who(c, (add ? "add_port_subsystem " : "remove_port_subsystem ") + id + " " + nqn)));
    }

    private JsonNode setAnaState(ObjectNode p, RpcServer.Caller c) throws IOException {
        only(p, SET_ANA_STATE);
        if (!p.path("portid").canConvertToInt()) {
            throw new ParamException("portid", "is missing (a number)");
        }
        int id = p.get("portid").asInt();
        ObjectNode g = p.deepCopy();
        g.remove("portid");
        TargetConfig.AnaGroup ana = Schemas.ANA_GROUP.read(g, "params", Codec.Reading.NONE);
        int group = ana.grpid();
        AnaState state = ana.state();
        GatewayGroup gateways = daemon.target().gatewayGroup();
        if (gateways != null && gateways.manages(group)) {
            throw new ParamException("grpid", "ANA group " + group + " is managed by gateway group "
                    + gateways.config().name() + ": its state follows its lease (get_gateway_group shows who holds it);"
                    + " leave it out of gateway_group.ana_groups to set it by hand");
        }
        return changes(daemon.change((st, current) -> {
            if (current.ports().stream().noneMatch(q -> q.portid() == id)) {
                throw new ParamException("portid", "no port " + id);
            }
            kind(st, "port_ana").put(id + "#" + group, state.label());
        }, who(c, "set_ana_state " + id + " " + group + " " + state)));
    }

    private JsonNode cdcRegistrations() {
        ArrayNode out = Rpc.JSON.createArrayNode();
        for (CentralDiscovery.Registration r : daemon.target().centralDiscovery().registrations()) {
            ObjectNode n = out.addObject();
            n.put("registrant", r.registrant());
            n.put("entity_type", r.entityType());
            n.put("entity_id", r.entityId());
            n.put("entity_name", r.entityName());
            n.put("entity_version", r.entityVersion());
            n.put("address", r.address());
            n.put("connected", r.connected());
            n.put("updated", r.updated().toString());
            ArrayNode entries = n.putArray("entries");
            for (DiscoveryInformation.Entry e : r.entries()) {
                ObjectNode en = entries.addObject();
                en.put("trtype", e.trtype() == DiscoveryLogEntry.TRTYPE_TCP ? "tcp"
                        : e.trtype() == DiscoveryLogEntry.TRTYPE_RDMA ? "rdma" : Integer.toString(e.trtype()));
                en.put("traddr", e.traddr());
                en.put("trsvcid", e.trsvcid());
                en.put("nqn", e.nqn());
                en.put("subtype", e.subtype());
                en.put("portid", e.portId());
                if (!e.symbolicName().isEmpty()) {
                    en.put("symbolic_name", e.symbolicName());
                }
                byte[] id = e.hostId();
                if (id != null) {
                    java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(id);
                    en.put("host_id", new java.util.UUID(b.getLong(), b.getLong()).toString());
                }
            }
        }
        return out;
    }

    private JsonNode gatewayGroup() {
        GatewayGroup g = daemon.target().gatewayGroup();
        if (g == null) {
            return Rpc.JSON.nullNode();
        }
        ObjectNode out = Rpc.JSON.createObjectNode();
        out.put("name", g.config().name());
        out.put("self", g.config().self());
        out.put("lease_ms", g.config().leaseMillis());
        out.put("failback", g.config().failback());
        out.put("failback_delay_ms", g.config().failbackDelayMillis());
        ObjectNode members = out.putObject("members");
        g.config().members().entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> members.put(e.getKey(), e.getValue()));
        ArrayNode groups = out.putArray("ana_groups");
        for (GatewayGroup.GroupState st : g.states()) {
            ObjectNode gn = groups.addObject();
            gn.put("grpid", st.grpid());
            gn.put("preferred", st.preferred());
            gn.put("role", st.role().name().toLowerCase(Locale.ROOT));
            gn.put("holder", st.holder());
            gn.put("renewed_at_ms", st.renewedAt());
        }
        out.put("lease_changes", g.leaseChanges());
        out.put("fencings", g.fencings());
        out.put("times_fenced", g.timesFenced());
        ArrayNode events = out.putArray("events");
        for (GatewayGroup.Event e : g.events()) {
            ObjectNode en = events.addObject();
            en.put("at_ms", e.at());
            en.put("grpid", e.grpid());
            en.put("what", e.what());
        }
        return out;
    }

    private JsonNode anaStates() {
        Target t = daemon.target();
        ArrayNode out = Rpc.JSON.createArrayNode();
        for (Port port : t.ports()) {
            ObjectNode pn = out.addObject();
            pn.put("portid", port.id());
            ArrayNode groups = pn.putArray("ana_groups");
            SortedSet<Integer> ids = new TreeSet<>(port.anaGroups());
            for (Subsystem s : t.subsystems()) {
                if (port.serves(s.nqn())) {
                    s.namespaces().values().forEach(ns -> ids.add(ns.anaGroup()));
                }
            }
            for (int id : ids) {
                ObjectNode gn = groups.addObject();
                gn.put("grpid", id);
                gn.put("state", port.anaState(id).label());
                ArrayNode nss = gn.putArray("namespaces");
                for (Subsystem s : t.subsystems()) {
                    if (port.serves(s.nqn())) {
                        for (Namespace ns : s.namespaces().values()) {
                            if (ns.anaGroup() == id) {
                                nss.add(s.nqn() + "#" + Integer.toUnsignedLong(ns.nsid()));
                            }
                        }
                    }
                }
            }
        }
        return out;
    }

    /** A size parameter: bytes, or a string such as "1G". */
    private static long size(ObjectNode p) {
        try {
            long size = p.get("size").isIntegralNumber() ? p.get("size").asLong()
                    : Sizes.parse(p.get("size").asText(), "size");
            if (size < 0) {
                throw new IllegalArgumentException("must not be negative");
            }
            return size;
        } catch (IllegalArgumentException e) {
            throw new ParamException("size", e.getMessage());
        }
    }

    /**
     * Checks a key file a caller names as the configuration's loader will read it: private, a
     * regular file, small, holding a key. What is wrong is logged; the caller learns only that
     * the file is refused, not whether it exists or what it holds.
     */
    private static void keyFile(String path, String field) {
        if (!path.startsWith("/")) {
            throw new ParamException(field, "must be an absolute path (keys come from files, never from the call)");
        }
        String problem = null;
        try {
            ConfigLoader.checkKeyFile(Path.of(path), field.substring(0, field.length() - "_file".length()), "params");
        } catch (ConfigException e) {
            problem = e.getMessage();
        }
        if (problem != null) {
            LOG.log(System.Logger.Level.WARNING, "management API: key file {0} refused: {1}", path, problem);
            throw new ParamException(field, path + " is not a private key file the target can use (a regular file of at"
                    + " most " + ConfigLoader.MAX_KEY_FILE + " bytes, mode o-rw, owned by root or the target's user, holding"
                    + " one key; the target's log says what is wrong)");
        }
    }

    private JsonNode saveConfig(ObjectNode p, RpcServer.Caller c) throws IOException {
        only(p, "path");
        String path = text(p, "path");
        Path dir = daemon.saveDirectory(daemon.configuration());
        if (dir == null) {
            throw new ParamException("path", "save_config has nowhere to write: set management.save_config_dir (a"
                    + " directory outside every allowed path)");
        }
        Path name;
        Path given;
        try {
            name = Path.of(path).getFileName();
            given = path.startsWith("/") ? Path.of(path) : dir.resolve(path);
        } catch (InvalidPathException e) {
            throw new ParamException("path", "is not a path (" + e.getReason() + ")");
        }
        if (name == null || name.toString().equals("..") || name.toString().equals(".") || !given.getParent().equals(dir)) {
            throw new ParamException("path", "must be a file name in " + dir + " (management.save_config_dir)");
        }
        Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwx------")));
        if (!dir.toRealPath().equals(dir.toAbsolutePath().normalize())) {
            throw new ParamException("path", dir + " (management.save_config_dir) is reached through a symbolic link;"
                    + " name its real path");
        }
        Path file = dir.resolve(name);
        StateStore.writePrivately(file, ConfigWriter.write(daemon.configuration(), ConfigWriter.Secrets.SAVED));
        LOG.log(System.Logger.Level.INFO, "management API: {0} saved the configuration to {1}", c, file);
        ObjectNode r = Rpc.JSON.createObjectNode();
        r.put("path", file.toString());
        r.put("generation", daemon.generation());
        return r;
    }

    private JsonNode subsystems() {
        Target t = daemon.target();
        ArrayNode l = Rpc.JSON.createArrayNode();
        for (SubsystemConfig sc : daemon.configuration().subsystems()) {
            ObjectNode s = ConfigWriter.subsystem(sc);
            Subsystem live = t.subsystem(sc.nqn());
            ArrayNode ctrls = s.putArray("controllers");
            if (live != null) {
                for (Controller ctrl : live.controllers()) {
                    ObjectNode cn = ctrls.addObject();
                    cn.put("cntlid", ctrl.cntlid());
                    cn.put("host", ctrl.hostNqn());
                }
            }
            ArrayNode refused = s.putArray("unserved_namespaces");
            daemon.unserved().forEach((key, why) -> {
                if (key.startsWith(sc.nqn() + "#")) {
                    refused.addObject().put("nsid", Long.parseLong(key.substring(sc.nqn().length() + 1))).put("reason", why);
                }
            });
            l.add(s);
        }
        return l;
    }

    private JsonNode stats() {
        Target t = daemon.target();
        ObjectNode r = Rpc.JSON.createObjectNode();
        r.put("generation", daemon.generation());
        r.put("connections", t.connectionCount());
        r.put("connections_refused", t.connectionsRefused());
        r.put("discovery_connections", t.discoveryConnectionCount());
        r.put("connections_displaced", t.pendingDisplaced());
        r.put("keep_alive_expiries", t.keepAliveExpiries());
        r.put("buffer_limit", t.bufferBudget().limit());
        ArrayNode subs = r.putArray("subsystems");
        for (Subsystem s : t.subsystems()) {
            ObjectNode sn = subs.addObject();
            sn.put("nqn", s.nqn());
            sn.put("controllers", s.controllers().size());
            ArrayNode nss = sn.putArray("namespaces");
            for (Namespace ns : s.namespaces().values()) {
                ObjectNode nn = nss.addObject();
                nn.put("nsid", Integer.toUnsignedLong(ns.nsid()));
                for (IoStats.Op op : IoStats.Op.values()) {
                    ObjectNode o = nn.putObject(op.name().toLowerCase(Locale.ROOT));
                    o.put("commands", ns.stats().commands(op));
                    o.put("succeeded", ns.stats().succeeded(op));
                    o.put("bytes", ns.stats().bytes(op));
                }
            }
        }
        return r;
    }

    /** The live subsystem {@code params.nqn}, for the reservation methods. */
    private Subsystem reservationSubsystem(ObjectNode p) {
        String nqn = text(p, "nqn");
        Subsystem s = daemon.target().subsystem(nqn);
        if (s == null || s.isDiscovery()) {
            throw new ParamException("nqn", "no subsystem " + nqn);
        }
        return s;
    }

    /** Its live namespace {@code params.nsid}. */
    private static Namespace reservationNamespace(Subsystem s, ObjectNode p) {
        JsonNode n = p.get("nsid");
        if (n == null || !n.canConvertToLong() || n.asLong() < 1 || n.asLong() > 0xfffffffeL) {
            throw new ParamException("nsid", "is missing (a number 1..4294967294)");
        }
        Namespace ns = s.namespace((int) n.asLong());
        if (ns == null) {
            throw new ParamException("nsid", "no namespace " + n.asLong() + " in " + s.nqn());
        }
        return ns;
    }

    private JsonNode reservations(ObjectNode p) {
        only(p, "nqn", "nsid");
        Subsystem s = reservationSubsystem(p);
        Namespace ns = reservationNamespace(s, p);
        Reservations.State st = ns.reservations().state();
        ObjectNode r = Rpc.JSON.createObjectNode();
        r.put("nqn", s.nqn());
        r.put("nsid", Integer.toUnsignedLong(ns.nsid()));
        r.put("generation", Integer.toUnsignedLong(st.generation()));
        r.put("type", st.type());
        r.put("holder", st.holder() == null ? null : st.holder().toString());
        r.put("ptpl", st.ptpl());
        ArrayNode regs = r.putArray("registrants");
        st.registrants().forEach(g -> registrant(regs.addObject(), g).put("holds", st.holds(g.hostId())));
        return r;
    }

    private static ObjectNode registrant(ObjectNode n, Reservations.Registrant g) {
        // reservation keys are no secret: every host the namespace is visible to reads them in a Report
        return n.put("host_nqn", g.hostNqn()).put("host_id", g.hostId().toString()).put("key", "0x" + Long.toHexString(g.key()));
    }

    private JsonNode clearRegistrations(ObjectNode p, RpcServer.Caller c) throws IOException {
        only(p, "nqn", "nsid", "host", "host_id");
        Subsystem s = reservationSubsystem(p);
        Namespace ns = reservationNamespace(s, p);
        String host = p.has("host") ? text(p, "host") : null;
        UUID hostId = p.has("host_id") ? hostId(p) : null;
        if ((host != null || hostId != null) && ns.reservations().state().registrants().stream()
                .noneMatch(g -> (host == null || g.hostNqn().equals(host)) && (hostId == null || g.hostId().equals(hostId)))) {
            // naming a host that has none is a mistake (a typo): said, not answered with an empty list
            throw new ParamException(host != null ? "host" : "host_id", "no registration of "
                    + (host != null ? "host " + host : "") + (host != null && hostId != null ? " with " : "")
                    + (hostId != null ? "host ID " + hostId : "") + " on namespace " + Integer.toUnsignedLong(ns.nsid())
                    + " of " + s.nqn());
        }
        List<Reservations.Registrant> removed = s.clearRegistrations(ns.nsid(), host, hostId);
        LOG.log(System.Logger.Level.INFO, "management API: {0} cleared {1} registrations of namespace {2} of {3}",
                who(c, "clear_registrations"), removed.size(), Integer.toUnsignedLong(ns.nsid()), s.nqn());
        ObjectNode r = Rpc.JSON.createObjectNode();
        ArrayNode l = r.putArray("removed");
        removed.forEach(g -> registrant(l.addObject(), g));
        r.put("generation", Integer.toUnsignedLong(ns.reservations().state().generation()));
        return r;
    }

    private static UUID hostId(ObjectNode p) {
        try {
            return UUID.fromString(text(p, "host_id"));
        } catch (IllegalArgumentException e) {
            throw new ParamException("host_id", "must be a host ID (a UUID): " + p.get("host_id"));
        }
    }
}
