package io.nvmeof.target;

import io.nvmeof.protocol.Status;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The reservations of every namespace the target serves, known by subsystem NQN, NSID and NGUID:
 * a namespace object that a reload replaces with another of the same identity keeps its
 * reservation, and one removed and added again gets it back. Where the target has a place to keep
 * them ({@link #persistence}), the reservations with Persist Through Power Loss on are written
 * there after each change, before the command that changed them completes, so that they outlive
 * the process; RESCAP then offers PTPL. Writing happens on a thread of its own, never on an event
 * loop, one snapshot at a time.
 */
public final class ReservationStore {
    /** Where reservations with PTPL on are kept across restarts. */
    public interface Persistence {
        /** The kept states by {@link #key}; empty if nothing is kept yet; an error naming the file if it is corrupt. */
        Map<String, Reservations.State> load() throws IOException;

        /** Replaces what is kept with {@code states}, atomically and durably. */
        void save(Map<String, Reservations.State> states) throws IOException;

        /** Where it keeps them, for messages. */
        String describe();
    }

    /** Shares the reservation of a namespace with other gateways, where it can be (see {@link #sharing}). */
    @FunctionalInterface
    interface Sharing {
        /** The shared reservation of {@code ns}, or null where it is not shared (a file, RAM). */
        SharedReservations open(Subsystem subsystem, Namespace ns) throws IOException;
    }

    private final Map<String, Reservations> live = new ConcurrentHashMap<>();
    private volatile Sharing sharing;
    private volatile Persistence persistence;
    private volatile Map<String, Reservations.State> kept = Map.of();
    private volatile ExecutorService writer;

    /** The key of namespace {@code nsid} with NGUID {@code nguid} in subsystem {@code nqn}. */
    public static String key(String nqn, int nsid, byte[] nguid) {
        return nqn + "#" + Integer.toUnsignedString(nsid) + "#" + HexFormat.of().formatHex(nguid);
    }

    /**
     * Keeps reservations with PTPL in {@code p} from now on, starting from what it holds. Called
     * before namespaces are attached; a corrupt store fails here, naming itself.
     */
    public synchronized void persistence(Persistence p) throws IOException {
        Map<String, Reservations.State> loaded = p.load();
        this.kept = Map.copyOf(loaded);
        this.persistence = p;
        if (writer == null) {
            writer = Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "nvmeof-reservations");
                t.setDaemon(true);
                return t;
            });
        }
    }

    /** Whether reservations are shared with other gateways. */
    boolean shares() {
        return sharing != null;
    }

    /** Shares reservations through {@code s} from now on (a gateway group's), or not ({@code null}). */
    void sharing(Sharing s) {
        this.sharing = s;
    }

    /**
     * Shares the reservation of {@code ns} if this target shares reservations and {@code ns} can;
     * where it should and cannot (the cluster is away), the namespace refuses what a reservation
     * decides rather than decide alone. Blocks on the cluster: never on an event loop.
     */
    void share(Subsystem subsystem, Namespace ns) {
        Sharing s = sharing;
        if (s == null || ns.shared() != null) {
            return;
        }
        try {
            SharedReservations shared = s.open(subsystem, ns);
            if (shared != null) {
                ns.shared(shared);
                System.getLogger(ReservationStore.class.getName()).log(System.Logger.Level.INFO, "reservation of namespace "
                        + Integer.toUnsignedString(ns.nsid()) + " of " + subsystem.nqn() + " shared with the other gateways"
                        + " through " + shared.oid());
            }
        } catch (IOException | RuntimeException e) {
            System.getLogger(ReservationStore.class.getName()).log(System.Logger.Level.ERROR, "reservation of namespace "
                    + Integer.toUnsignedString(ns.nsid()) + " of " + subsystem.nqn() + " cannot be shared with the other"
                    + " gateways: " + e.getMessage() + "; refusing what a reservation decides");
            ns.reservations().unsure(Status.ANA_INACCESSIBLE);
        }
    }

    /** Whether reservations can persist through power loss here (RESCAP bit 0, CPTPL). */
    public boolean persistent() {
        return persistence != null;
    }

    /** The reservation of the namespace known by {@code key}: the live one, the kept one, or a new one. */
    Reservations of(String key) {
        return live.computeIfAbsent(key, k -> {
            Reservations.State s = kept.get(k);
            return s != null ? new Reservations(this, k, s) : new Reservations(this, k);
        });
    }

    /**
     * {@code r} changed: if its PTPL is on now or was on when last kept, writes every PTPL
     * reservation; the future completes once they are on the disk (at once when nothing needs it).
     */
    CompletableFuture<Void> changed(Reservations r) {
        Persistence p = persistence;
        if (p == null || !r.state().ptpl() && !kept.containsKey(r.key())) {
            return CompletableFuture.completedFuture(null);
        }
        return CompletableFuture.runAsync(() -> {
            Map<String, Reservations.State> now = new TreeMap<>();
            for (Map.Entry<String, Reservations> e : live.entrySet()) {
                Reservations.State s = e.getValue().state();
                if (s.ptpl()) {
                    now.put(e.getKey(), s);
                }
            }
            for (Map.Entry<String, Reservations.State> e : kept.entrySet()) {
                if (!live.containsKey(e.getKey())) {
                    now.put(e.getKey(), e.getValue()); // a namespace not attached now keeps its state
                }
            }
            try {
                p.save(now);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            kept = Map.copyOf(now);
        }, writer);
    }

    /** Stops the writer after what it has queued. */
    void close() {
        ExecutorService w = writer;
        if (w != null) {
            w.shutdown();
        }
    }
}
