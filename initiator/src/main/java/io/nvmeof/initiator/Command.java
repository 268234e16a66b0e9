package io.nvmeof.initiator;

import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.LogPage;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * One command from submission to completion: the SQE fields, the caller's data buffer and
 * the future the caller waits on. The caller fills it on its own thread; the queue's event
 * loop takes it from there (the object is its own hand-off task).
 */
public class Command extends CompletableFuture<Command> implements Runnable {
    /** Data direction. */
    public static final int NONE = 0;
    public static final int TO_CONTROLLER = 1;
    public static final int FROM_CONTROLLER = 2;

    /**
     * The command as the host writes it, encoded by nvme-protocol's writers (CID, PSDT and the
     * data pointer are the transport's to fill in).
     */
    final SubmissionQueueEntry sqe = new SubmissionQueueEntry()
            .wrap(ByteBuffer.allocate(SubmissionQueueEntry.SIZE).order(ByteOrder.LITTLE_ENDIAN), 0);
    /** Data to send or the place to receive into: {@code length} bytes from {@code data}'s position. */
    ByteBuffer data;
    int length;
    int direction;
    /** Set on completion. */
    Status status;
    long result;
    int cid = -1;
    long deadlineNanos;
    /** When the caller stops waiting (0: never set); the command is not run or resubmitted past it. */
    long expiresAtNanos;
    /** Its own timeout (0: the queue's command timeout); a Keep Alive has KATO, as Linux gives it. */
    long timeoutNanos;
    /** Waits as long as it takes (an Asynchronous Event Request): no command timeout. */
    boolean exemptFromTimeout;
    /** Passed its timeout once: an Abort was asked for; the next time it fails. */
    boolean timedOut;
    /** Bytes of data moved so far: controller-to-host received, or host-to-controller sent. */
    int received;
    /** Controller-to-host data arrived damaged (data digest mismatch). */
    boolean dataCorrupt;
    final String name;
    /** The queue the command was submitted to; set for the hand-off to its event loop. */
    HostQueue queue;
    /** The multipath set that routes it (null: one controller's); it retries path errors elsewhere. */
    Multipath multipath;
    /** The path it was last sent on, while it is there. */
    Multipath.Path path;
    /** Since when no path could take it (0: one could). */
    long noPathSinceNanos;

    public Command(String name) {
        this.name = name;
    }

    public static Command admin(AdminOpcode op, String name) {
        Command c = new Command(name);
        c.sqe.opcode(op.code);
        return c;
    }

    /** A command whose fields {@code encode} writes with nvme-protocol's writers. */
    public static Command of(String name, Consumer<SubmissionQueueEntry> encode) {
        Command c = new Command(name);
        encode.accept(c.sqe);
        return c;
    }

    /** Get Log Page for {@code length} bytes (a multiple of 4) of log {@code lid} at byte {@code offset}. */
    public static Command getLogPage(int lid, long offset, ByteBuffer into, int length, boolean retainEvent) {
        Command c = admin(AdminOpcode.GET_LOG_PAGE, "Get Log Page " + Integer.toHexString(lid));
        LogPage.request(c.sqe, lid, offset, length, retainEvent);
        return c.dataIn(into, length);
    }

    public Command nsid(int v) {
        sqe.nsid(v);
        return this;
    }

    /** Sets command dword {@code n} (10..15), for commands nvme-protocol has no writer of (passthrough). */
    public Command cdw(int n, int v) {
        if (n < 10 || n > 15) {
            throw new IllegalArgumentException("command dword " + n + " is not the caller's (10..15)");
        }
        sqe.cdw(n, v & 0xffffffffL);
        return this;
    }

    public Command fabrics(int fctype) {
        sqe.opcode(AdminOpcode.FABRICS.code).fctype(fctype);
        return this;
    }

    public Command opcode(int op) {
        sqe.opcode(op);
        return this;
    }

    /** FUSE bits: 1 for the first, 2 for the second command of a fused pair. */
    public Command fuse(int f) {
        sqe.fuse(f);
        return this;
    }

    int fuse() {
        return sqe.fuse();
    }

    public Command dataIn(ByteBuffer into, int len) {
        if (into.isReadOnly()) {
            throw new IllegalArgumentException(name + ": cannot read into a read-only buffer");
        }
        checkLength(into, len);
        this.data = into;
        this.length = len;
        this.direction = FROM_CONTROLLER;
        return this;
    }

    public Command dataOut(ByteBuffer from, int len) {
        checkLength(from, len);
        this.data = from;
        this.length = len;
        this.direction = TO_CONTROLLER;
        return this;
    }

    private void checkLength(ByteBuffer b, int len) {
        if (len < 0 || len > b.remaining()) {
            throw new IllegalArgumentException(name + ": " + len + " bytes asked of a buffer with " + b.remaining()
                    + " remaining");
        }
    }

    public Status status() {
        return status;
    }

    /** CQE DW0-DW1. */
    public long result() {
        return result;
    }

    public String name() {
        return name;
    }

    /** Writes the command into the transport's {@code out} (SGL and CID are the transport's). */
    void fill(SubmissionQueueEntry out) {
        out.copyFrom(sqe);
        // SGLs for data on every command, Fabrics ones included, as the Linux host does
        out.psdt(SubmissionQueueEntry.PSDT_SGL_MPTR_CONTIGUOUS);
    }

    /** Completes normally on success, exceptionally with {@link NvmeStatusException} otherwise. */
    /** Called once with the outcome; {@link IoRequest} sends it to a callback instead. */
    void finish(Status s, long res) {
        if (dataCorrupt && s.isSuccess()) {
            s = Status.TRANSIENT_TRANSPORT_ERROR;
        }
        if (multipath != null && multipath.completed(this, s, null)) {
            return; // a path error: it runs again on another path
        }
        this.status = s;
        this.result = res;
        if (s.isSuccess()) {
            complete(this);
        } else {
            completeExceptionally(new NvmeStatusException(name, s, sqe.opcode() == AdminOpcode.FABRICS.code));
        }
    }

    /** The hand-off: runs on the queue's event loop. */
    @Override
    public void run() {
        queue.issueOnLoop(this);
    }

    @Override
    public String toString() {
        return name + "{cid=" + cid + " opc=" + sqe.opcode() + " nsid=" + sqe.nsid() + " len=" + length + "}";
    }
}
