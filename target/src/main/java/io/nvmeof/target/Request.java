package io.nvmeof.target;

import io.netty.buffer.ByteBuf;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.SubmissionQueueEntry;
import io.nvmeof.target.backend.KernelQueue;
import io.nvmeof.target.backend.RbdAio;
import java.nio.ByteBuffer;
import java.util.concurrent.RejectedExecutionException;

/**
 * One command in flight on a queue. Pooled by its {@link QueuePair} and reused; owned by the
 * queue's event loop except while a blocking backend call runs on the I/O executor, when
 * that thread alone touches it until it hands the request back.
 */
final class Request implements Runnable, KernelQueue.Completion, RbdAio.Done {
    /** Where the request is in its life (STYLE: an explicit state per request). */
    public enum State { FREE, NEW, NEED_BUFFER, TRANSFERRING_H2C, WAITING_FUSED, EXECUTING, TRANSFERRING_C2H, COMPLETED }

    /** Data direction from the opcode's low bits (NVMe Base 2.0, Figure 88). */
    public static final int XFER_NONE = 0;
    public static final int XFER_H2C = 1;
    public static final int XFER_C2H = 2;

    final QueuePair queue;
    /** Index in the queue's pool; transports use it as a transfer tag. */
    public final int tag;
    private final ByteBuffer sqeBuffer = Flyweight.allocate(SubmissionQueueEntry.SIZE);
    /** The command, in the request's own copy. */
    public final SubmissionQueueEntry sqe = new SubmissionQueueEntry().wrap(sqeBuffer, 0);

    public State state = State.FREE;
    /** Data direction, one of {@code XFER_*}. */
    public int direction;
    /** Bytes of command data the SGL describes. */
    public int length;
    /** Command data; owned by the request until handed to the transport or released. */
    public ByteBuf data;
    /** Where the data starts inside {@link #data}. */
    public int dataOffset;
    /** Bytes of host-to-controller data received so far (transports advance it). */
    public int received;
    /** Transport bookkeeping: the next data offset it expects or will request. */
    public int transportCursor;
    /** The tag the transport gave the host to send this request's data under (TCP: the TTAG of its R2T). */
    public int transportTag;
    /** Some of the command's data arrived damaged (data digest mismatch). */
    public boolean dataCorrupt;
    /** What runs the command, chosen once as it is parsed (null: a Fabrics command). */
    CommandSet.Handler handler;
    /** The other half of a fused pair (Compare + Write), once both arrived. */
    Request partner;
    /** Its backend call was handed to the I/O executor, which owns it (and its data) until {@code ioFinished}. */
    boolean offloaded;
    /** The loop's io_uring while the command is in it ({@link RingIo}), else null. */
    LoopRing ring;
    /** Which of the loop's queues holds it (AIO or io_uring). */
    KernelQueue ringQueue;
    /** The backend's descriptor for the ring, the data's address, and the bytes the ring has moved so far. */
    int ringFd;
    long ringAddress;
    int ringMoved;
    /** The ring's (or librbd's) write holds its namespace's shared writers' lock until it completes. */
    boolean ringLocked;
    /** What librbd answered ({@link RbdIo}): bytes moved, or a negated errno. */
    long rbdResult;
    /** Finishes the command on its own loop once librbd answered it (made once, not per command). */
    final Runnable rbdFinish = () -> RbdIo.finish(this);
    /** Set when the command must fail once its data has arrived (e.g. its fused partner is missing). */
    Status failWith;

    Namespace namespace;
    /** The namespace's preempt-and-abort count when the command was accepted (see {@link Reservations#abortedSince}). */
    long abortEpoch;
    /** A Copy's source ranges once parsed: start byte and length of each (array kept for the request's next Copy). */
    long[] copyRanges;
    int copyCount;
    long copyBytes;
    /** A Copy's progress: the range it is in, the bytes of that range copied (its destination is {@link #byteOffset}). */
    int copyIndex;
    long copyRangeDone;
    /** Bytes of its controller's {@link CopyBudget} this Copy holds; waiting for them there. */
    long copyHeld;
    boolean copyWaiting;
    /** What goes on once the Copy's bytes are reserved in its controller's budget (made once). */
    final Runnable copyReady = () -> queue().copyReady(this);
    /** QoS still to charge: the I/O (1 until its first piece is charged) and the bytes of the pieces to come. */
    int qosIos;
    long qosReadLeft;
    long qosWriteLeft;
    /** Charged to QoS already (a command charged at its execution, which runs again after the wait). */
    boolean qosCharged;
    /** A preempt-and-abort waiting for this command to finish in its backend (see {@link Drain}), or null. */
    Drain drain;
    long byteOffset;
    public Status status = Status.SUCCESS;
    /** CQE DW0-DW1. */
    public long result;
    /**
     * A read's data as a view of the backend's memory (readable bytes exactly the data), sent
     * without a copy instead of {@link #data}; the sender releases it.
     */
    public ByteBuf view;
    /** Bytes of data to send back (may be shorter than {@link #length}, e.g. for log pages). */
    public int c2hLength;
    /** {@link System#nanoTime()} by which the host must have sent the data it was asked for. */
    public long dataDeadline;
    /** {@link System#nanoTime()} when the command arrived: its latency runs from here to its completion. */
    long startNanos;
    /** Where the I/O command is counted when it completes: its namespace's, once the namespace is known. */
    IoStats stats;
    /** Bytes of its queue's write-data window this request counts for. */
    int h2cWindow;
    /** Bytes of the target's {@link BufferBudget} this request holds, and wants while it waits. */
    long reserved;
    int wanted;
    /** Its offloaded backend call has run; the next {@link #run} finishes it on the event loop. */
    private boolean backendDone;
    /** The state a request waiting for a buffer goes back to. */
    State resumeState;
    /** What goes on once a buffer is reserved for a waiting request (made once: no allocation per wait). */
    final Runnable bufferReady = () -> queue().bufferReady(this);
    /** Runs when the command's QoS wait is over (made once, not per wait). */
    final Runnable qosResume = () -> queue().qosResume(this);

    Request(QueuePair queue, int tag) {
        this.queue = queue;
        this.tag = tag;
    }

    public QueuePair queue() {
        return queue;
    }

    /** Copies a 64-byte SQE from a buffer of the transport into this request. */
    public void loadSqe(ByteBuf from, int index) {
        sqeBuffer.clear();
        from.getBytes(index, sqeBuffer);
        sqeBuffer.clear();
    }

    public int cid() {
        return sqe.cid();
    }

    /** The address alignment the command's backend needs for data buffers (O_DIRECT), else 1. */
    public int dataAlignment() {
        return namespace != null ? namespace.backend().bufferAlignment() : 1;
    }

    /** The data region as an NIO view for backends; no allocation for pooled buffers. */
    ByteBuffer dataNio(int len) {
        return data.internalNioBuffer(dataOffset, len);
    }

    void reset() {
        state = State.NEW;
        direction = XFER_NONE;
        length = 0;
        dataOffset = 0;
        received = 0;
        transportCursor = 0;
        dataCorrupt = false;
        partner = null;
        offloaded = false;
        backendDone = false;
        h2cWindow = 0;
        failWith = null;
        namespace = null;
        stats = null;
        byteOffset = 0;
        status = Status.SUCCESS;
        result = 0;
        c2hLength = 0;
        copyCount = 0;
        copyBytes = 0;
        copyIndex = 0;
        copyRangeDone = 0;
        qosIos = 0;
        qosReadLeft = 0;
        qosWriteLeft = 0;
        qosCharged = false;
    }

    /** Releases the data buffer if the request still owns it. */
    public void releaseData() {
        ByteBuf d = data;
        if (d != null) {
            data = null;
            d.release();
        }
        ByteBuf v = view;
        if (v != null) {
            view = null;
            v.release();
        }
        if (reserved != 0) {
            queue.target().bufferBudget().release(this);
        }
        if (copyHeld != 0 || copyWaiting) {
            queue.controller().copies.release(this, queue.target().tuning().maxCopyInFlight());
        }
    }

    /**
     * Twice per offloaded command: first on the I/O executor, the backend call; then, handed back,
     * on the event loop, the finish.
     */
    /** Whether a preempt-and-abort removed this command's host since it was accepted: it must not run. */
    boolean preemptedAndAborted() {
        Namespace ns = namespace;
        return ns != null && ns.reservations().abortedSince(queue.controller().hostId(), abortEpoch);
    }

    @Override
    public void run() {
        if (backendDone) {
            backendDone = false;
            queue.ioFinished(this);
        } else {
            Controller c = queue.controller();
            if ((queue.ended() || c != null && c.destroyed()) && partner == null) {
                // its connection or controller is gone (keep-alive expiry, say): the host may have
                // retried the command on another path, so it must not reach the storage now (CQT)
                status = Status.ABORTED_SQ_DELETION;
            } else if (preemptedAndAborted()) {
                status = Status.PREEMPT_ABORTED; // queued for the backend when its host was preempted
            } else {
                IoCommands.runBackend(this);
            }
            backendDone = true;
            try {
                queue.transport().eventLoop().execute(this);
            } catch (RejectedExecutionException e) {
                // the event loops are gone, and the connection with them
                releaseData();
                if (partner != null) {
                    partner.releaseData();
                }
            }
        }
    }

    /** librbd finished this command's operation (see {@link RbdIo}); on the loop that watches the image. */
    @Override
    public void rbdDone(long result) {
        RbdIo.done(this, result);
    }

    /** The loop's io_uring finished an operation of this command (see {@link RingIo}). */
    @Override
    public void ringDone(int result) {
        RingIo.done(this, result);
    }

    @Override
    public String toString() {
        return "Request{tag=" + tag + " state=" + state + " " + sqe + "}";
    }
}
