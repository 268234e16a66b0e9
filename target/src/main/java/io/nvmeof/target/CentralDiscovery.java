package io.nvmeof.target;

import io.nvmeof.protocol.DiscoveryInformation;
import io.nvmeof.protocol.DiscoveryLogEntry;
import io.nvmeof.protocol.Registers;
import io.nvmeof.protocol.Status;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * What a central discovery controller keeps (TP8010): the registrations that targets, gateways
 * and hosts made with Discovery Information Management, keyed by who registered (the host NQN of
 * the discovery controller it came through) and the entity it registered (EID), so that no
 * registrant can change another's: as far as host NQNs are proven, which is where a registrant
 * has a DH-HMAC-CHAP key here (it must then authenticate its discovery connection); a keyless one
 * is whoever says its NQN, as a keyless host is to any subsystem that lets it in. The entries of
 * targets and discovery controllers are in the discovery log of every host the discovery
 * subsystem admits (there is no zoning); a host's registration is kept and shown (the management
 * API) but lists no subsystem.
 *
 * <p>A registration lives while the discovery controller it last came through lives. When that
 * controller goes: if its host shut it down cleanly (CC.SHN, as {@code nvme disconnect} and a
 * one-shot {@code nvme dim} do), the registration stays {@code cdc_registration_ttl} after its
 * last update; if the connection was lost (a killed or cut-off registrant), it stays for that
 * controller's keep-alive timeout (at most the ttl), in which the registrant may come back and
 * update it. A sweep each second removes what expired and tells the hosts (the discovery log
 * change notice).
 *
 * <p>Bounded: {@code max_cdc_registrations} entries in all, {@code max_cdc_registrations_per_host}
 * per registrant (a registration of no entries, as a host's, counts as one), past which a
 * registration is refused with Insufficient Discovery Resources;
 * malformed data is Invalid Discovery Information; a registrant that {@code cdc_registrants} does
 * not list is refused with Access Denied. Refusals are logged at a limited rate.
 */
public final class CentralDiscovery {
    private static final System.Logger LOG = System.getLogger(Target.class.getName());
    private static final long SWEEP_MILLIS = 1000;

    /**
     * One registration as the management API shows it.
     *
     * @param registrant the host NQN of the discovery controller it came through
     * @param entityType host, ddc or cdc (ETYPE)
     * @param address    the registrant's transport address, as this discovery controller saw it
     * @param connected  whether the discovery controller it came through is still there
     * @param updated    when it was last registered or updated
     */
    public record Registration(String registrant, String entityType, String entityId, String entityName,
                               String entityVersion, String address, List<DiscoveryInformation.Entry> entries,
                               boolean connected, Instant updated) {
        public Registration {
            entries = List.copyOf(entries);
        }
    }

    private record Key(String registrant, String entityId) {
    }

    private static final class Held {
        final Key key;
        final DiscoveryInformation info;
        final List<DiscoveryInformation.Entry> entries;
        final String address;
        final Controller by;
        final long updatedNanos;
        final Instant updated;
        long goneNanos;
        boolean goneCleanly;

        Held(Key key, DiscoveryInformation info, List<DiscoveryInformation.Entry> entries, String address, Controller by) {
            this.key = key;
            this.info = info;
            this.entries = entries;
            this.address = address;
            this.by = by;
            this.updatedNanos = System.nanoTime();
            this.updated = Instant.now();
        }

        boolean listed() {
            return info.entityType() != DiscoveryInformation.ETYPE_HOST;
        }
    }

    private final Target target;
    private final RateLimitedLog refusals = new RateLimitedLog(LOG);
    private final Map<Key, Held> table = new LinkedHashMap<>();
    /** What the discovery log lists, rebuilt on each change: read by event loops without the lock. */
    private volatile List<DiscoveryInformation.Entry> served = List.of();
    private ScheduledFuture<?> sweeper;

    CentralDiscovery(Target target) {
        this.target = target;
    }

    private static String etype(int t) {
        return switch (t) {
            case DiscoveryInformation.ETYPE_HOST -> "host";
            case DiscoveryInformation.ETYPE_DDC -> "ddc";
            default -> "cdc";
        };
    }

    /** The registrations now, oldest first. */
    public synchronized List<Registration> registrations() {
        List<Registration> out = new ArrayList<>(table.size());
        for (Held h : table.values()) {
            out.add(new Registration(h.key.registrant, etype(h.info.entityType()), h.info.entityId(), h.info.entityName(),
                    h.info.entityVersion(), h.address, h.entries, h.goneNanos == 0 && !h.by.destroyed(), h.updated));
        }
        return out;
    }

    /**
     * What this target registers with a central discovery controller (the daemon's
     * {@code cdc_address}): an entry per subsystem per port that serves subsystems.
     */
    public List<DiscoveryInformation.Entry> ownEntries() {
        return DiscoveryLog.registration(target);
    }

    /** The registered entries the discovery log lists after this target's own. */
    List<DiscoveryInformation.Entry> served() {
        return served;
    }

    /**
     * Runs a Discovery Information Management command of {@code c}'s host: {@code tas} with
     * the command's {@code info}; returns its status.
     */
    Status apply(int tas, DiscoveryInformation info, Controller c, InetSocketAddress peer) {
        Target.Options o = target.options();
        String registrant = c.hostNqn();
        Status refused = admit(registrant);
        if (refused != null) {
            return refused;
        }
        if (info.entityType() == DiscoveryInformation.ETYPE_HOST && !info.entityId().equals(registrant)) {
            refusals.log(System.Logger.Level.WARNING, "central discovery: host {0} registered as another host, {1}",
                    registrant, info.entityId());
            return Status.INVALID_DISCOVERY_INFO;
        }
        Key key = new Key(registrant, info.entityId());
        boolean changed;
        synchronized (this) {
            if (tas == DiscoveryInformation.TAS_DEREGISTER) {
                changed = table.remove(key) != null;
                if (changed) {
                    LOG.log(System.Logger.Level.INFO, "central discovery: {0} ({1}) deregistered", info.entityId(), registrant);
                } else {
                    refusals.log(System.Logger.Level.INFO, "central discovery: {0} ({1}) deregistered, and was not"
                            + " registered", info.entityId(), registrant);
                }
            } else {
                if (tas == DiscoveryInformation.TAS_UPDATE && !table.containsKey(key)) {
                    refusals.log(System.Logger.Level.WARNING, "central discovery: {0} ({1}) updated a registration it"
                            + " does not have", info.entityId(), registrant);
                    return Status.INVALID_DISCOVERY_INFO;
                }
                List<DiscoveryInformation.Entry> entries = new ArrayList<>(info.entries().size());
                for (DiscoveryInformation.Entry e : info.entries()) {
                    Status bad = check(e, info.entityType());
                    if (bad != null) {
                        refusals.log(System.Logger.Level.WARNING, "central discovery: {0} ({1}) registered an entry"
                                + " that cannot be served: {2}", info.entityId(), registrant, e);
                        return bad;
                    }
                    // an entry that names no address is at the address the registrant came from
                    entries.add(e.traddr().isEmpty() && peer != null ? e.withTraddr(peer.getAddress().getHostAddress(),
                            peer.getAddress() instanceof Inet6Address ? DiscoveryLogEntry.ADRFAM_IPV6
                                    : DiscoveryLogEntry.ADRFAM_IPV4) : e);
                }
                int mine = 0;
                int all = 0;
                for (Held h : table.values()) {
                    if (!h.key.equals(key)) {
                        all += weight(h.entries);
                        if (h.key.registrant.equals(registrant)) {
                            mine += weight(h.entries);
                        }
                    }
                }
                int perHost = o.get(Settings.MAX_CDC_REGISTRATIONS_PER_HOST);
                int max = o.get(Settings.MAX_CDC_REGISTRATIONS);
                if (mine + weight(entries) > perHost || all + weight(entries) > max) {
                    refusals.log(System.Logger.Level.WARNING, "central discovery: {0} ({1}) refused: {2} entries would pass"
                                    + " max_cdc_registrations_per_host ({3}, it has {4}) or max_cdc_registrations ({5},"
                                    + " {6} held)", info.entityId(), registrant, entries.size(), perHost, mine, max, all);
                    return Status.INSUFFICIENT_DISCOVERY_RESOURCES;
                }
                Held old = table.put(key, new Held(key, info, List.copyOf(entries), peer == null ? ""
                        : peer.getAddress().getHostAddress(), c));
                changed = old == null || !old.entries.equals(entries) || old.listed() != (info.entityType()
                        != DiscoveryInformation.ETYPE_HOST);
                // a periodic update that changes nothing (a registrar's refresh) is not news
                LOG.log(changed ? System.Logger.Level.INFO : System.Logger.Level.DEBUG,
                        "central discovery: {0} ({1}, {2}) {3} {4} entr{5}", info.entityId(), registrant,
                        etype(info.entityType()), old == null ? "registered" : "updated", entries.size(),
                        entries.size() == 1 ? "y" : "ies");
                if (sweeper == null) {
                    sweeper = c.adminQueue().transport().eventLoop().scheduleWithFixedDelay(this::sweepLogged, SWEEP_MILLIS,
                            SWEEP_MILLIS, TimeUnit.MILLISECONDS);
                }
            }
            if (changed) {
                rebuild();
            }
        }
        if (changed) {
            target.discoveryNotices().changed();
        }
        return Status.SUCCESS;
    }

    /**
     * Access Denied (logged at a limited rate) for a host that {@code cdc_registrants} does not let
     * register; null for one it does. Checked before the command's data is taken, and again when
     * it runs (a reload may have come between).
     */
    Status admit(String registrant) {
        String allowed = target.options().get(Settings.CDC_REGISTRANTS);
        if (allowed.equals("any") || List.of(allowed.split("\\s*,\\s*")).contains(registrant)) {
            return null;
        }
        refusals.log(System.Logger.Level.WARNING, "central discovery: host {0} may not register (cdc_registrants)", registrant);
        return Status.ACCESS_DENIED;
    }

    /** What a registration counts against the caps: its entries, and at least one (a host's, an empty one). */
    private static int weight(List<DiscoveryInformation.Entry> entries) {
        return Math.max(1, entries.size());
    }

    /** An entry the log can serve: a known transport and subsystem type, an NQN; null if so. */
    private static Status check(DiscoveryInformation.Entry e, int etype) {
        if (etype == DiscoveryInformation.ETYPE_HOST) {
            return null;
        }
        boolean transport = e.trtype() == DiscoveryLogEntry.TRTYPE_TCP || e.trtype() == DiscoveryLogEntry.TRTYPE_RDMA;
        boolean family = e.adrfam() == DiscoveryLogEntry.ADRFAM_IPV4 || e.adrfam() == DiscoveryLogEntry.ADRFAM_IPV6;
        boolean subtype = e.subtype() >= DiscoveryLogEntry.SUBTYPE_REFERRAL && e.subtype() <= DiscoveryLogEntry.SUBTYPE_CURRENT_DISCOVERY;
        return transport && family && subtype && e.nqn().startsWith("nqn.") && !e.trsvcid().isEmpty() ? null
                : Status.INVALID_DISCOVERY_INFO;
    }

    private void rebuild() {
        List<DiscoveryInformation.Entry> s = new ArrayList<>();
        for (Held h : table.values()) {
            if (h.listed()) {
                s.addAll(h.entries);
            }
        }
        served = List.copyOf(s);
    }

    /** A task that throws is not run again: the sweep says what failed and goes on. */
    private void sweepLogged() {
        try {
            sweep();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "central discovery: the expiry sweep failed", e);
        }
    }

    /** Removes what expired; tells the hosts when the log changed. */
    void sweep() {
        long now = System.nanoTime();
        long ttl = TimeUnit.SECONDS.toNanos(target.options().get(Settings.CDC_REGISTRATION_TTL));
        boolean changed = false;
        synchronized (this) {
            for (var it = table.values().iterator(); it.hasNext();) {
                Held h = it.next();
                if (h.goneNanos == 0) {
                    if (!h.by.destroyed()) {
                        continue;
                    }
                    h.goneNanos = now;
                    h.goneCleanly = Registers.ccShn(h.by.cc()) != 0 || (h.by.cc() & 1) == 0;
                }
                // the registrant's keep-alive timeout, which it chose: never longer than the ttl
                long grace = Math.min(TimeUnit.MILLISECONDS.toNanos(Math.max(h.by.katoMillis(), SWEEP_MILLIS)), ttl);
                boolean expired = h.goneCleanly ? now - h.updatedNanos > ttl : now - h.goneNanos > grace;
                if (expired) {
                    it.remove();
                    changed |= h.listed();
                    LOG.log(System.Logger.Level.INFO, "central discovery: the registration of {0} ({1}) expired: its"
                            + " discovery controller {2}", h.key.entityId, h.key.registrant, h.goneCleanly
                            ? "was shut down and no update came in cdc_registration_ttl"
                            : "was lost and its keep-alive timeout passed");
                }
            }
            if (changed) {
                rebuild();
            }
        }
        if (changed) {
            target.discoveryNotices().changed();
        }
    }
}
