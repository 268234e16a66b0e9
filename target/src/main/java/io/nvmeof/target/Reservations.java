package io.nvmeof.target;

import static io.nvmeof.protocol.Reservation.ACQUIRE;
import static io.nvmeof.protocol.Reservation.CLEAR;
import static io.nvmeof.protocol.Reservation.CPTPL_CLEAR;
import static io.nvmeof.protocol.Reservation.CPTPL_NO_CHANGE;
import static io.nvmeof.protocol.Reservation.CPTPL_SET;
import static io.nvmeof.protocol.Reservation.EXCLUSIVE_ACCESS;
import static io.nvmeof.protocol.Reservation.EXCLUSIVE_ACCESS_ALL_REGISTRANTS;
import static io.nvmeof.protocol.Reservation.EXCLUSIVE_ACCESS_REGISTRANTS_ONLY;
import static io.nvmeof.protocol.Reservation.PREEMPT_AND_ABORT;
import static io.nvmeof.protocol.Reservation.REGISTER;
import static io.nvmeof.protocol.Reservation.REGISTRATION_PREEMPTED;
import static io.nvmeof.protocol.Reservation.REPLACE;
import static io.nvmeof.protocol.Reservation.RESERVATION_PREEMPTED;
import static io.nvmeof.protocol.Reservation.RESERVATION_RELEASED;
import static io.nvmeof.protocol.Reservation.UNREGISTER;
import static io.nvmeof.protocol.Reservation.WRITE_EXCLUSIVE;
import static io.nvmeof.protocol.Reservation.WRITE_EXCLUSIVE_ALL_REGISTRANTS;
import static io.nvmeof.protocol.Reservation.WRITE_EXCLUSIVE_REGISTRANTS_ONLY;

import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * One namespace's persistent reservation (NVMe Base 2.x, 8.19): its registrants, each a host
 * known by its 128-bit Host Identifier (so every controller of one host is one registrant) and
 * bound to the host NQN that registered it, their keys, the reservation's type and holder, and the
 * generation. Commands change it under this object's lock; the data path reads an immutable
 * {@link State} with no lock and, while there is no reservation, one field.
 *
 * <p>The rules follow the specification as Linux nvmet and SPDK apply it: keys are compared
 * unless IEKEY allows otherwise (Register and Replace only; Acquire and Release with IEKEY are
 * Invalid Field, as in SPDK), a zero new key is Invalid Field, registering again with the same
 * key succeeds, Replace by a host not registered registers it when IEKEY is set, preempting
 * oneself changes the type, and Release of another type than the reservation's is Invalid Field.
 * Registrants are capped at {@link #MAX_REGISTRANTS}: a Register past the cap is refused with
 * Internal Error and changes nothing.
 *
 * <p>A Host Identifier is only what a host claims at Connect, so a registration answers only to
 * the host NQN that made it (the one a host proves with its DH-HMAC-CHAP key or TLS PSK): a
 * command under a registered Host ID from another NQN is treated as from a host that is not
 * registered (and the target refuses such a Connect in the first place). One NQN holds at most
 * {@link #MAX_REGISTRATIONS_PER_HOST} registrations, so that it cannot fill the table with Host IDs
 * of its own making; past it a Register is Reservation Conflict and changes nothing. The operator
 * removes registrations with {@link Subsystem#clearRegistrations}.
 */
public final class Reservations {
    /** How many hosts may be registered at once; SPDK's limit, whose overflow was CVE-2025-57275. */
    public static final int MAX_REGISTRANTS = 16;

    /**
     * How many registrations one host NQN may hold on a namespace: one, and room for a second
     * under a new Host ID (a host whose ID changed, say /etc/nvme/hostid regenerated) until the
     * stale one is preempted or cleared. Without it one NQN filled the table and locked the other
     * hosts out of registering at all.
     */
    public static final int MAX_REGISTRATIONS_PER_HOST = 2;

    /** A registered host: its Host Identifier, the NQN it registered under, its key. */
    public record Registrant(UUID hostId, String hostNqn, long key) {
    }

    /**
     * The whole state at one moment, never changed once made.
     *
     * @param type   the reservation's type, 0 when there is none
     * @param holder the holding registrant's Host Identifier (for the all-registrants types, the
     *               one that acquired it); null when there is no reservation
     */
    public record State(int generation, int type, UUID holder, List<Registrant> registrants, boolean ptpl) {
        public State {
            registrants = List.copyOf(registrants);
        }

        /** The registrant with this Host Identifier, whichever host NQN registered it, or null. */
        public Registrant registrant(UUID hostId) {
            for (Registrant r : registrants) {
                if (r.hostId.equals(hostId)) {
                    return r;
                }
            }
            return null;
        }

        /** The registrant with this Host Identifier if host {@code hostNqn} registered it, or null. */
        public Registrant registrant(UUID hostId, String hostNqn) {
            Registrant r = registrant(hostId);
            return r != null && r.hostNqn.equals(hostNqn) ? r : null;
        }

        /** How many registrations host {@code hostNqn} holds. */
        int registrations(String hostNqn) {
            int n = 0;
            for (Registrant r : registrants) {
                if (r.hostNqn.equals(hostNqn)) {
                    n++;
                }
            }
            return n;
        }

        boolean allRegistrantsType() {
            return type == WRITE_EXCLUSIVE_ALL_REGISTRANTS || type == EXCLUSIVE_ACCESS_ALL_REGISTRANTS;
        }

        /** Whether registrant {@code hostId} holds the reservation (every registrant does, for the all-registrants types). */
        public boolean holds(UUID hostId) {
            if (type == 0) {
                return false;
            }
            return allRegistrantsType() ? registrant(hostId) != null : holder.equals(hostId);
        }

        /** Whether host {@code hostNqn} under {@code hostId} holds the reservation. */
        public boolean holds(UUID hostId, String hostNqn) {
            return holds(hostId) && registrant(hostId, hostNqn) != null;
        }
    }

    /** A notice owed to a host: a Reservation Notification log entry (and its event) of {@code type}. */
    public record Notice(UUID hostId, int type) {
    }

    /**
     * What a reservation command did.
     *
     * @param status    its status (success when null-free: {@link Status#SUCCESS})
     * @param notices   the notices owed to other hosts
     * @param preempted the hosts a preempt unregistered (whose commands a preempt-and-abort aborts)
     * @param changed   whether the state changed (and, with PTPL on, must be stored)
     */
    public record Outcome(Status status, List<Notice> notices, Set<UUID> preempted, boolean changed) {
        static Outcome of(Status s) {
            return new Outcome(s, List.of(), Set.of(), false);
        }
    }

    private static final State EMPTY = new State(0, 0, null, List.of(), false);

    private final ReservationStore store;
    private final String key;
    private final boolean ptplCapable;
    private volatile State state;
    /** Preempt-and-abort count, and the count at which each host was last preempted so (copied on change). */
    private volatile long aborts;
    private volatile Map<UUID, Long> abortedAt = Map.of();

    /** A reservation kept nowhere, empty; {@code ptplCapable}: whether CPTPL may set persistence. */
    public Reservations(boolean ptplCapable) {
        this(null, null, ptplCapable, EMPTY);
    }

    /** The reservation {@code store} keeps under {@code key}, empty or as kept. */
    Reservations(ReservationStore store, String key, State stored) {
        this(store, key, false, stored);
    }

    Reservations(ReservationStore store, String key) {
        this(store, key, false, EMPTY);
    }

    private Reservations(ReservationStore store, String key, boolean ptplCapable, State state) {
        this.store = store;
        this.key = key;
        this.ptplCapable = ptplCapable;
        this.state = state;
    }

    public State state() {
        return state;
    }

    String key() {
        return key;
    }

    /**
     * Whether Persist Through Power Loss can be set (RESCAP bit 0): where the target keeps
     * reservations, or where they live in the cluster (shared with other gateways).
     */
    public boolean ptplCapable() {
        return sharer != null || (store != null ? store.persistent() : ptplCapable);
    }

    /** After a change: completes once the state is as durable as its PTPL asks. */
    CompletableFuture<Void> stored() {
        return store != null ? store.changed(this) : CompletableFuture.completedFuture(null);
    }

    /** The preempt-and-abort count now: a command notes it as it is accepted. */
    public long abortEpoch() {
        return aborts;
    }

    /**
     * Whether a preempt-and-abort removed {@code hostId} after a command of its that noted
     * {@code epoch}: such a command, still held by the target, must not reach the storage.
     */
    public boolean abortedSince(UUID hostId, long epoch) {
        if (aborts == epoch) {
            return false;
        }
        Long at = abortedAt.get(hostId);
        return at != null && at > epoch;
    }

    /** Where the state is kept in the cluster and the gateway cannot be sure it is current (its watch broke), or null. */
    private volatile Status unsure;
    /**
     * What shares this reservation with other gateways now (the newest of a namespace's
     * replacements), or null: one that was replaced no longer marks it unsure.
     */
    private volatile Object sharer;

    void sharer(Object s) {
        this.sharer = s;
    }

    Object sharer() {
        return sharer;
    }

    /**
     * Takes {@code s} as the state, as another gateway (or the cluster) has it: a reservation
     * shared across gateways is stepped on the newest state there is.
     */
    synchronized void adopt(State s) {
        state = s;
    }

    /**
     * Hosts {@code hostIds} were preempted and aborted (here, or at another gateway): their
     * commands accepted here before now must not reach the storage.
     */
    synchronized void aborted(Set<UUID> hostIds) {
        long epoch = aborts + 1;
        Map<UUID, Long> at = new HashMap<>(abortedAt);
        for (UUID p : hostIds) {
            at.put(p, epoch);
        }
        abortedAt = Map.copyOf(at);
        aborts = epoch;
    }

    /** The preempt-and-abort count and marks at one moment. */
    record AbortMarks(long aborts, Map<UUID, Long> abortedAt) {
    }

    /** The abort marks now, to put back with {@link #restore} when a step's result is not kept. */
    synchronized AbortMarks marks() {
        return new AbortMarks(aborts, abortedAt);
    }

    /** Puts back the abort marks {@link #marks} took (a step lost the race to change the shared state). */
    synchronized void restore(AbortMarks marks) {
        aborts = marks.aborts();
        abortedAt = marks.abortedAt();
    }

    /**
     * While {@code status} is not null, a reserved namespace refuses the commands that a
     * reservation decides (with that status, a path error), since this gateway cannot tell whether
     * its view is current; a namespace with no reservation is not affected.
     */
    void unsure(Status status) {
        this.unsure = status;
    }

    /** What {@link #unsure} set, or null. */
    Status unsureStatus() {
        return unsure;
    }

    /** Set Features Reservation Persistence: turns PTPL on or off (Invalid Field for on, where it cannot be). */
    public synchronized Outcome persistence(boolean ptpl) {
        if (ptpl && !ptplCapable()) {
            return Outcome.of(Status.INVALID_FIELD);
        }
        State s = state;
        if (s.ptpl == ptpl) {
            return Outcome.of(Status.SUCCESS);
        }
        state = new State(s.generation, s.type, s.holder, s.registrants, ptpl);
        return new Outcome(Status.SUCCESS, List.of(), Set.of(), true);
    }

    /**
     * Whether host {@code hostNqn} under {@code hostId} may run the NVM command {@code opcode} on
     * the namespace now: null, or Reservation Conflict (Base 2.x, Figure "Command Behavior in the
     * Presence of a Reservation").
     * Reads are Read, Compare and Verify; writes are Flush, Write, Write Uncorrectable, Write
     * Zeroes, Dataset Management and Copy; other commands are never refused here.
     */
    public Status check(UUID hostId, String hostNqn, int opcode) {
        State s = state;
        if (s.type == 0) {
            return null;
        }
        boolean read = opcode == NvmOpcode.READ.code || opcode == NvmOpcode.COMPARE.code || opcode == NvmOpcode.VERIFY.code;
        boolean write = !read && (opcode == NvmOpcode.FLUSH.code || opcode == NvmOpcode.WRITE.code
                || opcode == NvmOpcode.WRITE_UNCORRECTABLE.code || opcode == NvmOpcode.WRITE_ZEROES.code
                || opcode == NvmOpcode.DATASET_MANAGEMENT.code || opcode == NvmOpcode.COPY.code);
        if (!read && !write) {
            return null;
        }
        Status u = unsure;
        if (u != null) {
            return u;
        }
        if (s.holds(hostId, hostNqn)) {
            return null;
        }
        boolean registrant = s.registrant(hostId, hostNqn) != null;
        boolean allowed = switch (s.type) {
            case WRITE_EXCLUSIVE -> read;
            case EXCLUSIVE_ACCESS -> false;
            case WRITE_EXCLUSIVE_REGISTRANTS_ONLY, WRITE_EXCLUSIVE_ALL_REGISTRANTS -> read || registrant;
            case EXCLUSIVE_ACCESS_REGISTRANTS_ONLY, EXCLUSIVE_ACCESS_ALL_REGISTRANTS -> registrant;
            default -> true;
        };
        return allowed ? null : Status.RESERVATION_CONFLICT;
    }

    /** Reservation Register by {@code hostId} (known as {@code hostNqn}). */
    public synchronized Outcome register(UUID hostId, String hostNqn, int action, boolean iekey, int cptpl, long crkey,
                                         long nrkey) {
        State s = state;
        if (cptpl == 1 || action > REPLACE) {
            return Outcome.of(Status.INVALID_FIELD);
        }
        if (cptpl == CPTPL_SET && !ptplCapable()) {
            // The Linux host asks for PTPL on every Register: where it cannot be had, the
            // registration still counts (nvmet ignores CPTPL), and the report says PTPLS 0.
            cptpl = CPTPL_NO_CHANGE;
        }
        Registrant me = s.registrant(hostId);
        if (me != null && !me.hostNqn.equals(hostNqn)) {
            return Outcome.of(Status.RESERVATION_CONFLICT); // another host's registration: not this one's to change
        }
        List<Registrant> regs = new ArrayList<>(s.registrants);
        int type = s.type;
        UUID holder = s.holder;
        List<Notice> notices = List.of();
        switch (action) {
            case REGISTER -> {
                if (nrkey == 0) {
                    return Outcome.of(Status.INVALID_FIELD);
                }
                if (me != null) {
                    if (me.key != nrkey) {
                        return Outcome.of(Status.RESERVATION_CONFLICT);
                    }
                    return ptpl(s, cptpl); // registered already, with this key: not an error
                }
                Status full = full(s, hostNqn);
                if (full != null) {
                    return Outcome.of(full);
                }
                regs.add(new Registrant(hostId, hostNqn, nrkey));
            }
            case UNREGISTER -> {
                if (me == null || !iekey && me.key != crkey) {
                    return Outcome.of(Status.RESERVATION_CONFLICT);
                }
                regs.remove(me);
                if (s.holds(hostId) && (!s.allRegistrantsType() || regs.isEmpty())) {
                    // the holder leaving releases the reservation; the others hear of it where they had access by it
                    if (type == WRITE_EXCLUSIVE_REGISTRANTS_ONLY || type == EXCLUSIVE_ACCESS_REGISTRANTS_ONLY) {
                        notices = notices(regs, RESERVATION_RELEASED);
                    }
                    type = 0;
                    holder = null;
                } else if (s.allRegistrantsType() && hostId.equals(holder)) {
                    holder = regs.get(0).hostId; // the reservation stays with the registrants
                }
            }
            default -> { // REPLACE
                if (nrkey == 0) {
                    return Outcome.of(Status.INVALID_FIELD);
                }
                if (me == null) {
                    if (!iekey) {
                        return Outcome.of(Status.RESERVATION_CONFLICT);
                    }
                    Status full = full(s, hostNqn);
                    if (full != null) {
                        return Outcome.of(full);
                    }
                    regs.add(new Registrant(hostId, hostNqn, nrkey));
                } else {
                    if (!iekey && me.key != crkey) {
                        return Outcome.of(Status.RESERVATION_CONFLICT);
                    }
                    regs.set(regs.indexOf(me), new Registrant(hostId, me.hostNqn, nrkey));
                }
            }
        }
        boolean ptpl = cptpl == CPTPL_SET || cptpl != CPTPL_CLEAR && s.ptpl;
        state = new State(s.generation + 1, type, holder, regs, ptpl);
        return new Outcome(Status.SUCCESS, notices, Set.of(), true);
    }

    /**
     * Why host {@code hostNqn} may not add a registration now, or null: its own share is taken
     * (Reservation Conflict: what the host asks conflicts with what it holds), or the table is
     * (Internal Error, as SPDK answers).
     */
    private static Status full(State s, String hostNqn) {
        if (s.registrations(hostNqn) >= MAX_REGISTRATIONS_PER_HOST) {
            return Status.RESERVATION_CONFLICT;
        }
        return s.registrants.size() >= MAX_REGISTRANTS ? Status.INTERNAL_ERROR : null;
    }

    private Outcome ptpl(State s, int cptpl) {
        boolean ptpl = cptpl == CPTPL_SET || cptpl != CPTPL_CLEAR && s.ptpl;
        if (ptpl == s.ptpl) {
            return new Outcome(Status.SUCCESS, List.of(), Set.of(), false);
        }
        state = new State(s.generation, s.type, s.holder, s.registrants, ptpl);
        return new Outcome(Status.SUCCESS, List.of(), Set.of(), true);
    }

    /** Reservation Acquire by {@code hostId} (known as {@code hostNqn}): acquire, preempt, or preempt and abort. */
    public synchronized Outcome acquire(UUID hostId, String hostNqn, int action, boolean iekey, int rtype, long crkey, long prkey) {
        State s = state;
        if (iekey || rtype < WRITE_EXCLUSIVE || rtype > EXCLUSIVE_ACCESS_ALL_REGISTRANTS || action > PREEMPT_AND_ABORT) {
            return Outcome.of(Status.INVALID_FIELD);
        }
        Registrant me = s.registrant(hostId, hostNqn);
        if (me == null || me.key != crkey) {
            return Outcome.of(Status.RESERVATION_CONFLICT);
        }
        if (action == ACQUIRE) {
            if (s.type == 0) {
                State n = new State(s.generation, rtype, hostId, s.registrants, s.ptpl);
                state = n;
                return new Outcome(Status.SUCCESS, List.of(), Set.of(), true);
            }
            // the holder acquiring its own type again is no error; anything else conflicts
            return Outcome.of(s.holds(hostId) && s.type == rtype ? Status.SUCCESS : Status.RESERVATION_CONFLICT);
        }
        List<Registrant> regs = new ArrayList<>(s.registrants);
        Set<UUID> preempted = new LinkedHashSet<>();
        int type = s.type;
        UUID holder = s.holder;
        boolean released = false;
        if (s.type == 0) {
            // no reservation: unregister the holders of PRKEY (none: a conflict)
            if (!removeByKey(regs, prkey, hostId, preempted)) {
                return Outcome.of(Status.RESERVATION_CONFLICT);
            }
        } else if (!s.allRegistrantsType()) {
            Registrant h = s.registrant(s.holder);
            if (h != null && h.key == prkey) {
                // preempting the holder: its reservation passes to us (with the new type); PRKEY's holders go
                removeByKey(regs, prkey, hostId, preempted);
                type = rtype;
                holder = hostId;
                released = true;
            } else if (prkey == 0) {
                return Outcome.of(Status.INVALID_FIELD);
            } else if (!removeByKey(regs, prkey, hostId, preempted)) {
                return Outcome.of(Status.RESERVATION_CONFLICT);
            }
        } else if (prkey == 0) {
            // all registrants: PRKEY 0 preempts every other registrant and takes the reservation
            for (Registrant r : s.registrants) {
                if (!r.hostId.equals(hostId)) {
                    regs.remove(r);
                    preempted.add(r.hostId);
                }
            }
            type = rtype;
            holder = hostId;
            released = true;
        } else if (!removeByKey(regs, prkey, hostId, preempted)) {
            return Outcome.of(Status.RESERVATION_CONFLICT);
        }
        List<Notice> notices = new ArrayList<>();
        for (UUID p : preempted) {
            notices.add(new Notice(p, REGISTRATION_PREEMPTED));
        }
        if (released) {
            for (Registrant r : regs) {
                if (!r.hostId.equals(hostId)) {
                    notices.add(new Notice(r.hostId, RESERVATION_RELEASED));
                }
            }
        }
        state = new State(s.generation + 1, type, holder, regs, s.ptpl);
        if (action == PREEMPT_AND_ABORT && !preempted.isEmpty()) {
            aborted(preempted);
        }
        return new Outcome(Status.SUCCESS, notices, preempted, true);
    }

    /** Removes every registrant but {@code self} whose key is {@code key}; whether any was (self counts as found). */
    private static boolean removeByKey(List<Registrant> regs, long key, UUID self, Set<UUID> removed) {
        boolean found = false;
        for (Registrant r : List.copyOf(regs)) {
            if (r.key == key) {
                found = true;
                if (!r.hostId.equals(self)) {
                    regs.remove(r);
                    removed.add(r.hostId);
                }
            }
        }
        return found;
    }

    /** Reservation Release by {@code hostId} (known as {@code hostNqn}): release or clear. */
    public synchronized Outcome release(UUID hostId, String hostNqn, int action, boolean iekey, int rtype, long crkey) {
        State s = state;
        if (iekey || action > CLEAR) {
            return Outcome.of(Status.INVALID_FIELD);
        }
        Registrant me = s.registrant(hostId, hostNqn);
        if (me == null || me.key != crkey) {
            return Outcome.of(Status.RESERVATION_CONFLICT);
        }
        if (action == CLEAR) {
            List<Notice> notices = new ArrayList<>();
            for (Registrant r : s.registrants) {
                if (!r.hostId.equals(hostId)) {
                    notices.add(new Notice(r.hostId, RESERVATION_PREEMPTED));
                }
            }
            state = new State(s.generation + 1, 0, null, List.of(), s.ptpl);
            return new Outcome(Status.SUCCESS, notices, Set.of(), true);
        }
        if (s.type == 0 || !s.holds(hostId)) {
            return Outcome.of(Status.SUCCESS); // nothing of ours to release: not an error
        }
        if (s.type != rtype) {
            return Outcome.of(Status.INVALID_FIELD);
        }
        List<Notice> notices = s.type == WRITE_EXCLUSIVE || s.type == EXCLUSIVE_ACCESS ? List.of()
                : notices(s.registrants.stream().filter(r -> !r.hostId.equals(hostId)).toList(), RESERVATION_RELEASED);
        state = new State(s.generation, 0, null, s.registrants, s.ptpl);
        return new Outcome(Status.SUCCESS, notices, Set.of(), true);
    }

    /**
     * What {@link #clearRegistrations} did.
     *
     * @param removed the registrations it removed
     * @param notices the notices owed to hosts: registration preempted to those removed, reservation
     *                released to the others where the reservation went with them and had given them access
     */
    record Cleared(List<Registrant> removed, List<Notice> notices) {
        Cleared {
            removed = List.copyOf(removed);
            notices = List.copyOf(notices);
        }
    }

    /**
     * The operator removes the registrations of host {@code hostNqn} and Host ID {@code hostId}
     * (either null: any; both null: every registration), as if each had unregistered: a reservation
     * whose holder goes is released (one of the all-registrants types stays while registrants do).
     * Stale registrations of a host that is gone, or one host's registrations past what it should
     * hold, go this way without editing files. The generation moves on when any is removed.
     */
    synchronized Cleared clearRegistrations(String hostNqn, UUID hostId) {
        State s = state;
        List<Registrant> kept = new ArrayList<>();
        List<Registrant> removed = new ArrayList<>();
        for (Registrant g : s.registrants) {
            boolean match = (hostNqn == null || g.hostNqn.equals(hostNqn)) && (hostId == null || g.hostId.equals(hostId));
            (match ? removed : kept).add(g);
        }
        if (removed.isEmpty()) {
            return new Cleared(List.of(), List.of());
        }
        List<Notice> notices = new ArrayList<>(notices(removed, REGISTRATION_PREEMPTED));
        int type = s.type;
        UUID holder = s.holder;
        boolean holderGone = type != 0 && removed.stream().anyMatch(g -> g.hostId.equals(s.holder));
        if (type != 0 && (s.allRegistrantsType() ? kept.isEmpty() : holderGone)) {
            if (type == WRITE_EXCLUSIVE_REGISTRANTS_ONLY || type == EXCLUSIVE_ACCESS_REGISTRANTS_ONLY) {
                notices.addAll(notices(kept, RESERVATION_RELEASED));
            }
            type = 0;
            holder = null;
        } else if (s.allRegistrantsType() && holderGone) {
            holder = kept.get(0).hostId;
        }
        state = new State(s.generation + 1, type, holder, kept, s.ptpl);
        return new Cleared(removed, notices);
    }

    private static List<Notice> notices(List<Registrant> to, int type) {
        List<Notice> out = new ArrayList<>(to.size());
        for (Registrant r : to) {
            out.add(new Notice(r.hostId, type));
        }
        return out;
    }
}
