package io.nvmeof.target;

import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.ConnectData;
import io.nvmeof.protocol.FabricsCommandType;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.SubmissionQueueEntry;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A submission/completion queue pair of a controller as the core sees it, whatever the
 * transport: request pool, SQ head, the command pipeline (parse SGL, validate, fetch data,
 * execute, complete). Confined to its transport's event loop. Transports feed it through
 * {@link #acquire()} + {@link #start(Request)} and report a dead connection through
 * {@link #closed()}.
 */
final class QueuePair {
    private static final System.Logger LOG = System.getLogger(QueuePair.class.getName());

    private final Target target;
    private final QueueTransport transport;
    private final Port port;
    private final ArrayDeque<Request> free = new ArrayDeque<>();
    private final List<Request> all = new ArrayList<>();
    /**
     * Before Connect one command at a time, the Connect itself (as nvmet); afterwards the
     * queue size. A request is freed as its response is queued, and the host reuses a slot
     * only after it saw that response, so a well-behaved host never exceeds it.
     */
    private int limit = 1;
    /** Requests in flight: written by the queue's event loop only, read (opaque) by a metrics scrape. */
    @SuppressWarnings("unused")
    private int inFlight;
    private static final VarHandle IN_FLIGHT;

    static {
        try {
            IN_FLIGHT = MethodHandles.lookup().findVarHandle(QueuePair.class, "inFlight", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private int qid = -1;
    private int size;
    private boolean sqFlowControlDisabled;
    private int sqhd;
    private Controller controller;
    private boolean closed;
    /** {@link #closed} for the I/O executor: a command queued there when the connection ended never starts. */
    private volatile boolean ended;
    /** Fused Compare and Write pairing on this queue. */
    private final FusedCommands fused = new FusedCommands(this);
    /** In-band authentication of this queue: set at Connect when the host must authenticate, or when it starts to. */
    private Authentication auth;
    /**
     * Connected and, if the host must authenticate, authenticated: until then the queue is on
     * the connect deadline, counts against its peer address's cap of pending connections
     * ({@link Target#admitPending}) and does not keep its controller alive.
     */
    private boolean admitted;
    /** The peer address this queue is counted against while pending, or null once it is not (or never was). */
    private InetAddress pendingFrom;
    /** Its place in the target's connection counts, or null for a queue not counted (one on an embedded channel). */
    private Admission.ConnectionSlot slot;
    /**
     * Bytes of write data this queue has asked the host for (or is about to) and not yet
     * received, and the writes waiting for room in that window ({@link Settings#MAX_QUEUE_WRITE_DATA}).
     */
    private long h2cPending;
    private final ArrayDeque<Request> h2cWaiting = new ArrayDeque<>();

    public QueuePair(Target target, QueueTransport transport, Port port) {
        this.target = target;
        this.transport = transport;
        this.port = port;
    }

    /**
     * Counts this new connection against {@code peer}'s pending connections, closing the oldest of
     * them when that address has {@link Settings#MAX_PENDING_PER_ADDRESS} already ({@link
     * Target#admitPending}).
     */
    public void admitFrom(InetAddress peer) {
        pendingFrom = peer;
        target.admission().admitPending(peer, this);
    }

    /**
     * Newer connections from its address took this pending one's place ({@link Target#admitPending}):
     * its connection ends. Any thread.
     */
    void displaced() {
        transport.abort();
    }

    /** The connection's place in the target's counts, which its Connect may move ({@link #toDiscovery()}). */
    void slot(Admission.ConnectionSlot slot) {
        this.slot = slot;
    }

    /**
     * The Connect named the discovery subsystem: the connection counts against {@link
     * Settings#MAX_DISCOVERY_CONNECTIONS} from now on; false when they are all taken.
     */
    boolean toDiscovery() {
        return slot == null || slot.toDiscovery();
    }

    /** Connected and authenticated (or not asked to authenticate): no longer on the connect deadline. */
    public boolean admitted() {
        return admitted;
    }

    /** The queue is connected and authenticated: off the deadline, out of its address's pending count. */
    void admit() {
        if (admitted) {
            return;
        }
        admitted = true;
        notPending();
    }

    private void notPending() {
        if (pendingFrom != null) {
            target.admission().pendingEnded(pendingFrom, this);
            pendingFrom = null;
        }
    }

    /** The port the host connected through. */
    public Port port() {
        return port;
    }

    public Target target() {
        return target;
    }

    public QueueTransport transport() {
        return transport;
    }

    public int qid() {
        return qid;
    }

    public Controller controller() {
        return controller;
    }

    public boolean isClosed() {
        return closed;
    }

    /** Whether the connection has ended, from any thread. */
    boolean ended() {
        return ended;
    }

    /** A free request, or null if the host has more commands in flight than its queue size allows. */
    public Request acquire() {
        Request r = free.pollFirst();
        if (r == null) {
            if (all.size() >= limit) {
                return null;
            }
            r = new Request(this, all.size());
            all.add(r);
        }
        r.reset();
        IN_FLIGHT.setOpaque(this, (int) IN_FLIGHT.getOpaque(this) + 1);
        return r;
    }

    /** Commands the host has in flight on this queue now. */
    public int inFlight() {
        return (int) IN_FLIGHT.getOpaque(this);
    }

    /** The request with this tag if it is in flight, else null. */
    public Request byTag(int tag) {
        if (tag < 0 || tag >= all.size()) {
            return null;
        }
        Request r = all.get(tag);
        return r.state == Request.State.FREE ? null : r;
    }

    /** Returns a request to the pool once its response is on its way. */
    public void release(Request r) {
        if (r.state == Request.State.FREE) {
            throw new IllegalStateException("request " + r.tag + " released twice");
        }
        r.releaseData();
        r.state = Request.State.FREE;
        free.addFirst(r);
        IN_FLIGHT.setOpaque(this, (int) IN_FLIGHT.getOpaque(this) - 1);
    }

    /**
     * Starts a command whose SQE (and in-capsule data, if any, in {@link Request#data} with
     * {@link Request#received} set) the transport has loaded.
     */
    public void start(Request r) {
        start(r, System.nanoTime());
    }

    /**
     * {@link #start(Request)} of a command that arrived at {@code arrivedNanos} (System.nanoTime):
     * its latency counts from then. A transport that reads commands in batches stamps each batch
     * once and passes that, rather than reading the clock per command.
     */
    public void start(Request r, long arrivedNanos) {
        r.startNanos = arrivedNanos;
        if (controller != null && controller.destroyed()) {
            // The controller is gone and this connection is closing with it: no answer, as if the
            // connection had ended already. Any status would reach the host as the command's final
            // one (nvmet's would be Command Sequence Error with DNR), where a lost connection lets
            // it retry the command on the next association.
            release(r);
            return;
        }
        SubmissionQueueEntry sqe = r.sqe;
        // Fused commands: a first must be followed at once by its second (NVMe Base 2.0, 3.4.2).
        int fuse = sqe.fuse();
        Status early = fused.arrived(r);
        if (early != null) {
            complete(r, early);
            return;
        }
        // The order of checks follows the kernel target: state, opcode, data pointer, fields.
        boolean fabrics = sqe.opcode() == AdminOpcode.FABRICS.code;
        Status s = r.dataCorrupt ? Status.TRANSIENT_TRANSPORT_ERROR
                : !fabrics && sqe.psdt() != SubmissionQueueEntry.PSDT_SGL_MPTR_CONTIGUOUS
                ? Status.INVALID_FIELD // fabrics carry data by SGL only; checked first, as nvmet_req_init does
                : checkState(sqe);
        r.handler = null;
        if (s == null) {
            // parsed once: the handler chosen here is what runs the command
            r.handler = fabrics ? FabricsCommands.handler(sqe.fctype(), qid)
                    : (qid == 0 ? controller.adminCommands() : IoCommands.SET).handler(sqe.opcode());
            if (r.handler == null) {
                s = Status.INVALID_OPCODE;
            }
        }
        if (s == null) {
            s = parseDataPointer(r, sqe);
        }
        if (s == null && fabrics && sqe.fctype() == FabricsCommandType.CONNECT.code && r.length != ConnectData.SIZE) {
            // before a byte is allocated for it: Connect data is 1024 bytes, whatever the SGL claims
            s = Status.DATA_SGL_LENGTH_INVALID;
        }
        if (s == null && qid == 0 && !fabrics && sqe.opcode() == AdminOpcode.DISCOVERY_INFO_MGMT.code
                && controller.subsystem().isDiscovery()) {
            // nor for a registration this target does not take, or larger than any it may
            s = DiscoveryCommands.admitInformation(r, controller);
        }
        if (s == null && fabrics && sqe.fctype() == FabricsCommandType.AUTHENTICATION_SEND.code
                && r.length > Authentication.MAX_MESSAGE) {
            // nor for a message larger than any DH-HMAC-CHAP message can be: no R2T, no buffer
            s = Status.DATA_SGL_LENGTH_INVALID;
        }
        if (s == null) {
            s = fused.check(r, qid);
        }
        if (s == null && qid > 0 && !fabrics) {
            s = IoCommands.prepare(r, controller.subsystem());
        }
        if (s == null) {
            s = fused.checkPair(r);
        }
        if (s != null) {
            if (fuse != SubmissionQueueEntry.FUSE_NORMAL) {
                fused.rejected(r, s);
            }
            complete(r, s);
            return;
        }
        if (fuse != SubmissionQueueEntry.FUSE_NORMAL) {
            fused.accepted(r);
        }
        if (admitted) {
            // keep-alive traffic: a command accepted on an admitted queue, never one refused
            controller.touch();
        }
        if (target.faults().intercept(this, r)) {
            return; // delayed, held or failed by an injected fault
        }
        if (qid > 0 && !fabrics && throttledAtStart(r)) {
            return; // over a limit: it waits its turn here, before any data moves, holding no buffer
        }
        proceed(r);
    }

    /**
     * Charges the NVM commands that {@link Qos} counts before their data moves (a write asks for
     * its data only once its turn comes): true when {@code r} waits. Dataset Management and Copy
     * are charged once their ranges are in ({@link IoCommands#execute}, {@link CopyCommand#execute}).
     */
    private boolean throttledAtStart(Request r) {
        int op = r.sqe.opcode();
        if (op == NvmOpcode.READ.code || op == NvmOpcode.COMPARE.code) {
            return throttled(r, r.length, 0);
        }
        if (op == NvmOpcode.WRITE.code) {
            return throttled(r, 0, r.length);
        }
        if (op == NvmOpcode.WRITE_ZEROES.code) {
            return throttled(r, 0, (long) r.sqe.blockCount() << r.namespace.blockShift());
        }
        return op == NvmOpcode.FLUSH.code && throttled(r, 0, 0); // of every namespace: the host's limits alone
    }

    /**
     * Charges {@code r}, one I/O that reads {@code readBytes} and writes {@code writeBytes}, to its
     * namespace's and its host's limits: true when it must wait, after which {@link #qosResume}
     * goes on with it. Charged in pieces ({@link Qos#piece}) where it moves more than a piece.
     */
    boolean throttled(Request r, long readBytes, long writeBytes) {
        Qos ns = r.namespace != null ? r.namespace.qos() : null;
        Qos host = target.hostQos(controller.hostNqn());
        if (ns == null && host == null) {
            return false;
        }
        r.qosIos = 1;
        r.qosReadLeft = readBytes;
        r.qosWriteLeft = writeBytes;
        return chargeNext(r, ns, host);
    }

    /**
     * Charges {@code r}'s next pieces until one must wait (true: scheduled to resume then) or none
     * is left (false). A piece is charged only once the one before is covered, so a large command
     * holds no more than a piece of the limits' debt at a time and never goes over at the bound for
     * more than that.
     */
    private boolean chargeNext(Request r, Qos ns, Qos host) {
        long piece = Math.min(ns != null ? ns.piece() : Long.MAX_VALUE, host != null ? host.piece() : Long.MAX_VALUE);
        long now = System.nanoTime();
        while (true) {
            long read = Math.min(piece, r.qosReadLeft);
            long write = Math.min(piece, r.qosWriteLeft);
            long wait = ns != null ? ns.admit(r.qosIos, read, write, now) : 0;
            if (host != null) {
                wait = Math.max(wait, host.admit(r.qosIos, read, write, now));
            }
            r.qosIos = 0;
            r.qosReadLeft -= read;
            r.qosWriteLeft -= write;
            if (wait > 0) {
                transport.eventLoop().schedule(r.qosResume, wait, TimeUnit.NANOSECONDS);
                return true;
            }
            if (r.qosReadLeft == 0 && r.qosWriteLeft == 0) {
                return false;
            }
        }
    }

    /**
     * A command's QoS wait is over: its next piece is charged, or on with it (from its execution
     * where it was charged there), unless its connection ended meanwhile.
     */
    void qosResume(Request r) {
        if (closed) {
            return;
        }
        if (r.qosReadLeft > 0 || r.qosWriteLeft > 0) {
            Qos ns = r.namespace != null ? r.namespace.qos() : null;
            Qos host = target.hostQos(controller.hostNqn());
            if ((ns != null || host != null) && chargeNext(r, ns, host)) {
                return;
            }
            r.qosReadLeft = 0; // the limits went away meanwhile
            r.qosWriteLeft = 0;
        }
        if (r.state == Request.State.EXECUTING) {
            r.handler.execute().run(r, controller);
        } else {
            proceed(r);
        }
    }

    /** A waiting Copy's bytes are reserved in its controller's budget: on with it, unless it ended meanwhile. */
    void copyReady(Request r) {
        if (closed || r.copyHeld == 0 || r.state != Request.State.EXECUTING) {
            return; // its connection ended, or it did: releaseData() gave the bytes back
        }
        r.handler.execute().run(r, controller);
    }

    /** Runs a validated command: asks for its data first if it is a write still missing some. */
    void proceed(Request r) {
        if (closed) {
            return; // a fault held it while the connection ended: closed() freed what it had
        }
        if (r.direction == Request.XFER_H2C && r.length > 0 && r.received < r.length) {
            if (h2cPending > 0 && h2cPending + r.length > target.tuning().maxQueueWriteData()) {
                // the host owes this queue enough data already: wait, holding no buffer
                r.resumeState = r.state;
                r.state = Request.State.NEED_BUFFER;
                h2cWaiting.addLast(r);
                return;
            }
            askForData(r);
            return;
        }
        execute(r);
    }

    /** Counts a write's missing data into the queue's window, reserves its buffer, asks for the data. */
    private void askForData(Request r) {
        r.h2cWindow = r.length - r.received;
        h2cPending += r.h2cWindow;
        if (r.data == null && !reserveData(r, r.length)) {
            return; // waits for a buffer; bufferReady() fetches the data then
        }
        fetchData(r);
    }

    /** {@code r} no longer waits for host data: its share of the window goes to the writes waiting. */
    private void leaveWindow(Request r) {
        int owed = r.h2cWindow;
        r.h2cWindow = 0;
        windowFreed(owed);
    }

    private void windowFreed(int bytes) {
        if (bytes == 0) {
            return;
        }
        h2cPending -= bytes;
        Request w;
        while (!closed && (w = h2cWaiting.peekFirst()) != null
                && (h2cPending == 0 || h2cPending + w.length <= target.tuning().maxQueueWriteData())) {
            h2cWaiting.pollFirst();
            w.state = w.resumeState;
            askForData(w);
        }
    }

    /** Allocates a write's buffer (its budget reserved) and asks the host for the data. */
    private void fetchData(Request r) {
        if (r.data == null) {
            r.data = transport.allocateData(r, r.length);
            if (r.data == null) {
                complete(r, Status.COMMAND_INTERRUPTED);
                return;
            }
        }
        r.state = Request.State.TRANSFERRING_H2C;
        transport.fetchData(r);
    }

    /**
     * Reserves {@code bytes} of the target's buffer budget for {@code r}; false when it must
     * wait (NEED_BUFFER) until {@link #bufferReady} resumes it where it stopped.
     */
    boolean reserveData(Request r, int bytes) {
        if (target.bufferBudget().reserve(r, bytes)) {
            return true;
        }
        r.resumeState = r.state;
        r.state = Request.State.NEED_BUFFER;
        return false;
    }

    /** A waiting request's buffer is reserved: on with it, on this queue's loop. */
    void bufferReady(Request r) {
        if (closed || r.state != Request.State.NEED_BUFFER) {
            target.bufferBudget().release(r);
            return;
        }
        r.state = r.resumeState;
        if (r.state == Request.State.EXECUTING) {
            r.handler.execute().run(r, controller);
        } else {
            fetchData(r);
        }
    }

    /** The transport has all host-to-controller data of {@code r}. */
    public void dataReceived(Request r) {
        leaveWindow(r);
        if (r.failWith != null) {
            complete(r, r.failWith);
            return;
        }
        if (r.dataCorrupt) {
            complete(r, Status.TRANSIENT_TRANSPORT_ERROR);
            return;
        }
        execute(r);
    }

    /** Fails a command now, or once its data has arrived if the host is still sending it. */
    void abandon(Request r, Status status) {
        if (r.partner != null) {
            r.partner.partner = null;
            r.partner = null;
        }
        if (r.state == Request.State.TRANSFERRING_H2C) {
            r.failWith = status;
        } else {
            complete(r, status);
        }
    }

    /** The queue's fused Compare and Write pairing. */
    FusedCommands fused() {
        return fused;
    }

    /** Parses SGL1 into direction and length; returns an error status or null. */
    private Status parseDataPointer(Request r, SubmissionQueueEntry sqe) {
        int opcode = sqe.opcode();
        int xfer = opcode == AdminOpcode.FABRICS.code ? sqe.fctype() & 0x3 : opcode & 0x3;
        r.direction = xfer == 3 ? Request.XFER_NONE : xfer;
        if (xfer == 3) {
            return Status.INVALID_FIELD; // bidirectional transfers are not supported
        }
        if (r.direction == Request.XFER_NONE) {
            return null;
        }
        int id = sqe.sglIdentifier();
        long len = sqe.sglDataLength();
        if (len == 0 && r.received == 0) {
            // No data after all (Get/Set Features without a buffer, say): whatever the descriptor
            // type, there is nothing to move, as the kernel target reads it.
            r.direction = Request.XFER_NONE;
            return null;
        }
        if (len > target.tuning().maxTransferSize()) {
            return Status.INVALID_FIELD;
        }
        r.length = (int) len;
        if (id == Sgl.IN_CAPSULE) {
            if (r.direction != Request.XFER_H2C) {
                return Status.INVALID_FIELD;
            }
            if (sqe.sglAddress() != 0) {
                return Status.SGL_OFFSET_INVALID;
            }
            if (len > r.received) {
                return Status.DATA_SGL_LENGTH_INVALID;
            }
            return null;
        }
        if (r.received > 0) {
            return Status.INVALID_FIELD; // data in the capsule, but the SGL does not point there
        }
        if (!transport.acceptsDataDescriptor(id)) {
            return Status.SGL_DESCRIPTOR_TYPE_INVALID;
        }
        return null;
    }

    /** Commands allowed in the queue's and controller's present state (Connect first, then CC.EN). */
    private Status checkState(SubmissionQueueEntry sqe) {
        boolean fabrics = sqe.opcode() == AdminOpcode.FABRICS.code;
        if (qid < 0) {
            return fabrics && sqe.fctype() == FabricsCommandType.CONNECT.code
                    ? null : Status.COMMAND_SEQUENCE_ERROR;
        }
        if (auth != null && !auth.authenticated()) {
            // before authentication: nothing but its own two commands (as SPDK; Base 2.0, 8.13.5)
            int fctype = sqe.fctype();
            return fabrics && (fctype == FabricsCommandType.AUTHENTICATION_SEND.code
                    || fctype == FabricsCommandType.AUTHENTICATION_RECEIVE.code) ? null : Status.AUTHENTICATION_REQUIRED;
        }
        if (fabrics) {
            return null;
        }
        if (!controller.ready()) {
            return Status.COMMAND_SEQUENCE_ERROR;
        }
        return null;
    }

    private void execute(Request r) {
        if (qid > 0 && controller.destroyed()) {
            // Its controller ended (keep-alive expiry, a partition): the host may have retried the
            // command on another path, so it does not run now (a write whose data came in late, or
            // one that waited for a buffer). Without DNR: a host retries it where it can.
            complete(r, Status.ABORTED_SQ_DELETION);
            return;
        }
        if (r.preemptedAndAborted()) {
            // held here (its data arriving, or waiting for a buffer or the window) when another
            // host preempted this one with abort: it never reaches the storage
            complete(r, Status.PREEMPT_ABORTED);
            return;
        }
        r.state = Request.State.EXECUTING;
        r.handler.execute().run(r, controller);
    }

    /** Runs {@code r}'s backend call on the I/O executor (a blocking backend's). */
    void offload(Request r) {
        try {
            r.offloaded = true;
            target.threads().io().execute(r);
        } catch (RejectedExecutionException e) {
            // The backend is saturated (or the target is stopping): the host may retry.
            complete(r, Status.COMMAND_INTERRUPTED);
        }
    }

    /** A blocking backend call finished; back on the event loop. */
    void ioFinished(Request r) {
        if (dropIfClosed(r)) {
            return;
        }
        if (r.partner != null) {
            fused.finish(r);
            return;
        }
        if (r.copyCount > 0 && r.status.isSuccess() && !CopyCommand.done(r)) {
            offload(r); // a Copy's next step, behind what other commands queued there meanwhile
            return;
        }
        complete(r, r.status);
    }

    /**
     * Work handed off the event loop came back for {@code r}: if the queue closed meanwhile,
     * frees the request (and its fused partner) and returns true.
     */
    boolean dropIfClosed(Request r) {
        if (!closed) {
            return false;
        }
        for (Request x : r.partner != null ? new Request[] {r, r.partner} : new Request[] {r}) {
            x.releaseData();
            releaseNamespace(x);
            x.state = Request.State.FREE;
        }
        return true;
    }

    /** The queue's authentication, begun now if the host starts one unasked. */
    Authentication authentication(Controller c) {
        if (auth == null) {
            auth = new Authentication(this, c);
        }
        return auth;
    }

    /** Connect: the host must authenticate this queue before anything else. */
    void requireAuthentication(Controller c) {
        auth = new Authentication(this, c);
    }

    /** Completes {@code r} with {@code status}: the transport sends data (on success) and the response. */
    public void complete(Request r, Status status) {
        if (r.state == Request.State.NEED_BUFFER) {
            // ended while waiting (an abort, a controller reset): it waits no more
            h2cWaiting.remove(r);
            target.bufferBudget().cancel(r);
        }
        // the next writes are asked for after this response: a host sees the failure first
        int owed = r.h2cWindow;
        r.h2cWindow = 0;
        // A fused half that ends on its own takes the pairing state with it.
        fused.completing(r, status);
        if (!status.isSuccess() && controller != null && r.sqe.opcode() != AdminOpcode.ASYNC_EVENT_REQUEST.code) {
            controller.recordError(Math.max(qid, 0), r, status);
            controller.subsystem().errors().count(status);
        }
        if (r.stats != null) {
            // a Copy counts the bytes it copied, not its descriptors
            r.stats.completed(r.sqe.opcode(), r.copyCount > 0 ? (int) r.copyBytes : r.length, status,
                    System.nanoTime() - r.startNanos);
            r.stats = null;
        }
        releaseNamespace(r);
        if (closed) {
            release(r);
            return;
        }
        r.status = status;
        if (!status.isSuccess() || r.direction != Request.XFER_C2H) {
            r.c2hLength = 0;
        }
        if (!sqFlowControlDisabled && size > 0) {
            sqhd = sqhd + 1 == size ? 0 : sqhd + 1;
        }
        r.state = r.c2hLength > 0 ? Request.State.TRANSFERRING_C2H : Request.State.COMPLETED;
        transport.sendCompletion(r);
        windowFreed(owed);
    }

    private static void releaseNamespace(Request r) {
        Namespace ns = r.namespace;
        if (ns != null) {
            r.namespace = null;
            ns.release();
        }
        Drain d = r.drain;
        if (d != null) {
            r.drain = null;
            d.done();
        }
    }

    /**
     * On this queue's loop: marks the commands on namespace {@code ns} that are executing (in a
     * blocking backend, where nothing can stop them) so that {@code d} waits for them; then counts
     * this queue's look done. Commands not yet executing never will (see {@link Request#preemptedAndAborted}).
     */
    void markForDrain(Namespace ns, Drain d) {
        try {
            transport.eventLoop().execute(() -> {
                for (Request x : all) {
                    // by NSID: a namespace object being replaced may still run commands of it
                    if (x.namespace != null && x.namespace.nsid() == ns.nsid() && x.state == Request.State.EXECUTING && x.drain == null) {
                        x.drain = d;
                        d.add();
                    }
                }
                d.done();
            });
        } catch (RejectedExecutionException e) {
            d.done(); // the loop is gone, and the queue's commands with it
        }
    }

    /** The host disabled SQ flow control at Connect (CATTR bit 2). */
    public boolean sqFlowControlDisabled() {
        return sqFlowControlDisabled;
    }

    /** SQ head to report in the next CQE. */
    public int sqhd() {
        return sqhd;
    }

    /** Called by Connect: binds the queue to its controller. */
    void connected(int qid, int size, boolean sqFlowControlDisabled, Controller controller) {
        this.qid = qid;
        this.size = size;
        this.sqFlowControlDisabled = sqFlowControlDisabled;
        this.controller = controller;
        this.limit = size;
    }

    /**
     * Fails the writes whose host-to-controller data is overdue at {@code now} (a host that
     * answers R2T with nothing, keeping its connection alive with Keep Alive, gets its buffers
     * taken back): Data Transfer Error. Data that still comes for them later ends the connection.
     */
    public void expireOverdueData(long now) {
        for (Request r : all) {
            if (r.state == Request.State.TRANSFERRING_H2C && now - r.dataDeadline > 0) {
                LOG.log(System.Logger.Level.WARNING, "{0}: queue {1} failed command {2}: its data did not come within {3} ms",
                        transport.peer(), qid, r.cid(), target.tuning().dataTimeoutMillis());
                r.releaseData();
                complete(r, Status.DATA_TRANSFER_ERROR);
            }
        }
    }

    /** The connection is gone: drop requests, detach from the controller. Idempotent. */
    public void closed() {
        if (closed) {
            return;
        }
        closed = true;
        ended = true;
        notPending();
        h2cWaiting.clear();
        if (auth != null) {
            auth.closed();
        }
        for (Request r : all) {
            if (r.state == Request.State.NEED_BUFFER) {
                target.bufferBudget().cancel(r);
            }
            if (r.state != Request.State.EXECUTING || !r.offloaded) {
                // a backend call running on the I/O executor owns its request; ioFinished() frees it
                r.releaseData();
                releaseNamespace(r);
            }
        }
        Controller c = controller;
        if (c != null) {
            c.queueClosed(this);
        }
        LOG.log(System.Logger.Level.DEBUG, "queue {0} from {1} closed", qid, transport.peer());
        watchQuiesce();
    }

    /**
     * CQT (Identify Controller) promises a host that an ended connection's commands are out of the
     * backend within it: nothing new starts (a closed queue takes no command, and one waiting for
     * the I/O executor is dropped there), and those already in a backend are counted now and
     * again at CQT, and a teardown that overran is logged for the operator to raise the setting.
     */
    private void watchQuiesce() {
        long cqt = target.tuning().commandQuiesceTimeMillis();
        if (cqt == 0 || executing() == 0) {
            return;
        }
        try {
            transport.eventLoop().schedule(() -> {
                int left = executing();
                if (left > 0) {
                    LOG.log(System.Logger.Level.WARNING, "queue {0} from {1}: {2} commands still in the backend {3} ms"
                            + " after the connection ended, past the Command Quiesce Time hosts were promised; raise "
                            + Settings.COMMAND_QUIESCE_TIME_MS.key() + " for this storage", qid, transport.peer(), left, cqt);
                }
            }, cqt, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // the event loops are gone, and the commands with them
        }
    }

    private int executing() {
        int n = 0;
        for (Request r : all) {
            // an Asynchronous Event Request waits for an event, not in a backend: it ends with the queue
            if (r.state == Request.State.EXECUTING
                    && !(qid == 0 && r.sqe.opcode() == io.nvmeof.protocol.AdminOpcode.ASYNC_EVENT_REQUEST.code)) {
                n++;
            }
        }
        return n;
    }

    /** Ends the connection from the core's side (controller teardown, keep-alive expiry). */
    void disconnect() {
        transport.close();
    }
}
