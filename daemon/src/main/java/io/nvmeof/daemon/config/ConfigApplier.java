package io.nvmeof.daemon.config;

import io.nvmeof.target.HostSecurity;
import io.nvmeof.target.Qos;
import io.nvmeof.target.AnaState;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Port;
import io.nvmeof.target.Setting;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.daemon.config.TargetConfig.NamespaceConfig;
import io.nvmeof.daemon.config.TargetConfig.PortConfig;
import io.nvmeof.daemon.config.TargetConfig.SubsystemConfig;
import io.nvmeof.target.backend.Backend;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.function.Predicate;
import java.util.Map;
import java.util.Set;

/**
 * Makes a target look like a configuration: the first time from nothing, later (a reload on
 * SIGHUP) by difference, so that connected hosts keep their connections: namespaces and
 * allowed hosts are added and removed in place, and hosts that asked for namespace notices
 * get them. A namespace whose backend cannot be opened during a reload is reported and left
 * out; on the first apply it is an error.
 */
public final class ConfigApplier {
    private static final System.Logger LOG = System.getLogger(ConfigApplier.class.getName());
    private final Target target;
    private final Opener opener;
    private TargetConfig current = new TargetConfig(List.of(), List.of());
    /** The configuration an {@link #apply} is applying (null between applies): its RBD clusters open its namespaces. */
    private TargetConfig applying;

    /** Opens a namespace's storage. */
    @FunctionalInterface
    public interface Opener {
        Backend open(String nqn, NamespaceConfig n) throws IOException;
    }

    public ConfigApplier(Target target) {
        this(target, null);
    }

    /** {@code opener} opens each namespace's storage (the daemon's checks the paths the management API gave). */
    public ConfigApplier(Target target, Opener opener) {
        this.target = target;
        this.opener = opener != null ? opener : (nqn, n) -> (applying != null ? applying : current).spec(n).open();
    }

    /** One thing an apply did, or could not do, or leaves to the next start. */
    public record Change(Kind kind, String text) {
        public enum Kind {
            /** Done on the running target. */
            DONE,
            /** Could not be done (a backend that did not open, a port that did not listen); the rest stands. */
            FAILED,
            /** Kept as it was until the target starts again (a field whose change applies at the next start). */
            AT_NEXT_START
        }

        static Change done(String text) {
            return new Change(Kind.DONE, text);
        }

        static Change failed(String text) {
            return new Change(Kind.FAILED, text);
        }

        /** As a log line says it: a failure begins "FAILED ". */
        @Override
        public String toString() {
            return kind == Kind.FAILED ? "FAILED " + text : text;
        }
    }

    /** What the last apply changed, for logs and tests. */
    public record Changes(List<Change> all) {
        /** Each as a log line says it. */
        public List<String> lines() {
            return all.stream().map(Change::toString).toList();
        }

        /** What could not be done (a backend that did not open, a port that did not listen). */
        public List<String> failures() {
            return all.stream().filter(c -> c.kind() == Change.Kind.FAILED).map(Change::text).toList();
        }

        @Override
        public String toString() {
            return all.isEmpty() ? "no changes" : String.join("; ", lines());
        }
    }

    /**
     * The management API's rows that changed (the daemon takes them as it serves each call: who
     * may call, which paths it may add), each named with its new value, so that a reload says so.
     */
    private static void management(TargetConfig.Management was, TargetConfig.Management now, List<Change> changes) {
        if (was.equals(now)) {
            return;
        }
        com.fasterxml.jackson.databind.node.ObjectNode before = Schemas.MANAGEMENT.write(was);
        com.fasterxml.jackson.databind.node.ObjectNode after = Schemas.MANAGEMENT.write(now);
        for (Field<?> f : Schemas.MANAGEMENT.fields()) {
            com.fasterxml.jackson.databind.JsonNode b = before.get(f.key());
            com.fasterxml.jackson.databind.JsonNode a = after.get(f.key());
            if (java.util.Objects.equals(a, b)) {
                continue;
            }
            if (f.apply() == Field.Apply.RESTART) {
                changes.add(new Change(Change.Kind.AT_NEXT_START, "management." + f.key() + " changes only at a restart:"
                        + " kept " + (b == null ? "unset" : b)));
            } else {
                changes.add(Change.done("management." + f.key() + " now " + (a == null ? "unset" : a) + " (was "
                        + (b == null ? "unset" : b) + ")"));
            }
        }
    }

    public synchronized Changes apply(TargetConfig next) throws IOException {
        applying = next;
        try {
            return applying(next);
        } finally {
            applying = null;
        }
    }

    private Changes applying(TargetConfig next) throws IOException {
        boolean first = current.ports().isEmpty() && current.subsystems().isEmpty();
        List<Change> changes = new ArrayList<>();
        Map<String, SubsystemConfig> old = new HashMap<>();
        for (SubsystemConfig s : current.subsystems()) {
            old.put(s.nqn(), s);
        }
        Set<String> keep = new HashSet<>();
        for (SubsystemConfig s : next.subsystems()) {
            keep.add(s.nqn());
        }
        // Ports that go away first, so their connections end before their subsystems do.
        Map<Integer, Port> ports = new HashMap<>();
        for (Port p : target.ports()) {
            ports.put(p.id(), p);
        }
        Map<Integer, PortConfig> nextPorts = new HashMap<>();
        for (PortConfig p : next.ports()) {
            nextPorts.put(p.portid(), p);
        }
        for (Port p : ports.values()) {
            PortConfig want = nextPorts.get(p.id());
            if (want == null || !sameAddress(p, want)) {
                target.removePort(p);
                changes.add(Change.done("removed " + p));
            }
        }
        for (SubsystemConfig s : current.subsystems()) {
            if (!keep.contains(s.nqn())) {
                target.removeSubsystem(s.nqn());
                changes.add(Change.done("removed subsystem " + s.nqn()));
            }
        }
        for (SubsystemConfig s : next.subsystems()) {
            Subsystem existing = target.subsystem(s.nqn());
            if (existing == null) {
                Subsystem created = new Subsystem(s.nqn(), s.serial(), s.model(), s.firmware());
                try {
                    created.ieeeOui(s.ieeeOui());
                    Schemas.SUBSYSTEM.applyLive(s, new Schemas.RunningSubsystem(created, s));
                    for (NamespaceConfig n : s.served()) {
                        open(created, s.nqn(), n, first, changes);
                    }
                    target.addSubsystem(created);
                } catch (IOException | RuntimeException e) {
                    created.close(); // the backends opened so far
                    throw e;
                }
                changes.add(Change.done("added subsystem " + s.nqn()));
            } else {
                update(existing, old.get(s.nqn()), s, changes);
            }
        }
        for (PortConfig p : next.ports()) {
            Port existing = null;
            for (Port q : target.ports()) {
                if (q.id() == p.portid()) {
                    existing = q;
                }
            }
            if (existing == null) {
                Port port = new Port(p.portid(), p.trtype(), p.options(),
                        new InetSocketAddress(p.traddr(), p.trsvcid()), false, p.subsystems());
                try {
                    target.addPort(port);
                    changes.add(Change.done("added " + port));
                    applyLive(port, p, changes);
                } catch (IOException e) {
                    if (first) {
                        throw e;
                    }
                    LOG.log(System.Logger.Level.ERROR, e.getMessage());
                    changes.add(Change.failed(e.getMessage()));
                }
            } else {
                applyLive(existing, p, changes);
            }
        }
        hosts(next, changes);
        // a first config with every setting at its default leaves the target's options as built;
        // settings changed once and taken out later go back to the defaults
        if (!next.settings().equals(current.settings())) {
            Target.Options before = target.options();
            List<Setting<?>> kept = target.update(next.settings());
            for (Setting<?> s : before.differences(target.options())) {
                changes.add(Change.done(s.key() + " now " + s.formatObject(target.options().get(s))));
            }
            for (Setting<?> s : kept) {
                changes.add(new Change(Change.Kind.AT_NEXT_START, s.key() + " changes only at a restart: kept "
                        + s.formatObject(target.options().get(s))));
            }
        }
        if (!first) {
            management(current.management(), next.management(), changes);
        }
        current = next;
        Changes c = new Changes(changes);
        if (!first) {
            LOG.log(System.Logger.Level.INFO, "configuration reloaded: {0}", c);
        }
        return c;
    }

    /** The port's rows that apply in place, each by its setter on the running port. */
    private void applyLive(Port port, PortConfig p, List<Change> changes) {
        for (String said : Schemas.PORT.applyLive(p, new Schemas.RunningPort(target, port))) {
            changes.add(Change.done("port " + p.portid() + " " + said));
        }
    }

    private static boolean sameAddress(Port p, PortConfig c) {
        return p.address().equals(new InetSocketAddress(c.traddr(), c.trsvcid())) && p.trtype().equals(c.trtype())
                && p.options().equals(p.transport().options(c.options()));
    }

    /**
     * Hosts, row by row ({@link Schemas#HOST}): keys take effect at the host's next Connect or
     * authentication, limits at once on every controller of the host; a host no longer named
     * loses both.
     */
    private void hosts(TargetConfig next, List<Change> changes) {
        Map<String, TargetConfig.HostConfig> before = new HashMap<>();
        for (TargetConfig.HostConfig h : current.hostEntries()) {
            before.put(h.nqn(), h);
        }
        for (TargetConfig.HostConfig h : next.hostEntries()) {
            TargetConfig.HostConfig was = before.remove(h.nqn());
            if (was == null) {
                changes.add(Change.done("host " + h.nqn() + (h.dhchapKey() != null ? " must authenticate" : " configured")));
            }
            for (ObjectSchema.Change ch : was == null ? List.<ObjectSchema.Change>of() : Schemas.HOST.changes(was, h)) {
                changes.add(Change.done("host " + h.nqn() + ": " + (ch.field().key().equals("qos")
                        ? h.qos().equals(Qos.Limits.NONE) ? "QoS removed" : "QoS now " + h.qos() : ch.field().key() + (ch.after() == null ? " removed" : " changed"))));
            }
            if (!h.qos().equals(was == null ? Qos.Limits.NONE : was.qos())) {
                target.hostQos(h.nqn(), h.qos());
            }
        }
        for (TargetConfig.HostConfig gone : before.values()) {
            if (!gone.qos().equals(Qos.Limits.NONE)) {
                target.hostQos(gone.nqn(), Qos.Limits.NONE);
            }
            changes.add(Change.done("host " + gone.nqn() + ": removed (no keys" + (gone.qos().equals(Qos.Limits.NONE) ? ")"
                    : ", QoS removed)")));
        }
        target.hostSecurity(next.hosts());
    }

    private void update(Subsystem sub, SubsystemConfig was, SubsystemConfig s, List<Change> changes) {
        // the rows that apply in place, each by its setter on the running subsystem
        for (String said : Schemas.SUBSYSTEM.applyLive(s, new Schemas.RunningSubsystem(sub, s))) {
            changes.add(Change.done(s.nqn() + ": " + said));
        }
        for (ObjectSchema.Change ch : was == null ? List.<ObjectSchema.Change>of() : Schemas.SUBSYSTEM.changes(was, s)) {
            if (ch.apply() == Field.Apply.RESTART) {
                changes.add(new Change(Change.Kind.AT_NEXT_START, s.nqn() + ": " + ch.field().key() + " "
                        + ch.field().write(ch.after()) + " takes effect at the next start (hosts read "
                        + ch.field().write(ch.before()) + " until then)"));
            }
        }
        Map<Integer, NamespaceConfig> before = new HashMap<>();
        if (was != null) {
            for (NamespaceConfig n : was.namespaces()) {
                before.put(n.nsid(), n);
            }
        }
        Set<Integer> wanted = new HashSet<>();
        for (NamespaceConfig n : s.served()) { // a namespace no longer enabled is removed below, as if gone
            wanted.add(n.nsid());
            NamespaceConfig prev = before.get(n.nsid());
            if (prev != null && prev.sameStorageButSize(n) && sub.namespace(n.nsid()) != null
                    && resize(sub, s.nqn(), n, changes)) {
                prev = n; // its size is the one asked for (or the change failed, saying why): the rest as for the same storage
            }
            if (prev != null && prev.sameStorage(n) && sub.namespace(n.nsid()) != null) {
                // the rows that apply in place, each by its setter on the running namespace
                for (String said : Schemas.NAMESPACE.applyLive(n, new Schemas.RunningNamespace(target, sub, n.nsid()))) {
                    changes.add(Change.done(s.nqn() + ": namespace " + Integer.toUnsignedString(n.nsid()) + " " + said));
                }
                continue;
            }
            if (sub.namespace(n.nsid()) == null) {
                try {
                    open(sub, s.nqn(), n, false, changes);
                } catch (IOException e) {
                    // not reached: open() reports reload failures itself
                }
                continue;
            }
            replace(sub, s.nqn(), n, changes); // new storage for an existing NSID
        }
        for (Integer nsid : new ArrayList<>(sub.namespaces().keySet())) {
            if (!wanted.contains(nsid)) {
                sub.removeNamespace(nsid);
                boolean kept = s.namespaces().stream().anyMatch(n -> n.nsid() == nsid);
                changes.add(Change.done(s.nqn() + ": namespace " + Integer.toUnsignedString(nsid)
                        + (kept ? " disabled" : " removed")));
            }
        }
    }

    /**
     * Opens {@code n}'s storage anew and puts it in place of the running namespace of its NSID:
     * opened first, so a failure keeps the old one (and says so).
     */
    private void replace(Subsystem sub, String nqn, NamespaceConfig n, List<Change> changes) {
        try {
            sub.replaceNamespace(namespace(nqn, n));
            changes.add(Change.done(nqn + ": namespace " + Integer.toUnsignedString(n.nsid()) + " replaced"));
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "keeping namespace " + n.nsid() + " of " + nqn + ": " + e.getMessage());
            changes.add(Change.failed(nqn + " namespace " + Integer.toUnsignedString(n.nsid()) + ": " + e.getMessage()));
        }
    }

    /**
     * Opens anew the storage of every served namespace of {@code config} that {@code which}
     * picks and puts it in place of the running one (a gateway fenced by its cluster re-opens its
     * RBD images with a new client); hosts get the namespace notice, and the identity stays.
     */
    public synchronized List<Change> reopen(TargetConfig config, Predicate<NamespaceConfig> which) {
        List<Change> changes = new ArrayList<>();
        for (SubsystemConfig s : config.subsystems()) {
            Subsystem sub = target.subsystem(s.nqn());
            if (sub == null) {
                continue;
            }
            for (NamespaceConfig n : s.served()) {
                if (which.test(n)) {
                    replace(sub, s.nqn(), n, changes);
                }
            }
        }
        return changes;
    }

    /**
     * A namespace whose storage stays: if its size is not the one configured (or, for a file or
     * block namespace that takes its storage's own size, the storage grew outside the target: a
     * reload or any change finds it), it is resized in place under running I/O, and hosts get the
     * namespace attribute notice. Shrinking only with {@code allow_shrink}: otherwise the change
     * fails, naming the field, and the size stays. False where it cannot be done in place (the
     * namespace is then replaced, as before).
     */
    private static boolean resize(Subsystem sub, String nqn, NamespaceConfig n, List<Change> changes) {
        Namespace ns = sub.namespace(n.nsid());
        String which = nqn + ": namespace " + Integer.toUnsignedString(n.nsid());
        try {
            long now = ns.backend().size();
            long want = n.size() != 0 ? n.size() : ns.backend().storageSize();
            if (want == now) {
                return true;
            }
            if (want < now && !n.allowShrink()) {
                changes.add(Change.failed(which + ": size " + want + " is smaller than its " + now
                        + " bytes; shrinking loses the data past the new end: set \"allow_shrink\": true on it to shrink"));
                return true;
            }
            sub.resize(n.nsid(), want);
            changes.add(Change.done(which + " resized in place from " + now + " to " + want + " bytes"));
            return true;
        } catch (UnsupportedOperationException e) {
            return false;
        } catch (IOException | RuntimeException e) {
            changes.add(Change.failed(which + " resize: " + e.getMessage()));
            return true;
        }
    }

    /** Namespace {@code n} of subsystem {@code nqn}: its storage opened, and its visibility, ANA group and QoS set. */
    private Namespace namespace(String nqn, NamespaceConfig n) throws IOException {
        Namespace ns = new Namespace(nqn, n.nsid(), opener.open(nqn, n), n.readOnly(), n.uuid());
        ns.visibility(n.visibility());
        ns.anaGroup(n.anaGroup());
        ns.qos(n.qos());
        return ns;
    }

    private void open(Subsystem sub, String nqn, NamespaceConfig n, boolean strict, List<Change> changes)
            throws IOException {
        try {
            sub.addNamespace(namespace(nqn, n));
            changes.add(Change.done(nqn + ": namespace " + Integer.toUnsignedString(n.nsid()) + " added"));
        } catch (IOException | RuntimeException e) {
            String what = nqn + " namespace " + Integer.toUnsignedString(n.nsid()) + " (" + n.backend()
                    + (n.path() != null ? " " + n.path() : "") + "): " + io.nvmeof.fabric.Failures.describe(e);
            // a cluster out of reach fails its RBD namespaces, not the start: the target serves the
            // rest, and the next reload or change opens them again
            if (strict && !n.backend().equals("rbd")) {
                throw new IOException(what, e);
            }
            LOG.log(System.Logger.Level.ERROR, "cannot open " + what);
            changes.add(Change.failed(what));
        }
    }
}
