package io.nvmeof.target;

import io.netty.util.concurrent.ScheduledFuture;
import io.nvmeof.protocol.ErrorLogEntry;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.LogPage;
import io.nvmeof.protocol.Registers;
import io.nvmeof.protocol.Status;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A controller: the association of one host with one subsystem, from the admin queue's
 * Connect until the admin queue goes away, a reset, or keep-alive expiry. Registers and
 * features are changed on the admin queue's event loop; I/O queues on other loops read
 * the volatile state and install themselves under the lock.
 */
public final class Controller {
    private static final System.Logger LOG = System.getLogger(Controller.class.getName());

    private final Target target;
    private final Subsystem subsystem;
    private final int cntlid;
    private final String hostNqn;
    private final UUID hostId;
    private volatile long katoMillis;
    private final QueuePair[] ioQueues;
    /** The Copy bytes this controller's queues have running ({@link Settings#MAX_COPY_IN_FLIGHT}). */
    final CopyBudget copies = new CopyBudget();
    private volatile QueuePair admin;
    private volatile int cc;
    private volatile int csts;
    private volatile boolean destroyed;
    /** Counts toward its host's cap: its host needed no authentication or authenticated the admin queue (guarded by the subsystem). */
    boolean admitted;
    /** Number of I/O queues granted by Set Features; until then, the target's maximum. */
    private volatile int grantedIoQueues;
    /** When the keep-alive check last saw traffic (or the controller began). */
    private volatile long lastActivity = System.nanoTime();
    /**
     * Set by every command, cleared by the keep-alive check (nvmet's traffic based keep alive,
     * {@code reset_tbkas}): a plain store per command on whatever loop, no clock read, no fence.
     */
    @SuppressWarnings("unused")
    private boolean traffic;
    private static final VarHandle TRAFFIC;

    static {
        try {
            TRAFFIC = MethodHandles.lookup().findVarHandle(Controller.class, "traffic", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    private volatile ScheduledFuture<?> keepAliveCheck;
    /** Outstanding Asynchronous Event Requests (admin queue loop only). */
    final ArrayDeque<Request> asyncEvents = new ArrayDeque<>();
    /** Events that found no outstanding request yet, as CQE DW0 values (admin queue loop only). */
    private final ArrayDeque<Integer> pendingEvents = new ArrayDeque<>();
    /** Asynchronous Event Configuration (Set Features 0Bh). */
    volatile int asyncEventConfig;
    /** NSIDs changed since the host last read the Changed Namespace List (guarded by this). */
    private final TreeSet<Integer> changedNamespaces = new TreeSet<>(Integer::compareUnsigned);
    private boolean changedOverflow;
    /**
     * The kinds of event sent whose log page the host has not read yet, one bit each ({@code
     * AEN_*}): the next event of a masked kind waits (Base 2.0, 5.2), as nvmet's {@code aen_masked}
     * (guarded by this).
     */
    private int aenMasked;
    private static final int AEN_NAMESPACE = 1;
    private static final int AEN_ANA = 1 << 1;
    private static final int AEN_RESERVATION = 1 << 2;
    private static final int AEN_DISCOVERY = 1 << 3;

    /** AEC bit 8: namespace attribute notices; bit 31: discovery log page change (Base 2.0, Figure 326). */
    static final int AEC_NAMESPACE_ATTRIBUTE = 1 << 8;
    static final int AEC_DISCOVERY_LOG_CHANGE = 1 << 31;
    /** AEC and OAES bit 11: ANA change notices. */
    static final int AEC_ANA_CHANGE = 1 << 11;
    /** Event DW0: type 2 (notice), information, log page (Base 2.0, Figure 146). */
    static final int EVENT_NAMESPACE_CHANGED = 2 | 0x00 << 8 | 0x04 << 16;
    static final int EVENT_DISCOVERY_CHANGED = 2 | 0xf0 << 8 | 0x70 << 16;
    static final int EVENT_ANA_CHANGED = 2 | 0x03 << 8 | 0x0c << 16;
    /** Event type 6 (I/O command specific status), information 0: Reservation Log Page Available. */
    static final int EVENT_RESERVATION_LOG = 6 | 0x00 << 8 | LogPage.RESERVATION_NOTIFICATION << 16;
    /** Reservation notices kept for the host before the oldest are lost (nvmet keeps as many). */
    static final int RESERVATION_LOG_ENTRIES = 64;

    /** Reservation notices not yet read, oldest first: {count, nsid << 8 | type} (guarded by this). */
    private final ArrayDeque<long[]> reservationLog = new ArrayDeque<>();
    /** The Log Page Count of the newest notice: 1, 2, ..., never 0 (guarded by this). */
    private long reservationLogCount;
    /** Reservation Notification Mask per NSID (Set Features 82h); absent: 0, every notice (guarded by this). */
    private final Map<Integer, Integer> reservationMasks = new HashMap<>();

    Controller(Target target, Subsystem subsystem, int cntlid, String hostNqn, UUID hostId, long katoMillis) {
        this.target = target;
        this.subsystem = subsystem;
        this.cntlid = cntlid;
        this.hostNqn = hostNqn;
        this.hostId = hostId;
        this.katoMillis = katoMillis;
        this.ioQueues = new QueuePair[target.tuning().maxIoQueues() + 1];
        this.grantedIoQueues = target.tuning().maxIoQueues();
    }

    /** Its queues now, the admin queue first (one connection each). */
    /** Its queues (connections) now: the admin queue and the I/O queues. */
    public int queueCount() {
        return queues().size();
    }

    /** Commands in flight over all its queues now. */
    public int commandsInFlight() {
        int n = 0;
        for (QueuePair q : queues()) {
            n += q.inFlight();
        }
        return n;
    }

    List<QueuePair> queues() {
        List<QueuePair> l = new ArrayList<>();
        QueuePair a = admin;
        if (a != null) {
            l.add(a);
        }
        for (QueuePair q : ioQueues) {
            if (q != null) {
                l.add(q);
            }
        }
        return l;
    }

    public int cntlid() {
        return cntlid;
    }

    /** A discovery controller: admin queue only, Identify, the discovery log, Keep Alive. */
    public boolean isDiscovery() {
        return subsystem.isDiscovery();
    }

    /** The admin command set of this controller: the discovery controller's or an I/O controller's. */
    CommandSet adminCommands() {
        return isDiscovery() ? DiscoveryCommands.SET : AdminCommands.SET;
    }

    /** The asynchronous events this controller can report (Asynchronous Event Configuration bits). */
    int supportedAsyncEvents() {
        return isDiscovery() ? AEC_DISCOVERY_LOG_CHANGE : AEC_NAMESPACE_ATTRIBUTE | AEC_ANA_CHANGE;
    }

    public Subsystem subsystem() {
        return subsystem;
    }

    public Target target() {
        return target;
    }

    public String hostNqn() {
        return hostNqn;
    }

    public UUID hostId() {
        return hostId;
    }

    public long katoMillis() {
        return katoMillis;
    }

    /** Arbitration, power management, error recovery (admin loop only; Base 2.0, 5.27.1). */
    int arbitration;
    int powerManagement;
    int errorRecovery;
    /** Temperature thresholds of the composite sensor in kelvin: [0] over, [1] under. */
    final int[] temperatureThreshold = {343, 0};

    /** Error Information log: the newest {@link #ERROR_LOG_ENTRIES} failed commands (Base 2.0, 5.16.1.2). */
    static final int ERROR_LOG_ENTRIES = 16;
    private final ByteBuffer[] errorLog = new ByteBuffer[ERROR_LOG_ENTRIES];
    private long errorCount;

    /** Records a failed command (any queue's thread). */
    void recordError(int sqid, Request r, Status status) {
        ByteBuffer e = Flyweight.allocate(ErrorLogEntry.SIZE);
        ErrorLogEntry entry = new ErrorLogEntry().wrap(e, 0);
        // the LBA for I/O commands; the parameter error location is not specific
        entry.command(sqid, r.cid(), status.field(), sqid > 0 ? r.sqe.slba() : 0, r.sqe.nsid(),
                r.queue().port().trtypeCode());
        synchronized (this) {
            errorCount++;
            entry.errorCount(errorCount);
            errorLog[(int) (errorCount % ERROR_LOG_ENTRIES)] = e;
        }
    }

    /** The error log, newest first; entries never used are zero. */
    synchronized ByteBuffer errorLogPage() {
        ByteBuffer page = Flyweight.allocate(LogPage.ERROR_ENTRY_SIZE
                * ERROR_LOG_ENTRIES);
        for (int i = 0; i < ERROR_LOG_ENTRIES && errorCount - i > 0; i++) {
            ByteBuffer e = errorLog[(int) ((errorCount - i) % ERROR_LOG_ENTRIES)];
            page.put(i * LogPage.ERROR_ENTRY_SIZE, e, 0, e.capacity());
        }
        return page;
    }

    synchronized long errorCount() {
        return errorCount;
    }

    /** Set Features Keep Alive Timer: a new KATO, checked from now on (admin loop). */
    void keepAlive(long millis) {
        katoMillis = millis;
        if (keepAliveCheck != null) {
            keepAliveCheck.cancel(false);
            keepAliveCheck = null;
        }
        touch();
        if (admin != null) {
            attachAdmin(admin);
        }
    }

    public int cc() {
        return cc;
    }

    public int csts() {
        return csts;
    }

    /** CC.EN = 1 and CSTS.RDY = 1: commands other than Fabrics may run. */
    public boolean ready() {
        return Registers.cstsReady(csts) && !destroyed;
    }

    /** The admin queue, once connected. */
    QueuePair adminQueue() {
        return admin;
    }

    /** Torn down (keep-alive expiry, a revoked host, a lost admin queue): its connections are closing. */
    boolean destroyed() {
        return destroyed;
    }

    int grantedIoQueues() {
        return grantedIoQueues;
    }

    void grantIoQueues(int n) {
        grantedIoQueues = n;
    }

    /** Any command counts as host activity for keep-alive (traffic based keep alive). */
    void touch() {
        if (!(boolean) TRAFFIC.getOpaque(this)) { // read first: the line stays shared while traffic flows
            TRAFFIC.setOpaque(this, true);
        }
    }

    void attachAdmin(QueuePair q) {
        admin = q;
        if (katoMillis > 0) {
            // Check at half the timeout so expiry is noticed within KATO plus a little.
            long period = Math.max(100, katoMillis / 2);
            keepAliveCheck = q.transport().eventLoop().scheduleAtFixedRate(this::checkKeepAlive, period, period,
                    TimeUnit.MILLISECONDS);
        }
    }

    private void checkKeepAlive() {
        if (destroyed) {
            ScheduledFuture<?> f = keepAliveCheck;
            if (f != null) {
                f.cancel(false);
            }
            return;
        }
        long now = System.nanoTime();
        if ((boolean) TRAFFIC.getOpaque(this)) {
            TRAFFIC.setOpaque(this, false);
            lastActivity = now;
        }
        long idle = TimeUnit.NANOSECONDS.toMillis(now - lastActivity);
        if (idle > katoMillis + target.tuning().keepAliveGraceMillis()) {
            LOG.log(System.Logger.Level.WARNING, "controller {0} of {1} for host {2}: keep alive timer expired after {3} ms",
                    cntlid, subsystem.nqn(), hostNqn, idle);
            target.counters().keepAliveExpiries.increment();
            destroy();
        }
    }

    /** A namespace was attached, detached or resized: log it, and tell the host if it asked. */
    void namespaceChanged(int nsid) {
        boolean send;
        synchronized (this) {
            if (changedNamespaces.size() >= 1024) {
                changedOverflow = true;
            } else {
                changedNamespaces.add(nsid);
            }
            send = aenToSend(AEN_NAMESPACE, (asyncEventConfig & AEC_NAMESPACE_ATTRIBUTE) != 0);
        }
        if (send) {
            event(EVENT_NAMESPACE_CHANGED);
        }
    }

    /**
     * Whether an event of kind {@code bit} goes to the host now: it is {@code enabled} (by the
     * host's Asynchronous Event Configuration), the controller lives, and none of its kind is
     * unread; if so, its kind is masked until the host reads the log page ({@link #aenLogRead}).
     * As nvmet's {@code nvmet_aen_bit_disabled}. With the lock held.
     */
    private boolean aenToSend(int bit, boolean enabled) {
        if (!enabled || destroyed || (aenMasked & bit) != 0) {
            return false;
        }
        aenMasked |= bit;
        return true;
    }

    /**
     * The host read the log page of kind {@code bit}: unless it asked to retain it, the next event
     * of the kind may be sent (nvmet's {@code nvmet_clear_aen_bit}).
     */
    private synchronized void aenLogRead(int bit, boolean retain) {
        if (!retain) {
            aenMasked &= ~bit;
        }
    }

    /** An ANA state this controller's host sees changed: tell it if it asked (and read the last one). */
    void anaChanged() {
        boolean send;
        synchronized (this) {
            send = aenToSend(AEN_ANA, !isDiscovery() && (asyncEventConfig & AEC_ANA_CHANGE) != 0);
        }
        if (send) {
            event(EVENT_ANA_CHANGED);
        }
    }

    /** The host read the ANA log: the next change may be announced. */
    void anaLogRead(boolean retain) {
        aenLogRead(AEN_ANA, retain);
    }

    /**
     * A reservation notice of {@code type} (1 registration preempted, 2 reservation released, 3
     * reservation preempted) for namespace {@code nsid}: logged unless the host masked it, and
     * announced unless an announcement is unread. Past {@link #RESERVATION_LOG_ENTRIES} unread the
     * notice is lost, but counted: the Log Page Count skips it, as the specification asks.
     */
    void reservationNotice(int nsid, int type) {
        boolean send;
        synchronized (this) {
            if ((reservationMasks.getOrDefault(nsid, 0) & 1 << type) != 0 || destroyed) {
                return;
            }
            reservationLogCount = reservationLogCount == -1L ? 1 : reservationLogCount + 1;
            if (reservationLog.size() < RESERVATION_LOG_ENTRIES) {
                reservationLog.addLast(new long[] {reservationLogCount, (long) (nsid & 0xffffffffL) << 8 | type});
            }
            send = aenToSend(AEN_RESERVATION, true); // no AEC bit: always enabled
        }
        if (send) {
            event(EVENT_RESERVATION_LOG);
        }
    }

    /**
     * The Reservation Notification log page: the oldest unread notice (Log Page Count, type, the
     * number of others still unread, NSID), or an empty entry. Read without RAE, it is consumed
     * and the next notice may be announced.
     */
    synchronized ByteBuffer reservationNotificationLog(boolean retain) {
        ByteBuffer page = Flyweight.allocate(LogPage.RESERVATION_NOTIFICATION_SIZE);
        long[] e = retain ? reservationLog.peekFirst() : reservationLog.pollFirst();
        if (e != null) {
            page.putLong(0, e[0]);
            page.put(8, (byte) (e[1] & 0xff));
            page.put(9, (byte) Math.min(255, reservationLog.size() - (retain ? 1 : 0)));
            page.putInt(12, (int) (e[1] >>> 8));
        }
        aenLogRead(AEN_RESERVATION, retain);
        return page;
    }

    /** Reservation Notification Mask of namespace {@code nsid}. */
    synchronized int reservationMask(int nsid) {
        return reservationMasks.getOrDefault(nsid, 0);
    }

    synchronized void reservationMask(int nsid, int mask) {
        reservationMasks.put(nsid, mask);
    }

    /** The discovery log changed: tell a discovery controller's host if it asked. */
    void discoveryChanged() {
        boolean send;
        synchronized (this) {
            send = aenToSend(AEN_DISCOVERY, isDiscovery() && (asyncEventConfig & AEC_DISCOVERY_LOG_CHANGE) != 0);
        }
        if (send) {
            event(EVENT_DISCOVERY_CHANGED);
        }
    }

    /**
     * The Changed Namespace List log (Base 2.0, 5.16.1.5): up to 1024 NSIDs, or FFFFFFFFh first
     * if more changed. Reading without RAE clears it and unmasks the event.
     */
    synchronized ByteBuffer changedNamespaceLog(boolean retain) {
        ByteBuffer page = Flyweight.allocate(LogPage.CHANGED_NAMESPACE_LIST_SIZE);
        if (changedOverflow) {
            page.putInt(0, 0xffffffff);
        } else {
            int at = 0;
            for (int nsid : changedNamespaces) {
                page.putInt(at, nsid);
                at += 4;
            }
        }
        if (!retain) {
            changedNamespaces.clear();
            changedOverflow = false;
        }
        aenLogRead(AEN_NAMESPACE, retain);
        return page;
    }

    /** The host read the discovery log: the next change may be announced. */
    void discoveryLogRead(boolean retain) {
        aenLogRead(AEN_DISCOVERY, retain);
    }

    /** Delivers an event on the admin queue's loop: to an outstanding AER, or kept for the next one. */
    void event(int dw0) {
        QueuePair q = admin;
        if (q == null) {
            return;
        }
        try {
            q.transport().eventLoop().execute(() -> {
                Request r = asyncEvents.pollFirst();
                if (r == null) {
                    if (pendingEvents.size() < 16) {
                        pendingEvents.add(dw0);
                    }
                    return;
                }
                r.result = dw0 & 0xffffffffL;
                q.complete(r, Status.SUCCESS);
            });
        } catch (RejectedExecutionException e) {
            // shutting down
        }
    }

    /** An Asynchronous Event Request arrived (admin loop): answer a pending event or hold it. */
    boolean asyncEventRequest(Request r) {
        Integer dw0 = pendingEvents.pollFirst();
        if (dw0 != null) {
            r.result = dw0 & 0xffffffffL;
            r.queue.complete(r, Status.SUCCESS);
            return true;
        }
        if (asyncEvents.size() >= AdminCommands.AER_LIMIT) {
            return false;
        }
        asyncEvents.add(r);
        return true;
    }

    /** The TLS PSK identity the admin queue's secure channel was opened with, or null (in the clear). */
    private volatile String tlsIdentity;

    void secureChannel(String identity) {
        tlsIdentity = identity;
    }

    /** The TLS PSK identity of the admin queue's connection, null if it came in the clear: every I/O queue must match. */
    String tlsIdentity() {
        return tlsIdentity;
    }

    /** The port the host's admin queue came through. */
    Port port() {
        QueuePair a = admin;
        return a != null ? a.port() : null;
    }

    /** Whether any I/O queue is connected now. */
    synchronized boolean hasIoQueues() {
        for (QueuePair q : ioQueues) {
            if (q != null) {
                return true;
            }
        }
        return false;
    }

    /** Installs an I/O queue; false if the qid is out of range or taken. */
    synchronized boolean installIoQueue(int qid, QueuePair q) {
        if (destroyed || qid < 1 || qid > grantedIoQueues || ioQueues[qid] != null) {
            return false;
        }
        ioQueues[qid] = q;
        return true;
    }

    /** Writes CC: enable, disable (reset) and shutdown notifications (Base 2.0, 3.6). */
    synchronized void writeCc(int value) {
        int old = cc;
        cc = value;
        if (Registers.ccEnabled(value) && !Registers.ccEnabled(old)) {
            boolean ok = Registers.ccIosqesLog2(value) == 6 && Registers.ccIocqesLog2(value) == 4
                    && Registers.ccMps(value) == 0 && Registers.ccCss(value) == 0;
            csts = ok ? Registers.CSTS_RDY : Registers.CSTS_CFS;
        } else if (!Registers.ccEnabled(value) && Registers.ccEnabled(old)) {
            // Controller reset: I/O queues go away, the admin queue stays.
            closeIoQueues();
            csts = 0;
        }
        if (Registers.ccShn(value) != 0 && Registers.ccShn(old) == 0) {
            closeIoQueues();
            setShutdownStatus(Registers.CSTS_SHST_OCCURRING);
            // Shutdown processing: the volatile write cache goes to stable storage first.
            try {
                target.threads().io().execute(() -> {
                    for (Namespace ns : subsystem.namespaces().values()) {
                        try {
                            if (!ns.readOnly()) {
                                ns.backend().flush();
                            }
                        } catch (IOException e) {
                            LOG.log(System.Logger.Level.WARNING, "flush of " + ns + " at shutdown failed: " + e);
                        }
                    }
                    setShutdownStatus(Registers.CSTS_SHST_COMPLETE);
                });
            } catch (RejectedExecutionException e) {
                setShutdownStatus(Registers.CSTS_SHST_COMPLETE);
            }
        }
    }

    private synchronized void setShutdownStatus(int shst) {
        csts = (csts & ~Registers.CSTS_SHST_MASK) | shst;
    }

    /**
     * Disconnects every I/O queue, each on its own loop, and frees their qids at once: a host that
     * sees the reset done (CSTS.RDY clear) may connect those qids again before the old connections
     * have finished closing ({@link #queueClosed} then leaves the new queue alone).
     */
    private void closeIoQueues() {
        QueuePair[] copy;
        synchronized (this) {
            copy = ioQueues.clone();
            Arrays.fill(ioQueues, null);
        }
        for (QueuePair q : copy) {
            if (q != null) {
                onLoop(q);
            }
        }
    }

    /** Disconnects {@code q} on its own event loop; after target shutdown there is nothing left to do. */
    private static void onLoop(QueuePair q) {
        try {
            q.transport().eventLoop().execute(q::disconnect);
        } catch (RejectedExecutionException e) {
            // the event loops are gone, and the connections with them
        }
    }

    synchronized void queueClosed(QueuePair q) {
        if (q == admin) {
            admin = null;
            destroy();
        } else if (q.qid() > 0 && q.qid() < ioQueues.length && ioQueues[q.qid()] == q) {
            ioQueues[q.qid()] = null;
        }
    }

    /** Tears the association down: every queue's connection ends and the cntlid is freed. */
    void destroy() {
        QueuePair adminQueue;
        synchronized (this) {
            if (destroyed) {
                return;
            }
            destroyed = true;
            adminQueue = admin;
        }
        if (keepAliveCheck != null) {
            keepAliveCheck.cancel(false);
        }
        closeIoQueues();
        if (adminQueue != null) {
            onLoop(adminQueue);
        }
        subsystem.removeController(this);
    }

    @Override
    public String toString() {
        return "controller " + cntlid + " of " + subsystem.nqn() + " for " + hostNqn;
    }
}
