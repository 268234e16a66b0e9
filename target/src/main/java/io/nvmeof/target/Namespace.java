package io.nvmeof.target;

import io.nvmeof.target.backend.Backend;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A namespace of a subsystem: an NSID, a backend and identifiers that stay the same across
 * restarts (derived from the subsystem NQN and NSID unless given).
 */
public final class Namespace implements AutoCloseable {
    private final int nsid;
    private final Backend backend;
    /** Write protected: set at creation, changed by {@link Subsystem#readOnly}. */
    private volatile boolean readOnly;
    private final UUID uuid;
    private final int blockShift;
    /** The owner's reference plus one per command using the namespace; the backend closes at zero. */
    private final AtomicInteger refs = new AtomicInteger(1);

    public Namespace(String subsystemNqn, int nsid, Backend backend, boolean readOnly, UUID uuid) {
        if (nsid < 1 || nsid == 0xffffffff) {
            throw new IllegalArgumentException("nsid must be 1..0xfffffffe: " + Integer.toUnsignedString(nsid));
        }
        this.nsid = nsid;
        this.backend = backend;
        this.readOnly = readOnly;
        this.uuid = uuid != null ? uuid : backend.identity() != null ? backend.identity()
                : UUID.nameUUIDFromBytes((subsystemNqn + "/" + nsid).getBytes(StandardCharsets.UTF_8));
        this.blockShift = Integer.numberOfTrailingZeros(backend.blockSize());
    }

    /** The hosts that see this namespace, or null: every host the subsystem lets in (SPDK's auto-visible). */
    private volatile Set<String> visibleTo;

    /** Whether host {@code hostNqn} sees this namespace: in its active list, for Identify and for I/O. */
    public boolean visibleTo(String hostNqn) {
        Set<String> v = visibleTo;
        return v == null || v.contains(hostNqn);
    }

    /** The hosts that see it, or null for all. */
    public Set<String> visibility() {
        return visibleTo;
    }

    /**
     * Makes the namespace visible to {@code hosts} only (null: to all), before it is added to its
     * subsystem; once added, {@link Subsystem#visibility} changes it and tells the hosts.
     */
    public void visibility(Set<String> hosts) {
        this.visibleTo = hosts == null ? null : Set.copyOf(hosts);
    }

    public int nsid() {
        return nsid;
    }

    /** Its persistent reservation: empty at first; a restart or a reload hands on the stored one. */
    private volatile Reservations reservations = new Reservations(false);

    public Reservations reservations() {
        return reservations;
    }

    /** Takes over a reservation (the stored one at start, the replaced namespace's on reload). */
    public void reservations(Reservations r) {
        this.reservations = r;
    }

    /** Where its reservation is shared with other gateways (an RBD image a gateway group serves), or null. */
    private volatile SharedReservations shared;

    SharedReservations shared() {
        return shared;
    }

    void shared(SharedReservations s) {
        this.shared = s;
    }

    /** Its QoS limits, or null where none were ever set. */
    private volatile Qos qos;

    public Qos qos() {
        return qos;
    }

    /** Sets its QoS limits (0 in a field: none there); counters carry over. */
    public void qos(Qos.Limits limits) {
        qos = Qos.replacing(qos, limits, System.nanoTime());
    }

    /** ANAGRPID: the ANA group whose state decides which paths serve it (1 unless set). */
    private volatile int anaGroup = 1;

    public int anaGroup() {
        return anaGroup;
    }

    /**
     * Puts the namespace in ANA group {@code group} (1..128): before it is added to its subsystem;
     * afterwards through {@link Target#anaGroup}, which tells the hosts.
     */
    public void anaGroup(int group) {
        Port.checkAnaGroup(group);
        this.anaGroup = group;
    }

    public Backend backend() {
        return backend;
    }

    public boolean readOnly() {
        return readOnly;
    }

    void readOnly(boolean readOnly) {
        this.readOnly = readOnly;
    }

    /**
     * Changes the size in place (see {@link Backend#resize}): writers wait for it, as for a fused
     * Compare and Write; reads go on. A shrink waits for the writes that hold the writers' lock;
     * one that takes the lock after it finds its range gone ({@link #holds}).
     */
    void resize(long bytes) throws IOException {
        withBackend(b -> {
            Lock exclusive = compareAndWriteLock();
            exclusive.lock();
            try {
                b.resize(bytes);
            } finally {
                exclusive.unlock();
            }
        });
    }

    /** What {@link #withBackend} runs. */
    @FunctionalInterface
    public interface BackendAction {
        void run(Backend backend) throws IOException;
    }

    /**
     * Runs {@code action} on the backend while holding a reference, as a command does, so a
     * removal meanwhile closes the backend only after it: for work beside the commands (a resize,
     * a look at the storage). Throws {@link java.nio.channels.ClosedChannelException} once the
     * namespace is being removed, and nothing runs.
     */
    public void withBackend(BackendAction action) throws IOException {
        if (!acquire()) {
            throw new ClosedChannelException();
        }
        try {
            action.run(backend);
        } finally {
            release();
        }
    }

    public UUID uuid() {
        return uuid;
    }

    /** NGUID: the UUID's 16 bytes, big-endian. */
    public byte[] nguid() {
        ByteBuffer b = ByteBuffer.allocate(16);
        b.putLong(uuid.getMostSignificantBits()).putLong(uuid.getLeastSignificantBits());
        return b.array();
    }

    public int blockSize() {
        return backend.blockSize();
    }

    public int blockShift() {
        return blockShift;
    }

    public long blocks() {
        return backend.size() >>> blockShift;
    }

    /**
     * Whether the {@code length} bytes at {@code offset} lie within the namespace now. A writer
     * asks with the writers' lock held: its range was checked when its command arrived, a shrink
     * ({@link #resize}) may have come between, and a write past the new end would grow a file
     * back past it.
     */
    boolean holds(long offset, long length) {
        return offset >= 0 && length >= 0 && offset <= backend.size() - length;
    }

    /**
     * Writers share this lock; a fused Compare and Write takes it exclusively, which makes it
     * atomic against every other writer of the namespace.
     */
    private final ReentrantReadWriteLock atomicity = new ReentrantReadWriteLock();
    private final IoStats stats = new IoStats();

    /** What every writer holds: shared among writers (the read side of the read-write lock). */
    Lock writersSharedLock() {
        return atomicity.readLock();
    }

    /**
     * For a write submitted from an event loop, which must not wait: takes the writers' shared lock
     * if no one holds or waits for the exclusive side (a read lock's tryLock would barge past a
     * waiting resize or Compare and Write, and steady writes would starve it) and the {@code
     * length} bytes at {@code offset} still lie within the namespace. False, with nothing held,
     * otherwise: the I/O threads then serve the write, waiting their turn.
     */
    boolean tryWritersSharedLock(long offset, long length) {
        if (atomicity.hasQueuedThreads() || !atomicity.readLock().tryLock()) {
            return false;
        }
        if (!holds(offset, length)) { // shrunk since its range was checked: the I/O threads say so
            atomicity.readLock().unlock();
            return false;
        }
        return true;
    }

    /** What a fused Compare and Write holds: no writer runs beside it. */
    Lock compareAndWriteLock() {
        return atomicity.writeLock();
    }

    /** What its commands did, by kind: for the metrics endpoint and the SMART / Health log. */
    public IoStats stats() {
        return stats;
    }

    /** Takes a reference for a command; false once the namespace is being removed. */
    boolean acquire() {
        while (true) {
            int r = refs.get();
            if (r == 0) {
                return false;
            }
            if (refs.compareAndSet(r, r + 1)) {
                return true;
            }
        }
    }

    /** Drops a command's reference; the last one out closes the backend. */
    void release() {
        if (refs.decrementAndGet() == 0) {
            try {
                backend.close();
            } catch (IOException e) {
                System.getLogger(Namespace.class.getName()).log(System.Logger.Level.WARNING,
                        "closing " + this + ": " + e.getMessage());
            }
        }
    }

    /** Whether the backend is closed (every reference gone). */
    public boolean closed() {
        return refs.get() == 0;
    }

    /**
     * Drops the owner's reference: new commands are refused, commands in flight finish, then
     * the backend closes. Idempotent.
     */
    @Override
    public void close() {
        if (retired.compareAndSet(false, true)) {
            SharedReservations s = shared;
            if (s != null) {
                s.close();
            }
            release();
        }
    }

    private final AtomicBoolean retired = new AtomicBoolean();

    @Override
    public String toString() {
        return "ns" + nsid + "(" + backend.describe() + (readOnly ? ",ro" : "") + ")";
    }
}
