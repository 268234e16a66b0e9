package io.nvmeof.target;

import io.nvmeof.protocol.IdentifyController;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.protocol.Status;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An NVM subsystem: its NQN, identity strings, namespaces, the hosts allowed in, and the
 * controllers currently associated with hosts (cntlid allocated here).
 */
public final class Subsystem implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Subsystem.class.getName());
    private static final RateLimitedLog BUSY = new RateLimitedLog(LOG);
    /** Dynamic controller IDs: 1..0xffef (0xfff0.. are reserved; NVMe-oF 1.1, 4.2). */
    public static final int MAX_CNTLID = 0xffef;
    private final String nqn;
    private final String serial;
    private final String model;
    private final String firmware;
    private final NavigableMap<Integer, Namespace> namespaces = new ConcurrentSkipListMap<>(Integer::compareUnsigned);
    private final Set<String> allowedHosts = new CopyOnWriteArraySet<>();
    private volatile boolean allowAnyHost = true;
    private volatile int ieeeOui;
    private final Map<Integer, Controller> controllers = new ConcurrentHashMap<>();
    private final ErrorCounts errors = new ErrorCounts();
    private int nextCntlid = 1;
    /** The controller IDs this process gives out (nvmet's cntlid_min/cntlid_max): distinct ranges per gateway. */
    private volatile int cntlidMin = 1;
    private volatile int cntlidMax = MAX_CNTLID;
    /** Served by several target processes over shared storage (gateways): see {@link #gateways(boolean)}. */
    private volatile boolean gateways;
    private final boolean discovery;
    private volatile Runnable onChange = () -> { };
    /** Where its namespaces' reservations live beyond their objects (the target's), or null. */
    private volatile ReservationStore reservationStore;

    public Subsystem(String nqn, String serial, String model, String firmware) {
        this(nqn, serial, model, firmware, false);
    }

    Subsystem(String nqn, String serial, String model, String firmware, boolean discovery) {
        this.discovery = discovery;
        this.nqn = Nqn.requireUsable(nqn);
        this.serial = ascii("serial", serial, IdentifyController.SN_LENGTH);
        this.model = ascii("model", model, IdentifyController.MN_LENGTH);
        this.firmware = ascii("firmware", firmware, IdentifyController.FR_LENGTH);
    }

    /** Identify strings are printable ASCII of a fixed width (NVMe Base 2.0, Figure 275). */
    private static String ascii(String field, String value, int max) {
        if (value == null || value.isEmpty() || value.length() > max || !value.chars().allMatch(ch -> ch >= 0x20 && ch < 0x7f)) {
            throw new IllegalArgumentException(field + " must be 1.." + max + " printable ASCII characters: '" + value + "'");
        }
        return value;
    }

    /**
     * The controller IDs to give out, {@code min..max} within 1..65519 (nvmet's {@code cntlid_min} and
     * {@code cntlid_max}). Gateways of one subsystem need ranges that do not overlap: a Linux host
     * refuses a second path with a controller ID it already has. Each process knows only its own
     * range; the operator keeps them apart.
     */
    public void cntlidRange(int min, int max) {
        if (min < 1 || max > MAX_CNTLID || min > max) {
            throw new IllegalArgumentException("controller IDs must be a range within 1.." + MAX_CNTLID + ": " + min + ".." + max);
        }
        cntlidMin = min;
        cntlidMax = max;
    }

    public int cntlidMin() {
        return cntlidMin;
    }

    public int cntlidMax() {
        return cntlidMax;
    }

    /**
     * Marks the subsystem as served by several target processes over shared storage (gateways).
     * Fused Compare and Write is then not offered (FUSES and ACWU 0): its atomicity holds only among
     * the writers of one process.
     */
    public void gateways(boolean gateways) {
        this.gateways = gateways;
    }

    public boolean gateways() {
        return gateways;
    }

    /** The well-known discovery subsystem rather than an NVM subsystem. */
    public boolean isDiscovery() {
        return discovery;
    }

    /**
     * Whether reservations are offered: always where one target serves the subsystem; where
     * gateways do, only where they share them through the cluster (the target is in a gateway
     * group), and for namespace {@code ns} (null: any) only if its reservation is shared.
     */
    boolean offersReservations(Namespace ns) {
        if (!gateways) {
            return true;
        }
        ReservationStore store = reservationStore;
        return store != null && store.shares() && (ns == null || ns.shared() != null);
    }

    /** The target's reservations, set as the subsystem is added to it. */
    void reservationStore(ReservationStore store) {
        this.reservationStore = store;
        for (Namespace ns : namespaces.values()) {
            ns.reservations(store.of(ReservationStore.key(nqn, ns.nsid(), ns.nguid())));
        }
    }

    /** Called when the hosts allowed in change (the target bumps its discovery generation). */
    void onChange(Runnable r) {
        this.onChange = r;
    }

    public String nqn() {
        return nqn;
    }

    public String serial() {
        return serial;
    }

    public String model() {
        return model;
    }

    public String firmware() {
        return firmware;
    }

    /** Attaches a namespace; connected hosts that asked for namespace notices get one. */
    public void addNamespace(Namespace ns) {
        prepare(ns);
        if (namespaces.putIfAbsent(ns.nsid(), ns) != null) {
            throw new IllegalArgumentException("subsystem " + nqn + " already has nsid " + Integer.toUnsignedString(ns.nsid()));
        }
        attached(ns);
    }

    /**
     * Puts {@code replacement} in place of the namespace with its NSID in one step, so that the
     * NSID is never inactive in between (a host that identifies it meanwhile sees one or the
     * other, never an empty namespace); then the old one retires (commands in flight finish) and
     * hosts get one namespace notice. Adds it if there was none.
     */
    public void replaceNamespace(Namespace replacement) {
        prepare(replacement);
        Namespace old = namespaces.put(replacement.nsid(), replacement);
        if (old != null) {
            old.close();
        }
        attached(replacement);
    }

    /** What a namespace needs before hosts can reach it: its reservation (shared where it can be). */
    private void prepare(Namespace ns) {
        if (discovery) {
            throw new IllegalArgumentException("the discovery subsystem has no namespaces");
        }
        ReservationStore store = reservationStore;
        if (store != null) {
            ns.reservations(store.of(ReservationStore.key(nqn, ns.nsid(), ns.nguid())));
            store.share(this, ns);
        }
    }

    /** A namespace is in place: hosts are told, and a resize of its storage by others is watched for. */
    private void attached(Namespace ns) {
        notifyNamespaceChanged(ns);
        try {
            ns.backend().watchStorageSize(() -> storageResized(ns));
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "{0}: namespace {1}: a resize of its storage by others is found only"
                    + " at the next reload: {2}", nqn, Integer.toUnsignedString(ns.nsid()), e.getMessage());
        }
    }

    /**
     * Namespace {@code ns}'s storage may have changed size under it (resized by others): it takes
     * the storage's size in place, and its hosts are told.
     */
    private void storageResized(Namespace ns) {
        if (namespaces.get(ns.nsid()) != ns) {
            return; // removed or replaced meanwhile
        }
        try {
            ns.withBackend(b -> {
                long now = b.size();
                long want = b.storageSize();
                if (want != now && want > 0) {
                    resize(ns.nsid(), want);
                    LOG.log(System.Logger.Level.INFO, "{0}: namespace {1}: its storage was resized by others; now {2}"
                            + " bytes (was {3})", nqn, Integer.toUnsignedString(ns.nsid()), want, now);
                }
            });
        } catch (ClosedChannelException e) {
            // removed meanwhile: nothing to resize
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "{0}: namespace {1}: cannot take its storage''s new size: {2}", nqn,
                    Integer.toUnsignedString(ns.nsid()), e.getMessage());
        }
    }

    /** A namespace came or went: the controllers of the hosts that see it are told. */
    private void notifyNamespaceChanged(Namespace ns) {
        for (Controller c : controllers.values()) {
            if (ns.visibleTo(c.hostNqn())) {
                c.namespaceChanged(ns.nsid());
            }
        }
    }

    /**
     * Removes a namespace: it stops being active at once, commands in flight finish, then its
     * backend closes. Returns false if there was none.
     */
    public boolean removeNamespace(int nsid) {
        Namespace ns = namespaces.remove(nsid);
        if (ns == null) {
            return false;
        }
        ns.close();
        notifyNamespaceChanged(ns);
        return true;
    }

    /** The active namespace with this NSID, or null. */
    public Namespace namespace(int nsid) {
        return namespaces.get(nsid);
    }

    /** The namespace with this NSID if host {@code hostNqn} sees it, else null (to that host it is inactive). */
    public Namespace namespace(int nsid, String hostNqn) {
        Namespace ns = namespaces.get(nsid);
        return ns != null && ns.visibleTo(hostNqn) ? ns : null;
    }

    /**
     * Makes namespace {@code nsid} visible to {@code hosts} only (null: to every host let in), as
     * SPDK's {@code nvmf_ns_add_host} on a namespace added with {@code --no-auto-visible}. The
     * controllers of hosts that gain or lose it get a namespace attribute notice. Returns false
     * if there is no such namespace.
     */
    public boolean visibility(int nsid, Set<String> hosts) {
        Namespace ns = namespaces.get(nsid);
        if (ns == null) {
            return false;
        }
        Set<String> before = ns.visibility();
        ns.visibility(hosts);
        for (Controller c : controllers.values()) {
            boolean was = before == null || before.contains(c.hostNqn());
            if (was != ns.visibleTo(c.hostNqn())) {
                c.namespaceChanged(nsid);
            }
        }
        return true;
    }

    /**
     * Write-protects namespace {@code nsid} (writes then fail with Namespace is Write Protected and
     * Identify Namespace sets NSATTR bit 0) or lifts it; the hosts that see it get a namespace
     * attribute notice. Returns false if there is no such namespace.
     */
    public boolean readOnly(int nsid, boolean readOnly) {
        Namespace ns = namespaces.get(nsid);
        if (ns != null) {
            ns.readOnly(readOnly);
            notifyNamespaceChanged(ns);
        }
        return ns != null;
    }

    /**
     * Changes namespace {@code nsid}'s size to {@code bytes} in place, under running I/O, where its
     * backend can ({@link io.nvmeof.target.backend.Backend#resize}); the hosts that see it get a
     * namespace attribute notice and read the new size. Returns false if there is no such namespace.
     *
     * @throws UnsupportedOperationException if the backend cannot change size in place
     */
    public boolean resize(int nsid, long bytes) throws IOException {
        Namespace ns = namespaces.get(nsid);
        if (ns != null) {
            ns.resize(bytes);
            notifyNamespaceChanged(ns);
        }
        return ns != null;
    }

    public NavigableMap<Integer, Namespace> namespaces() {
        return namespaces;
    }

    /** IEEE OUI reported in Identify Controller (24 bits). */
    public int ieeeOui() {
        return ieeeOui;
    }

    public void ieeeOui(int oui) {
        if (oui < 0 || oui > 0xffffff) {
            throw new IllegalArgumentException("IEEE OUI must be 24 bits: " + oui);
        }
        this.ieeeOui = oui;
    }

    public void allowAnyHost(boolean any) {
        this.allowAnyHost = any;
        onChange.run();
        revokeDisallowed();
    }

    public void allowHost(String hostNqn) {
        allowedHosts.add(Nqn.requireUsable(hostNqn));
        allowAnyHost = false;
        onChange.run();
        revokeDisallowed();
    }

    public void disallowHost(String hostNqn) {
        allowedHosts.remove(hostNqn);
        onChange.run();
        revokeDisallowed();
    }

    /** A host no longer allowed in loses its controllers at once (their connections close). */
    private synchronized void revokeDisallowed() {
        for (Controller c : controllers.values()) {
            if (!allows(c.hostNqn())) {
                LOG.log(System.Logger.Level.INFO, "{0}: host {1} is no longer allowed; {2} disconnected", nqn,
                        c.hostNqn(), c);
                c.destroy();
            }
        }
    }

    public Set<String> allowedHosts() {
        return Set.copyOf(allowedHosts);
    }

    public boolean allowsAnyHost() {
        return allowAnyHost;
    }

    public boolean allows(String hostNqn) {
        return discovery || allowAnyHost || allowedHosts.contains(hostNqn);
    }

    /**
     * Creates a controller for a host with a fresh cntlid; null if all are in use, or if the host
     * already holds {@link Settings#MAX_CONTROLLERS_PER_HOST} admitted controllers here. Only
     * admitted controllers count: one whose host has not yet authenticated is not, so connections
     * that merely claim a host's NQN cannot crowd the host out. {@code admitNow}: the host need
     * not authenticate, the controller is admitted at once; else {@link #admit} admits it later.
     * Null too when the host is not (or no longer) allowed in: checked under the lock that
     * revocation holds, so a Connect racing a reload either sees the reload or is torn down by it.
     */
    synchronized Controller newController(Target target, String hostNqn, UUID hostId, long katoMillis,
                                          boolean admitNow) {
        if (!allows(hostNqn) || !discovery && hostIdTaken(hostId, hostNqn) != null) {
            return null;
        }
        if (admittedControllers(hostNqn) >= target.tuning().maxControllersPerHost()) {
            BUSY.log(System.Logger.Level.WARNING, "{0}: host {1} already holds {2} controllers, the most one host may",
                    nqn, hostNqn, target.tuning().maxControllersPerHost());
            return null;
        }
        int min = cntlidMin;
        int max = cntlidMax;
        if (nextCntlid < min || nextCntlid > max) {
            nextCntlid = min;
        }
        for (int i = 0; i <= max - min; i++) {
            int id = nextCntlid;
            nextCntlid = nextCntlid == max ? min : nextCntlid + 1;
            if (!controllers.containsKey(id)) {
                Controller c = new Controller(target, this, id, hostNqn, hostId, katoMillis);
                c.admitted = admitNow;
                controllers.put(id, c);
                return c;
            }
        }
        return null;
    }

    /**
     * How another host NQN holds Host Identifier {@code hostId} here ("held by host X": a controller
     * of its; "registered by host X on namespace N": a reservation registration of its), or null.
     * Reservations know a host by its Host Identifier: a second NQN presenting the same one would act
     * as that host's registrant, so its Connect is refused (as SPDK's {@code dup_host_policy}), and
     * not only while the first is connected: its registration outlives its connections (and, with
     * PTPL, the process). The operator frees such an ID with {@link #clearRegistrations}.
     */
    synchronized String hostIdTaken(UUID hostId, String hostNqn) {
        for (Controller c : controllers.values()) {
            if (c.hostId().equals(hostId) && !c.hostNqn().equals(hostNqn) && !c.destroyed()) {
                return "held by host " + c.hostNqn();
            }
        }
        for (Namespace ns : namespaces.values()) {
            Reservations.Registrant r = ns.reservations().state().registrant(hostId);
            if (r != null && !r.hostNqn().equals(hostNqn)) {
                return "registered by host " + r.hostNqn() + " on namespace " + Integer.toUnsignedString(ns.nsid());
            }
        }
        return null;
    }

    /**
     * The operator removes the reservation registrations on namespace {@code nsid} of host
     * {@code hostNqn} and Host ID {@code hostId} (either null: any; both null: all), as if each had
     * unregistered: a reservation whose holder goes is released (one of the all-registrants types
     * stays while registrants do), and the generation moves on. Stale registrations of a host that
     * is gone, which hold its Host ID against every other NQN at Connect, go this way without
     * editing files. The hosts concerned get their notices (registration preempted; reservation
     * released where it had given them access); it returns once the change is as durable as the
     * reservation's PTPL asks, so it may wait on the disk: not for an event loop.
     *
     * @return the registrations removed
     * @throws IllegalArgumentException if there is no namespace {@code nsid}
     * @throws IOException if the change was made but could not be kept
     */
    public List<Reservations.Registrant> clearRegistrations(int nsid, String hostNqn, UUID hostId) throws IOException {
        Namespace ns = namespaces.get(nsid);
        if (ns == null) {
            throw new IllegalArgumentException("no namespace " + Integer.toUnsignedString(nsid) + " in " + nqn);
        }
        Reservations res = ns.reservations();
        SharedReservations shared = ns.shared();
        Reservations.Cleared c;
        if (shared == null) {
            c = res.clearRegistrations(hostNqn, hostId);
        } else { // a step on the cluster's state: every gateway has it, and tells its hosts, when this returns
            AtomicReference<Reservations.Cleared> last = new AtomicReference<>();
            Reservations.Outcome o;
            try {
                o = shared.run(x -> {
                    Reservations.Cleared step = x.clearRegistrations(hostNqn, hostId);
                    last.set(step); // a lost race steps again: the last step is the kept one
                    return new Reservations.Outcome(Status.SUCCESS, step.notices(), Set.of(), !step.removed().isEmpty());
                }).join();
            } catch (CompletionException e) {
                throw new IOException("registrations of namespace " + Integer.toUnsignedString(nsid) + " of " + nqn
                        + " not cleared: the cluster: " + e.getCause().getMessage(), e.getCause());
            }
            if (!o.status().isSuccess()) {
                throw new IOException("registrations of namespace " + Integer.toUnsignedString(nsid) + " of " + nqn
                        + " not cleared: this gateway is not sure of the reservation now (its watch on the cluster"
                        + " broke); try another gateway of the group");
            }
            c = last.get();
        }
        if (c == null || c.removed().isEmpty()) {
            return List.of();
        }
        LOG.log(System.Logger.Level.INFO, "{0}: namespace {1}: registrations cleared: {2}", nqn,
                Integer.toUnsignedString(nsid), c.removed().stream().map(g -> g.hostNqn() + " (" + g.hostId() + ")").toList());
        for (Reservations.Notice n : c.notices()) {
            reservationNotice(n.hostId(), nsid, n.type());
        }
        try {
            res.stored().join();
        } catch (CompletionException e) {
            throw new IOException("registrations of namespace " + Integer.toUnsignedString(nsid) + " of " + nqn
                    + " cleared but not kept: " + e.getCause().getMessage(), e.getCause());
        }
        return c.removed();
    }

    /**
     * Runs {@code then} once the I/O queues of the hosts {@code hostIds} have no command on
     * {@code ns} still executing (a preempt-and-abort's wait).
     */
    void drain(Namespace ns, Set<UUID> hostIds, Runnable then) {
        Drain d = new Drain(then);
        for (Controller c : controllers.values()) {
            if (hostIds.contains(c.hostId())) {
                for (QueuePair q : c.queues()) {
                    if (q.qid() > 0) {
                        d.add();
                        q.markForDrain(ns, d);
                    }
                }
            }
        }
        d.done();
    }

    /** A reservation notice for host {@code hostId}: each of its controllers that sees namespace {@code nsid} logs it. */
    void reservationNotice(UUID hostId, int nsid, int type) {
        for (Controller c : controllers.values()) {
            if (c.hostId().equals(hostId) && !c.isDiscovery()) {
                Namespace ns = namespaces.get(nsid);
                if (ns == null || ns.visibleTo(c.hostNqn())) {
                    c.reservationNotice(nsid, type);
                }
            }
        }
    }

    private int admittedControllers(String hostNqn) {
        int held = 0;
        for (Controller c : controllers.values()) {
            if (c.admitted && c.hostNqn().equals(hostNqn)) {
                held++;
            }
        }
        return held;
    }

    /**
     * The host of {@code c} authenticated its admin queue: {@code c} counts from now on; false if
     * the host holds the most controllers one host may already (the exchange then fails).
     */
    synchronized boolean admit(Controller c) {
        if (c.admitted) {
            return true;
        }
        if (admittedControllers(c.hostNqn()) >= c.target().tuning().maxControllersPerHost()) {
            BUSY.log(System.Logger.Level.WARNING, "{0}: host {1} authenticated, but already holds {2} controllers,"
                    + " the most one host may", nqn, c.hostNqn(), c.target().tuning().maxControllersPerHost());
            return false;
        }
        c.admitted = true;
        return true;
    }

    public Controller controller(int cntlid) {
        return controllers.get(cntlid);
    }

    public Collection<Controller> controllers() {
        return controllers.values();
    }

    ErrorCounts errors() {
        return errors;
    }

    /** Failed commands of its controllers (admin and I/O), by status. */
    public Map<String, Long> errorsByStatus() {
        return errors.byStatus();
    }

    /**
     * Host {@code hostNqn}'s keys changed (or went): its controllers here end, so that it must
     * prove the new ones. Under the lock {@link #newController} takes.
     */
    synchronized void revokeHost(String hostNqn, String why) {
        for (Controller c : controllers.values()) {
            if (c.hostNqn().equals(hostNqn)) {
                LOG.log(System.Logger.Level.INFO, "{0}: {1}; {2} disconnected", nqn, why, c);
                c.destroy();
            }
        }
    }

    /** Tears down the controllers whose hosts came in through {@code port}. */
    public void disconnect(Port port) {
        for (Controller c : controllers.values()) {
            if (c.port() == port) {
                c.destroy();
            }
        }
    }

    void removeController(Controller c) {
        controllers.remove(c.cntlid(), c);
    }

    @Override
    public void close() throws IOException {
        for (Controller c : controllers.values()) {
            c.destroy();
        }
        Closeables.closeAll(namespaces.values());
    }
}
