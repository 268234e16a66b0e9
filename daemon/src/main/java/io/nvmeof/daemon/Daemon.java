package io.nvmeof.daemon;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.daemon.config.ConfigApplier;
import io.nvmeof.daemon.config.ConfigException;
import io.nvmeof.daemon.config.ConfigLoader;
import io.nvmeof.daemon.config.ConfigWriter;
import io.nvmeof.daemon.config.TargetConfig;
import io.nvmeof.daemon.metrics.MetricsServer;
import io.nvmeof.fabric.Failures;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Port;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Objects;
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
    private io.nvmeof.daemon.rpc.RpcServer rpc;

    private Daemon(Source source, PrintWriter out, Target target, Systemd systemd, StateStore store) {
        this.source = source;
        this.out = out;
        this.target = target;
        this.systemd = systemd;
        this.store = store;
        this.applier = new ConfigApplier(target);
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
     * {@link #start(Source, PrintWriter)}, with the management API's socket at {@code socket}
     * (null: none) and its changes kept in {@code store} (null: in memory only) and applied over
     * the configuration at the start.
     */
    public static Daemon start(Source source, PrintWriter out, Path socket, StateStore store) throws IOException {
        TargetConfig loaded = source.load();
        ObjectNode state = store != null ? store.load() : StateStore.empty();
        TargetConfig initial = effective(loaded, state, store);
        Target target = new Target(initial.settings());
        Daemon d = new Daemon(source, out, target, Systemd.fromEnvironment(), store);
        try {
            synchronized (d) {
                if (store != null) {
                    // before any namespace: those it kept find their reservations as they attach
                    target.reservationStore().persistence(new ReservationFile(reservationFile(store)));
                }
                d.loaded = loaded;
                d.state = state;
                d.applier.apply(initial);
                d.current = initial;
                d.generation = 1;
                d.describe();
                if (store != null) {
                    out.println("  reservations that persist through power loss kept in " + reservationFile(store));
                }
                d.metricsAt(initial.metrics());
                if (socket != null) {
                    d.rpc = io.nvmeof.daemon.rpc.RpcServer.start(socket, new io.nvmeof.daemon.rpc.Management(d));
                    out.println("  management API on " + socket + (store != null ? ", its changes kept in "
                            + store.file() : ", its changes kept in memory only"));
                }
            }
        } catch (IOException | RuntimeException e) {
            d.close();
            throw e;
        }
        out.flush();
        return d;
    }

    /** Where reservations with Persist Through Power Loss are kept: beside the state file. */
    static Path reservationFile(StateStore store) {
        return store.file().resolveSibling("reservations.json");
    }

    /** The configuration {@code loaded} with the management API's {@code state} over it. */
    private static TargetConfig effective(TargetConfig loaded, ObjectNode state, StateStore store) {
        if (StateStore.isEmpty(state)) {
            return loaded;
        }
        ObjectNode merged = StateStore.merge(ConfigWriter.tree(loaded, ConfigWriter.Secrets.WRITTEN), state);
        try {
            return ConfigLoader.parse(merged, null);
        } catch (ConfigException e) {
            throw new ConfigException(e.field(), e.getMessage().substring(e.field().length() + 2)
                    + " (in the configuration with the management API's changes" + (store != null ? " from "
                    + store.file() : "") + " over it)");
        }
    }

    public Target target() {
        return target;
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
        TargetConfig config = effective(loaded, next, store);
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
        ConfigApplier.Changes c = applier.apply(next);
        current = next;
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
                c = apply(effective(next, state, store));
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
            synchronized (this) {
                if (rpc != null) {
                    rpc.close();
                    rpc = null;
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
