package io.nvmeof.target;

import io.nvmeof.protocol.Status;
import io.nvmeof.target.backend.RadosObject;
import io.nvmeof.target.backend.RbdCluster;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The reservation of a namespace that several gateways serve from one RBD image: its state lives
 * in one RADOS object beside the image (its bytes a version and the state), so that a Register
 * through one gateway holds at every other. A reservation command reads the object, takes one step
 * of {@link Reservations}' state machine from what it read, and writes the result only if no one
 * changed the object meanwhile (compare-and-swap on the version; a lost race reads and steps
 * again); then it notifies the other gateways with the new state, the notices it owes hosts, and
 * the hosts a Preempt and Abort removed, and waits until each has taken it: each adopts the state
 * (so its data path's check, one volatile read while nothing is reserved, sees it), logs the
 * notices for the hosts connected there, and, for a Preempt and Abort, drains the preempted hosts'
 * commands before it acknowledges, so that once the command completes nothing of theirs can land
 * at any gateway. A gateway whose watch on the object broke is unsure of the state: it refuses
 * reservation commands, and the commands a reservation decides on a reserved namespace, with a
 * path error until it has watched and read the object again.
 */
final class SharedReservations implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(SharedReservations.class.getName());
    /** How long a change waits for the other gateways to take it; a gateway that cannot has lost its lease by then. */
    static final long NOTIFY_TIMEOUT_MS = 15_000;
    private static final Status UNSURE = Status.ANA_INACCESSIBLE;

    private final Reservations res;
    private final RadosObject object;
    private final Subsystem subsystem;
    private final Namespace ns;
    /** Runs the commands' read-step-write loops and notifies, one at a time. */
    private final ExecutorService commands;
    /** Takes what other gateways announce, apart from the commands' thread (which may be waiting for their acks). */
    private final ExecutorService applier;
    private volatile RadosObject.Watch watch;
    private volatile boolean closed;

    private SharedReservations(Reservations res, RadosObject object, Subsystem subsystem, Namespace ns) {
        this.res = res;
        this.object = object;
        this.subsystem = subsystem;
        this.ns = ns;
        String name = "nvmeof-resv-" + Integer.toUnsignedString(ns.nsid());
        this.commands = Executors.newSingleThreadExecutor(r -> daemon(r, name));
        this.applier = Executors.newSingleThreadExecutor(r -> daemon(r, name + "-apply"));
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /**
     * Shares {@code ns}'s reservation through object {@code nvmeof_resv.KEY} of {@code pool}: makes
     * it if it is not there (empty), adopts what it holds, and watches it. Blocks on the cluster.
     */
    static SharedReservations open(RbdCluster cluster, String pool, Subsystem subsystem, Namespace ns) throws IOException {
        String key = ReservationStore.key(subsystem.nqn(), ns.nsid(), ns.nguid());
        RadosObject object = new RadosObject(cluster, pool, "nvmeof_resv." + key);
        object.compareAndSet(0, encode(new Reservations.State(0, 0, null, List.of(), false))); // there already: fine
        SharedReservations s = new SharedReservations(ns.reservations(), object, subsystem, ns);
        s.res.adopt(decode(object.read().data()));
        s.watch = object.watch(s::heard, s::broken);
        // current now: a namespace object this one replaces (a rejoin's new client) may have left
        // the reservation unsure as its watch broke, and from now on that one leaves it alone
        s.res.sharer(s);
        s.res.unsure(null);
        return s;
    }

    /** The reservation object's name. */
    String oid() {
        return object.oid();
    }

    /**
     * Runs one reservation command's {@code step} against the shared state, on this namespace's
     * thread; completes with its outcome once the change is kept and every other gateway has
     * taken it (or exceptionally: the object could not be read or written).
     */
    CompletableFuture<Reservations.Outcome> run(Function<Reservations, Reservations.Outcome> step) {
        return CompletableFuture.supplyAsync(() -> {
            if (res.unsureStatus() != null) {
                return Reservations.Outcome.of(UNSURE);
            }
            try {
                return change(step);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, commands);
    }

    /** The state as the object holds it now (Reservation Report answers from it), adopted here. */
    CompletableFuture<Reservations.State> current() {
        return CompletableFuture.supplyAsync(() -> {
            try {
                Reservations.State s = decode(object.read().data());
                synchronized (res) {
                    res.adopt(s);
                }
                return s;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, commands);
    }

    private Reservations.Outcome change(Function<Reservations, Reservations.Outcome> step) throws IOException {
        while (true) {
            RadosObject.Versioned v = object.read();
            Reservations.Outcome o;
            byte[] announce;
            synchronized (res) {
                res.adopt(decode(v.data()));
                Reservations.AbortMarks marks = res.marks();
                o = step.apply(res);
                if (!o.changed()) {
                    return o;
                }
                if (!object.compareAndSet(v.version(), encode(res.state()))) {
                    res.restore(marks); // another gateway changed it first: step again from what it wrote
                    continue;
                }
                announce = announcement(res.state(), o);
            }
            RadosObject.Notified n = object.notify(announce, NOTIFY_TIMEOUT_MS);
            if (!n.missed().isEmpty()) {
                // a gateway that did not take the change may still act on the old state (frozen, cut
                // off, a standby no lease fences): it is fenced before the change completes
                List<String> fenced = object.fence(n.missed());
                LOG.log(System.Logger.Level.WARNING, "reservation of namespace {0} of {1}: fenced {2} (client(s) {3}),"
                        + " which did not take the change within {4} ms", Integer.toUnsignedString(ns.nsid()),
                        subsystem.nqn(), fenced, n.missed(), NOTIFY_TIMEOUT_MS);
            }
            return o;
        }
    }

    /** What another gateway announced (on a librados thread): taken on the applier, acknowledged once done. */
    private void heard(byte[] payload, Runnable ack) {
        try {
            applier.execute(() -> apply(payload, ack));
        } catch (RuntimeException e) {
            ack.run(); // closing
        }
    }

    private void apply(byte[] payload, Runnable ack) {
        if (!inCharge()) {
            ack.run(); // the namespace object that replaced this one takes it
            return;
        }
        Announcement a;
        try {
            a = Announcement.decode(payload);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "reservation of namespace {0}: an announcement that does not parse: {1}",
                    Integer.toUnsignedString(ns.nsid()), e.getMessage());
            ack.run();
            return;
        }
        synchronized (res) {
            res.adopt(a.state);
            if (!a.preempted.isEmpty()) {
                res.aborted(a.preempted);
            }
        }
        for (Reservations.Notice n : a.notices) {
            subsystem.reservationNotice(n.hostId(), ns.nsid(), n.type());
        }
        if (a.preempted.isEmpty()) {
            ack.run();
        } else {
            subsystem.drain(ns, a.preempted, ack); // their commands here end before the preempt completes there
        }
    }

    /** The watch broke (the client was cut off or fenced): unsure until watched and read again. */
    private void broken(int err) {
        if (!inCharge()) {
            return; // this namespace object is gone or replaced; another watches for it
        }
        LOG.log(System.Logger.Level.WARNING, "reservation of namespace {0} of {1}: the watch on {2} broke ({3}); refusing"
                + " what a reservation decides until it is current again", Integer.toUnsignedString(ns.nsid()),
                subsystem.nqn(), object.oid(), err);
        res.unsure(UNSURE);
        try {
            applier.execute(this::rewatch);
        } catch (RuntimeException e) {
            // closing meanwhile
        }
    }

    /** Whether this is what shares the reservation now: not closed, not replaced by a newer namespace object. */
    private boolean inCharge() {
        return !closed && res.sharer() == this;
    }

    private void rewatch() {
        while (inCharge()) {
            try {
                RadosObject.Watch old = watch;
                if (old != null) {
                    try {
                        old.close();
                    } catch (IOException e) {
                        // gone with the client
                    }
                }
                watch = object.watch(this::heard, this::broken);
                synchronized (res) {
                    res.adopt(decode(object.read().data()));
                }
                if (inCharge()) {
                    res.unsure(null);
                }
                return;
            } catch (IOException | RuntimeException e) {
                try {
                    TimeUnit.SECONDS.sleep(1);
                } catch (InterruptedException x) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        RadosObject.Watch w = watch;
        if (w != null) {
            try {
                w.close();
            } catch (IOException e) {
                LOG.log(System.Logger.Level.DEBUG, "ending the watch on {0}: {1}", object.oid(), e.getMessage());
            }
        }
        commands.shutdown();
        applier.shutdown();
    }

    // ---- the object's and the announcements' bytes ----

    static byte[] encode(Reservations.State s) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(b)) {
            write(out, s);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return b.toByteArray();
    }

    static Reservations.State decode(byte[] bytes) throws IOException {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            return read(in);
        }
    }

    private static final int FORMAT = 1;

    private static void write(DataOutputStream out, Reservations.State s) throws IOException {
        out.writeByte(FORMAT);
        out.writeInt(s.generation());
        out.writeByte(s.type());
        uuid(out, s.holder());
        out.writeBoolean(s.ptpl());
        out.writeShort(s.registrants().size());
        for (Reservations.Registrant r : s.registrants()) {
            uuid(out, r.hostId());
            out.writeUTF(r.hostNqn());
            out.writeLong(r.key());
        }
    }

    private static Reservations.State read(DataInputStream in) throws IOException {
        int format = in.readUnsignedByte();
        if (format != FORMAT) {
            throw new IOException("reservation state of format " + format + ", not " + FORMAT);
        }
        int generation = in.readInt();
        int type = in.readUnsignedByte();
        UUID holder = uuid(in);
        boolean ptpl = in.readBoolean();
        int n = in.readUnsignedShort();
        if (n > Reservations.MAX_REGISTRANTS) {
            throw new IOException(n + " registrants, more than " + Reservations.MAX_REGISTRANTS);
        }
        List<Reservations.Registrant> regs = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            UUID id = uuid(in);
            if (id == null) {
                throw new IOException("a registrant without a Host Identifier");
            }
            regs.add(new Reservations.Registrant(id, in.readUTF(), in.readLong()));
        }
        if (type != 0 && holder == null) {
            throw new IOException("a reservation of type " + type + " without a holder");
        }
        return new Reservations.State(generation, type, holder, regs, ptpl);
    }

    private static void uuid(DataOutputStream out, UUID u) throws IOException {
        out.writeBoolean(u != null);
        if (u != null) {
            out.writeLong(u.getMostSignificantBits());
            out.writeLong(u.getLeastSignificantBits());
        }
    }

    private static UUID uuid(DataInputStream in) throws IOException {
        return in.readBoolean() ? new UUID(in.readLong(), in.readLong()) : null;
    }

    private static byte[] announcement(Reservations.State s, Reservations.Outcome o) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(b)) {
            write(out, s);
            out.writeShort(o.preempted().size());
            for (UUID p : o.preempted()) {
                uuid(out, p);
            }
            out.writeShort(o.notices().size());
            for (Reservations.Notice n : o.notices()) {
                uuid(out, n.hostId());
                out.writeByte(n.type());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return b.toByteArray();
    }

    /** A change another gateway made: the new state, the hosts it preempted and aborted, the notices owed. */
    private record Announcement(Reservations.State state, Set<UUID> preempted, List<Reservations.Notice> notices) {
        static Announcement decode(byte[] bytes) throws IOException {
            try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
                Reservations.State s = read(in);
                Set<UUID> preempted = new LinkedHashSet<>();
                for (int i = in.readUnsignedShort(); i > 0; i--) {
                    preempted.add(uuid(in));
                }
                List<Reservations.Notice> notices = new ArrayList<>();
                for (int i = in.readUnsignedShort(); i > 0; i--) {
                    notices.add(new Reservations.Notice(uuid(in), in.readUnsignedByte()));
                }
                return new Announcement(s, preempted, notices);
            }
        }
    }
}
