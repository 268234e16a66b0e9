package io.nvmeof.target;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArraySet;

/**
 * A port of the target, as in Linux nvmet: a transport address hosts connect to and the
 * subsystems reachable through it. Every port also serves the discovery subsystem; a port
 * with no subsystems is a discovery-only port (8009 by convention for NVMe/TCP).
 */
public final class Port {
    private final int id;
    private final TargetTransport.Type transport;
    private final SortedMap<String, String> options;
    private final InetSocketAddress address;
    private final boolean allSubsystems;
    private final Set<String> subsystems = new CopyOnWriteArraySet<>();
    private volatile InetSocketAddress bound;
    /**
     * The ANA state of each group through this port, by ANAGRPID (1..{@link #MAX_ANA_GROUP}); as
     * in nvmet, group 1 is optimized and a group the port was not given is inaccessible. Replaced
     * whole on change, read per I/O command.
     */
    private volatile AnaState[] anaStates = initialAnaStates();
    /** Groups given a state on this port (group 1 always): the ANA log lists them. */
    private volatile SortedSet<Integer> anaGroups = Collections.unmodifiableSortedSet(new TreeSet<>(Set.of(1)));

    /** Referrals this port's discovery log gives (nvmet's {@code ports/N/referrals}). */
    private volatile List<Referral> referrals = List.of();

    /**
     * A referral to another discovery service (another gateway, say), listed in the discovery log
     * of the port that has it as an entry of subtype 1 (nvmet's {@code ports/N/referrals/NAME}).
     */
    public record Referral(String name, String trtype, String traddr, int trsvcid, int portid) {
        public Referral {
            Objects.requireNonNull(name, "name");
            TargetTransports.type(trtype); // a registered transport, or the error naming the known ones
            Objects.requireNonNull(traddr, "traddr");
            if (trsvcid < 0 || trsvcid > 65535 || portid < 0 || portid > 0xffff) {
                throw new IllegalArgumentException("referral " + name + ": trsvcid 0..65535 and portid 0..65535");
            }
        }
    }

    public List<Referral> referrals() {
        return referrals;
    }

    /** Sets the referrals; returns whether they changed (the target then tells discovery hosts). */
    boolean referrals(List<Referral> list) {
        List<Referral> next = List.copyOf(list);
        if (next.equals(referrals)) {
            return false;
        }
        referrals = next;
        return true;
    }

    /** ANAGRPMAX and NANAGRPID: ANA group IDs are 1..128, as nvmet's. */
    public static final int MAX_ANA_GROUP = 128;

    /**
     * @param id            PORTID as reported in discovery log entries (0..65535; nvmet numbers from 0)
     * @param trtype        a registered transport ({@link TargetTransports}): {@code tcp}, {@code rdma}
     * @param address       address to listen on; port 0 picks a free one
     * @param allSubsystems whether every subsystem of the target is reachable here
     * @param subsystems    the NQNs reachable here otherwise
     */
    public Port(int id, String trtype, InetSocketAddress address, boolean allSubsystems, Collection<String> subsystems) {
        this(id, trtype, Map.of(), address, allSubsystems, subsystems);
    }

    /**
     * @param options the transport's port options (NVMe/RDMA: {@code provider}); checked by
     *                the transport, which fills in its defaults
     * @throws IllegalArgumentException for an unknown trtype, a bad PORTID or a bad option
     *                                  ({@link PortOptionException}, naming it)
     */
    public Port(int id, String trtype, Map<String, String> options, InetSocketAddress address, boolean allSubsystems,
                Collection<String> subsystems) {
        if (id < 0 || id > 0xffff) {
            throw new IllegalArgumentException("portid must be 0..65535: " + id);
        }
        this.id = id;
        this.transport = TargetTransports.type(trtype);
        this.options = Collections.unmodifiableSortedMap(new TreeMap<>(transport.options(options)));
        this.address = address;
        this.allSubsystems = allSubsystems;
        this.subsystems.addAll(subsystems);
    }

    public int id() {
        return id;
    }

    public String trtype() {
        return transport.name();
    }

    /** The port's transport type. */
    public TargetTransport.Type transport() {
        return transport;
    }

    /** The transport's options for this port, defaults filled in. */
    public SortedMap<String, String> options() {
        return options;
    }

    /** One option, or null. */
    public String option(String name) {
        return options.get(name);
    }

    /** TRTYPE as discovery log entries and error log entries number it. */
    public int trtypeCode() {
        return transport.code();
    }

    /** The address asked for. */
    public InetSocketAddress address() {
        return address;
    }

    /** The address bound, once listening (its port is the real one when 0 was asked for). */
    public InetSocketAddress bound() {
        return bound;
    }

    void bound(InetSocketAddress a) {
        this.bound = a;
    }

    /** Whether hosts may reach {@code nqn} through this port. */
    public boolean serves(String nqn) {
        return allSubsystems || subsystems.contains(nqn);
    }

    /** A port that serves no NVM subsystem, only discovery: its discovery log lists every port's entries. */
    public boolean discoveryOnly() {
        return !allSubsystems && subsystems.isEmpty();
    }

    public Set<String> subsystems() {
        return subsystems;
    }

    /** Whether the port listens on every local address (the discovery log then names the address a host reached). */
    public boolean wildcard() {
        InetAddress a = address.getAddress();
        return a != null && a.isAnyLocalAddress();
    }

    private static AnaState[] initialAnaStates() {
        AnaState[] a = new AnaState[MAX_ANA_GROUP + 1];
        Arrays.fill(a, AnaState.INACCESSIBLE);
        a[1] = AnaState.OPTIMIZED;
        return a;
    }

    /** ANA group {@code group}'s state through this port. */
    public AnaState anaState(int group) {
        return group >= 1 && group <= MAX_ANA_GROUP ? anaStates[group] : AnaState.INACCESSIBLE;
    }

    /** The groups given a state on this port, group 1 included. */
    public SortedSet<Integer> anaGroups() {
        return anaGroups;
    }

    /**
     * Sets group {@code group}'s state through this port; returns the state it had. The target
     * tells hosts ({@link Target#anaState}); this only records it.
     */
    synchronized AnaState anaState(int group, AnaState state) {
        checkAnaGroup(group);
        AnaState[] next = anaStates.clone();
        AnaState was = next[group];
        next[group] = Objects.requireNonNull(state, "state");
        anaStates = next;
        if (!anaGroups.contains(group)) {
            TreeSet<Integer> g = new TreeSet<>(anaGroups);
            g.add(group);
            anaGroups = Collections.unmodifiableSortedSet(g);
        }
        return was;
    }

    static void checkAnaGroup(int group) {
        if (group < 1 || group > MAX_ANA_GROUP) {
            throw new IllegalArgumentException("ANA group must be 1.." + MAX_ANA_GROUP + ": " + group);
        }
    }

    @Override
    public String toString() {
        InetSocketAddress a = bound != null ? bound : address;
        return "port " + id + " " + trtype() + "://" + a.getHostString() + ":" + a.getPort()
                + (options.isEmpty() ? "" : " " + options);
    }
}
