package io.nvmeof.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.daemon.config.ConfigApplier;
import io.nvmeof.daemon.config.ConfigException;
import io.nvmeof.daemon.config.ConfigLoader;
import io.nvmeof.daemon.config.ConfigWriter;
import io.nvmeof.daemon.config.TargetConfig.NamespaceConfig;
import io.nvmeof.daemon.config.TargetConfig.SubsystemConfig;
import io.nvmeof.daemon.config.TargetConfig;
import io.nvmeof.daemon.metrics.MetricsServer;
import io.nvmeof.fabric.Failures;
import io.nvmeof.target.GatewayGroup;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Port;
import io.nvmeof.target.Settings;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.Backend;
import io.nvmeof.target.backend.RbdCluster;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;

/**
 * The target as a service: a {@link Target} made from a configuration, kept in step with it.
 * It serves the metrics endpoint the configuration names (and moves it), tells systemd where it
 * stands (READY, RELOADING, STOPPING, the watchdog), reloads on SIGHUP and stops on SIGINT or
 * SIGTERM. {@code nvmeof target} runs one; an embedder may too.
 *
 * <p>Every change of the configuration, a reload or a management call, is one step of {@link
 * #generation()}, made under the daemon's lock: none loses another's change.
 */
public final class Daemon implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Daemon.class.getName());
    /** Where the configuration comes from; called at the start and again on each reload. */
    @FunctionalInterface
    public interface Source {
        TargetConfig load() throws IOException;
    }

    private final Source source;
    private final PrintWriter out;
    private final Target target;
    private final ConfigApplier applier;
    private final Systemd systemd;
    private final CountDownLatch stopped = new CountDownLatch(1);
    /** The metrics endpoint being served, and the one asked for (guarded by this). */
    private MetricsServer metricsServer;
    private MetricsServer.Endpoint metricsAsked;
    private TargetConfig current;
    private long generation;
    /** Where the management API's changes are kept (null: in memory only). */
    private final StateStore store;
    /** The configuration as its source gave it last, and the API's changes over it (guarded by this). */
    private TargetConfig loaded;
    private ObjectNode state = StateStore.empty();
    /** What {@link Service} started beside the target (the management API), ended first at close. */
    private AutoCloseable service;
    /** Registers this target with the central discovery controller of {@code cdc_address}, or null. */
    private CdcRegistrar registrar;
    /** The mDNS announcements of the ports that ask for them (started with the first such port). */
    private volatile MdnsAnnouncements mdns;
    /** Set when close begins: a reload that comes after starts no announcer that nothing would close. */
    private boolean closing;
    /** The portids whose configuration says mdns, as applied last (read by the announcer without the lock). */
    private volatile Set<Integer> mdnsPorts = Set.of();
    /** The configuration file's namespaces are the operator's: their paths are not checked (guarded by this). */
    private TargetConfig trusted;
    /** The configuration being applied: its allowed paths bound the API's namespaces (guarded by this). */
    private TargetConfig applying;
    /** The API's namespaces left out because their paths are refused: "NQN#NSID" to why (guarded by this). */
    private Map<String, String> unserved = Map.of();

    private Daemon(Source source, PrintWriter out, Target target, Systemd systemd, StateStore store) {
        this.source = source;
        this.out = out;
        this.target = target;
        this.systemd = systemd;
        this.store = store;
        this.applier = new ConfigApplier(target, this::openNamespace);
    }

    /**
     * Starts a target as {@code source} configures it: its settings, ports, subsystems and
     * metrics endpoint. What cannot start (a port that cannot listen, a backend that cannot
     * open) fails the start, with nothing left running.
     */
    public static Daemon start(Source source, PrintWriter out) throws IOException {
        return start(source, out, null, null);
    }

    /**
     * Something served beside the target, started once the configuration is applied and ended
     * before the target: the management API ({@code io.nvmeof.daemon.rpc.ManagementApi}), which
     * depends on the daemon and not the other way round.
     */
    @FunctionalInterface
    public interface Service {
        /** Starts serving {@code daemon}; the returned handle ends it. */
        AutoCloseable start(Daemon daemon) throws IOException;
    }

    /**
     * {@link #start(Source, PrintWriter)}, with the management API's changes kept in {@code store}
     * (null: in memory only) and applied over the configuration at the start, and {@code service}
     * (null: none) started beside the target.
     */
    public static Daemon start(Source source, PrintWriter out, StateStore store, Service service) throws IOException {
        TargetConfig loaded = source.load();
        ObjectNode state = store != null ? store.load() : StateStore.empty();
        if (store != null && !store.scrubbed().isEmpty()) {
            List<String> moved = keepKeysInFiles(store, state, loaded);
            store.save(state); // the keys it held leave the state file at once
            out.println("nvmeof target: the state file " + store.file() + " held keys or other entries the management"
                    + " API never writes for host(s) " + store.scrubbed() + "; dropped, so their keys come from the"
                    + " configuration file and its key files" + (moved.isEmpty() ? "" : "; host(s) " + moved + ", which"
                    + " the configuration file gives no key, keep theirs in key files of the state directory"));
        }
        Target target = new Target(loaded.settings());
        Daemon d = new Daemon(source, out, target, Systemd.fromEnvironment(), store);
        try {
            synchronized (d) {
                d.trusted = loaded;
                TargetConfig initial = d.effective(loaded, state); // the API changes no setting: loaded's are its
                if (store != null) {
                    // before any namespace: those it kept find their reservations as they attach
                    target.reservationStore().persistence(new ReservationFile(reservationFile(store)));
                }
                d.loaded = loaded;
                d.state = state;
                d.applying = initial;
                d.applier.apply(initial);
                d.applied(initial);
                d.joinGatewayGroup(initial);
                d.generation = 1;
                d.describe();
                if (store != null) {
                    out.println("  reservations that persist through power loss kept in " + reservationFile(store));
                }
                d.metricsAt(initial.metrics());
                String cdc = target.options().get(Settings.CDC_ADDRESS);
                if (!cdc.isEmpty()) {
                    d.registrar = new CdcRegistrar(target, cdc, out);
                }
                if (service != null) {
                    d.service = service.start(d);
                }
            }
        } catch (IOException | RuntimeException e) {
            d.close();
            throw e;
        }
        out.flush();
        return d;
    }

    /**
     * A host entry dropped from the state for holding keys inline (an older {@code set_qos} copied
     * them there) must not leave that host without authentication: where the configuration file
     * gives it no key, each key moves to a private file of the state directory (whose own files
     * are never servable), and the entry names those files, as {@code set_host_keys} would. The
     * hosts so kept.
     */
    private static List<String> keepKeysInFiles(StateStore store, ObjectNode state, TargetConfig loaded)
            throws IOException {
        List<String> kept = new ArrayList<>();
        for (String nqn : store.scrubbed()) {
            boolean fileHasKeys = loaded.hosts().stream().anyMatch(h -> h.nqn().equals(nqn)
                    && (h.hostKey() != null || h.tlsKey() != null));
            JsonNode was = store.dropped(nqn);
            if (fileHasKeys || was == null) {
                continue;
            }
            ObjectNode entry = ((ObjectNode) state.get("hosts")).putObject(nqn);
            entry.put("nqn", nqn);
            String id;
            try {
                id = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                        .digest(nqn.getBytes(StandardCharsets.UTF_8)), 0, 8);
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e); // every JDK has SHA-256
            }
            for (String field : List.of("dhchap_key", "dhchap_ctrl_key", "tls_key")) {
                if (was.path(field).isTextual()) {
                    Path file = store.file().toAbsolutePath().resolveSibling("host-" + id + "." + field);
                    StateStore.writePrivately(file, was.get(field).asText() + "\n");
                    entry.put(field + "_file", file.toString());
                } else if (was.path(field + "_file").isTextual()) {
                    entry.set(field + "_file", was.get(field + "_file"));
                }
            }
            for (String field : List.of("dhchap_hashes", "dhchap_dhgroups")) {
                if (was.has(field)) {
                    entry.set(field, was.get(field));
                }
            }
            if (entry.size() == 1) {
                ((ObjectNode) state.get("hosts")).remove(nqn); // it had no key to keep
            } else {
                kept.add(nqn);
            }
        }
        return kept;
    }

    /**
     * Joins the gateway group {@code c} names, if any: a connection to its cluster for the leases
     * (shared with the namespaces, so fencing this gateway fences its I/O too), and the group's
     * lease thread. A cluster out of reach fails the start: the gateway could serve nothing of it.
     */
    private void joinGatewayGroup(TargetConfig c) throws IOException {
        TargetConfig.GatewayGroupConfig g = c.gatewayGroup();
        if (g == null) {
            return;
        }
        Map<String, String> members = new LinkedHashMap<>();
        g.members().forEach(m -> members.put(m.name(), m.address()));
        SortedMap<Integer, String> preferred = new TreeMap<>();
        g.anaGroups().forEach(a -> preferred.put(a.grpid(), a.preferred()));
        GatewayGroup.Config config = new GatewayGroup.Config(g.name(), g.self(), members, g.pool(), preferred,
                g.failback(), g.failbackDelayMs(), c.settings().get(Settings.GATEWAY_LEASE_MS));
        RbdCluster cluster;
        try {
            cluster = RbdCluster.connect(c.rbdCluster(g.cluster()).key(), c.settings().get(Settings.RBD_CONNECT_TIMEOUT_MS),
                    c.settings().get(Settings.RBD_OP_TIMEOUT_MS));
        } catch (IOException e) {
            throw new IOException("gateway_group.cluster: " + e.getMessage(), e);
        }
        try {
            target.gatewayGroup(new GatewayGroup(config, target, cluster, fenced -> rejoin(g.cluster(), fenced)));
        } catch (IOException | RuntimeException e) {
            cluster.close();
            throw new IOException("gateway_group: " + e.getMessage(), e);
        }
        out.println("  gateway group " + g.name() + " as " + g.self() + ", managing ANA group(s) " + preferred.keySet());
    }

    /**
     * The cluster fenced this gateway's client {@code fenced}: it is handed out no more, the RBD
     * namespaces of cluster {@code name} re-open with a new client (hosts get the namespace
     * notice; the identity stays), and the group gets a reference to that client.
     */
    private RbdCluster rejoin(String name, RbdCluster fenced) throws IOException {
        fenced.retire();
        synchronized (this) {
            for (ConfigApplier.Change ch : applier.reopen(current, n -> "rbd".equals(n.backend())
                    && name.equals(n.cluster()))) {
                out.println("  " + ch.text());
            }
            out.flush();
            TargetConfig.RbdClusterConfig rc = current.rbdCluster(name);
            return RbdCluster.connect(rc.key(), current.settings().get(Settings.RBD_CONNECT_TIMEOUT_MS),
                    current.settings().get(Settings.RBD_OP_TIMEOUT_MS));
        }
    }

    /** Where reservations with Persist Through Power Loss are kept: beside the state file. */
    static Path reservationFile(StateStore store) {
        return store.file().resolveSibling("reservations.json");
    }

    /**
     * The configuration {@code loaded} with the management API's {@code state} over it, less the
     * API's file and block namespaces whose paths are refused now (a link re-pointed since, a
     * state file edited by hand): those are logged and kept in {@link #unserved()}.
     */
    private TargetConfig effective(TargetConfig loaded, ObjectNode state) {
        TargetConfig merged;
        if (StateStore.isEmpty(state)) {
            merged = loaded;
        } else {
            ObjectNode tree = StateStore.merge(ConfigWriter.tree(loaded, ConfigWriter.Secrets.WRITTEN), state);
            try {
                merged = ConfigLoader.parse(tree, null);
            } catch (ConfigException e) {
                throw new ConfigException(e.field(), e.getMessage().substring(e.field().length() + 2)
                        + " (in the configuration with the management API's changes" + (store != null ? " from "
                        + store.file() : "") + " over it)");
            }
        }
        NamespacePaths paths = paths(merged);
        Map<String, String> refused = new TreeMap<>();
        List<SubsystemConfig> subsystems = new ArrayList<>();
        for (SubsystemConfig s : merged.subsystems()) {
            List<NamespaceConfig> kept = new ArrayList<>();
            for (NamespaceConfig n : s.namespaces()) {
                if (n.path() != null && !fromFile(loaded, s.nqn(), n)) {
                    try {
                        paths.resolve(n.path());
                    } catch (NamespacePaths.Refused e) {
                        String key = s.nqn() + "#" + Integer.toUnsignedString(n.nsid());
                        refused.put(key, e.getMessage());
                        LOG.log(System.Logger.Level.ERROR, "not serving namespace {0} that the management API added: {1}",
                                key, e.getMessage());
                        continue;
                    }
                }
                kept.add(n);
            }
            subsystems.add(kept.size() == s.namespaces().size() ? s : new SubsystemConfig(s.nqn(), s.serial(), s.model(),
                    s.firmware(), s.ieeeOui(), s.allowAnyHost(), s.allowedHosts(), kept, s.cntlidMin(), s.cntlidMax(),
                    s.gateways()));
        }
        unserved = Collections.unmodifiableMap(refused); // in NQN#NSID order
        return new TargetConfig(merged.ports(), subsystems, merged.settings(), merged.hosts(), merged.metrics(),
                merged.management(), merged.hostQos(), merged.keyFiles(), merged.rbdClusters(), merged.gatewayGroup());
    }

    /** Whether the configuration file {@code loaded} has namespace {@code n} of {@code nqn}, with its path. */
    private static boolean fromFile(TargetConfig loaded, String nqn, NamespaceConfig n) {
        for (SubsystemConfig s : loaded.subsystems()) {
            if (s.nqn().equals(nqn)) {
                for (NamespaceConfig f : s.namespaces()) {
                    if (f.nsid() == n.nsid() && Objects.equals(f.path(), n.path())) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** The state directory (null: none): never served. */
    private Path stateDirectory() {
        return store == null ? null : store.file().toAbsolutePath().getParent();
    }

    /** Where {@code save_config} writes under {@code c} (null: nowhere): never served. */
    public Path saveDirectory(TargetConfig c) {
        Path d = c.management().saveConfigDir();
        return d != null ? d : stateDirectory() == null ? null : stateDirectory().resolve("saved");
    }

    /** The paths the API may serve under {@code c}; a save directory under an allowed path is refused. */
    private NamespacePaths paths(TargetConfig c) {
        Path save = saveDirectory(c);
        if (save != null && stateDirectory() != null
                && NamespacePaths.real(save).equals(NamespacePaths.real(stateDirectory()))) {
            throw new ConfigException("management.save_config_dir", save + " is the state directory: a saved"
                    + " configuration would replace state.json; name a directory of its own");
        }
        if (c.management().saveConfigDir() != null) {
            for (Path a : c.management().allowedPaths()) {
                if (NamespacePaths.real(save).startsWith(NamespacePaths.real(a))) {
                    throw new ConfigException("management.save_config_dir", save + " lies under management.allowed_paths "
                            + a + ": a saved configuration must never be servable");
                }
            }
        }
        return new NamespacePaths(c.management().allowedPaths(), stateDirectory(), save);
    }

    /** The paths the API may serve now. */
    public synchronized NamespacePaths paths() {
        return paths(current);
    }

    /** The API's namespaces not served because their paths are refused: "NQN#NSID" to why. */
    public synchronized Map<String, String> unserved() {
        return unserved;
    }

    /**
     * Opens a namespace's storage: the configuration file's as they are; the API's file and block
     * namespaces through {@link NamespacePaths#pin}, checked again at this very open.
     */
    private Backend openNamespace(String nqn, NamespaceConfig n) throws IOException {
        if (n.path() == null || trusted == null || fromFile(trusted, nqn, n)) {
            return (applying != null ? applying : current).spec(n).open();
        }
        return n.spec().open(paths(applying != null ? applying : current).pin(n.path(),
                n.backend().equals("file") && n.size() > 0));
    }

    public Target target() {
        return target;
    }

    /** {@code c} is in effect: the mDNS announcements follow its ports. */
    private void applied(TargetConfig c) {
        current = c;
        Set<Integer> ids = new java.util.TreeSet<>();
        for (TargetConfig.PortConfig p : c.ports()) {
            if (p.mdns()) {
                ids.add(p.portid());
            }
        }
        mdnsPorts = Set.copyOf(ids);
        if (!ids.isEmpty() && mdns == null && !closing) {
            mdns = new MdnsAnnouncements(target, () -> mdnsPorts, out);
        }
    }

    /** The configuration in effect: the last one applied, with the settings the target runs with. */
    public synchronized TargetConfig configuration() {
        return current.withSettings(target.options());
    }

    /** Changes made so far: 1 after the start, one more for each reload or change applied. */
    public synchronized long generation() {
        return generation;
    }

    /** The management API's changes over the configuration file, as kept. */
    public synchronized ObjectNode state() {
        return state.deepCopy();
    }

    /** A change of the management API's state, made knowing the configuration in effect. */
    @FunctionalInterface
    public interface Edit {
        /** Changes {@code state} (a copy) in place; throws to refuse. */
        void edit(ObjectNode state, TargetConfig current) throws IOException;
    }

    /**
     * Makes a change of the management API as one step under the daemon's lock (so a reload
     * or another call never loses it): {@code edit} changes a copy of the state, the target is
     * made to match the configuration with it, then it is kept; if it cannot be kept, the step
     * is undone. {@code who} names the caller in the log.
     */
    public synchronized ConfigApplier.Changes change(Edit edit, String who) throws IOException {
        ObjectNode next = state.deepCopy();
        edit.edit(next, configuration());
        Map<String, String> unservedBefore = unserved;
        TargetConfig config = effective(loaded, next);
        TargetConfig before = current;
        ConfigApplier.Changes c = apply(config);
        try {
            if (!c.failures().isEmpty()) {
                throw new IOException(String.join("; ", c.failures()));
            }
            if (store != null) {
                store.save(next);
            }
        } catch (IOException e) {
            try {
                apply(before);
            } catch (IOException | RuntimeException undo) {
                e.addSuppressed(undo);
            }
            unserved = unservedBefore;
            throw new IOException(c.failures().isEmpty() ? "the change was undone: cannot keep it in " + store.file()
                    + ": " + Failures.describe(e) : "the change was undone: " + Failures.describe(e), e);
        }
        state = next;
        LOG.log(System.Logger.Level.INFO, "management API: {0} changed the configuration (generation {1}): {2}", who,
                generation, c);
        return c;
    }

    /**
     * Applies {@code next} (a reload, or a change through the management API) as one step:
     * what differs from the configuration in effect is changed; a failure leaves it as it was
     * as far as the target allows (see {@link ConfigApplier}). Returns what changed.
     */
    private synchronized ConfigApplier.Changes apply(TargetConfig next) throws IOException {
        applying = next;
        ConfigApplier.Changes c;
        try {
            c = applier.apply(next);
        } finally {
            applying = null;
        }
        applied(next);
        generation++;
        try {
            metricsAt(next.metrics());
        } catch (IOException e) {
            out.println("nvmeof target kept its metrics endpoint: " + Failures.describe(e));
            out.flush();
        }
        return c;
    }

    /** SIGHUP: reads the configuration again and applies it; on an error the running one stays. */
    public void reload() {
        systemd.reloading();
        try {
            ConfigApplier.Changes c;
            synchronized (this) {
                TargetConfig next = source.load();
                TargetConfig trustedBefore = trusted;
                Map<String, String> unservedBefore = unserved;
                trusted = next;
                try {
                    c = apply(effective(next, state));
                } catch (IOException | RuntimeException e) {
                    trusted = trustedBefore;
                    unserved = unservedBefore;
                    throw e;
                }
                loaded = next;
            }
            out.println("nvmeof target reloaded: " + c);
        } catch (Exception e) {
            out.println("nvmeof target kept its configuration; reloading failed: " + Failures.describe(e));
        }
        out.flush();
        systemd.ready(status());
    }

    /**
     * Serves until SIGINT or SIGTERM (or {@link #stop()}): SIGHUP reloads if {@code reloadable};
     * systemd is told READY once every port listens, and its watchdog is fed by the event loops.
     */
    public void serve(boolean reloadable) throws InterruptedException {
        if (reloadable) {
            Signals.onReload(this::reload);
        }
        systemd.startWatchdog(target::eventLoops);
        systemd.ready(status());
        // SIGINT and SIGTERM end the wait; the target then closes in order and the process
        // exits 0, which is what systemd expects of a clean stop.
        Signals.onTermination(this::stop);
        stopped.await();
        systemd.stopping();
        out.println("nvmeof target stopping");
        out.flush();
    }

    /** Ends {@link #serve}. */
    public void stop() {
        stopped.countDown();
    }

    private void describe() {
        for (Port p : target.ports()) {
            out.println("nvmeof target listening on " + p.trtype() + "://" + p.bound().getHostString() + ":"
                    + p.bound().getPort() + " port " + p.id() + (p.subsystems().isEmpty() ? " (discovery)"
                    : " subsystems " + String.join(",", p.subsystems())) + (p.options().isEmpty() ? "" : " " + p.options()));
        }
        for (Subsystem s : target.subsystems()) {
            for (Namespace ns : s.namespaces().values()) {
                out.println("  " + s.nqn() + " namespace " + Integer.toUnsignedString(ns.nsid()) + ": "
                        + ns.backend().describe() + ", " + ns.backend().size() + " bytes, " + ns.blockSize()
                        + "-byte blocks" + (ns.readOnly() ? ", read-only" : ""));
            }
        }
        out.println("  command data buffers: at most " + target.bufferBudget().limit() / (1 << 20) + " MiB in use");
    }

    /**
     * Serves metrics at {@code address} (null: nowhere), moving the endpoint if it was elsewhere:
     * the new one first, so that a failure leaves the old one serving.
     */
    private synchronized void metricsAt(MetricsServer.Endpoint address) throws IOException {
        if (Objects.equals(address, metricsAsked) && (address == null) == (metricsServer == null)) {
            return;
        }
        MetricsServer next = null;
        if (address != null) {
            try {
                next = MetricsServer.start(target, address);
            } catch (IOException e) {
                throw new IOException("metrics endpoint " + address + ": " + Failures.describe(e), e);
            }
        }
        if (metricsServer != null) {
            metricsServer.close();
        }
        metricsServer = next;
        metricsAsked = address;
        if (next != null) {
            out.println("  metrics on " + address.scheme() + "://" + next.address().getAddress().getHostAddress() + ":"
                    + next.address().getPort() + "/metrics" + (address.user() != null ? " (basic authentication)" : ""));
            if (address.user() != null && address.keystore() == null && !next.address().getAddress().isLoopbackAddress()) {
                String warning = "metrics: basic authentication over plain HTTP on " + next.address().getAddress()
                        .getHostAddress() + ", not a loopback address: the password crosses the network in the clear;"
                        + " set metrics.tls_keystore for HTTPS";
                out.println("  WARNING " + warning);
                LOG.log(System.Logger.Level.WARNING, warning);
            }
        }
    }

    /** The one-line status systemctl shows. */
    private String status() {
        int namespaces = 0;
        for (Subsystem s : target.subsystems()) {
            namespaces += s.namespaces().size();
        }
        return "serving " + target.subsystems().size() + " subsystem(s), " + namespaces + " namespace(s) on "
                + target.ports().size() + " port(s)";
    }

    @Override
    public void close() throws IOException {
        try {
            MdnsAnnouncements m;
            synchronized (this) {
                closing = true;
                m = mdns;
                mdns = null;
            }
            if (m != null) {
                m.close(); // its thread reads no lock of ours; withdrawn while the ports still listen
            }
            synchronized (this) {
                if (registrar != null) {
                    registrar.close(); // withdrawn while the ports still serve
                    registrar = null;
                }
                if (service != null) {
                    AutoCloseable s = service;
                    service = null;
                    try {
                        s.close();
                    } catch (IOException | RuntimeException e) {
                        throw e;
                    } catch (Exception e) {
                        throw new IOException(e);
                    }
                }
                if (metricsServer != null) {
                    metricsServer.close();
                    metricsServer = null;
                }
            }
        } finally {
            try {
                target.close();
            } finally {
                systemd.close();
            }
        }
    }
}
