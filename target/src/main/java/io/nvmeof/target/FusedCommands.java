package io.nvmeof.target;

import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.SubmissionQueueEntry;
import java.io.IOException;
import java.util.concurrent.RejectedExecutionException;

/**
 * Fused Compare and Write, in one place (NVM Command Set 1.0, 3.2.3; Base 2.0, 3.4.2): the
 * pairing of a queue's FUSE_FIRST with the FUSE_SECOND right behind it, the checks that only a
 * Compare and a Write over the same blocks fuse, the pair run atomically under the
 * namespace's exclusive lock (on the I/O executor when the backend blocks), and the statuses
 * when a half is missing or fails. One per queue; its event loop only.
 */
final class FusedCommands {
    /** Largest fused Compare and Write in blocks (ACWU + 1). */
    static final int ATOMIC_BLOCKS = 256;

    private final QueuePair q;
    /** A fused first command waiting for its second. */
    private Request pendingFirst;
    /** The previous command was a fused first that failed: its second is aborted. */
    private boolean firstFailed;

    FusedCommands(QueuePair q) {
        this.q = q;
    }

    /**
     * A command arrived: a first not followed at once by its second is aborted; a second
     * without its first ends at once (the status returned; null otherwise).
     */
    Status arrived(Request r) {
        int fuse = r.sqe.fuse();
        boolean previousFirstFailed = firstFailed;
        firstFailed = false;
        if (pendingFirst != null && fuse != SubmissionQueueEntry.FUSE_SECOND) {
            q.abandon(pendingFirst, Status.ABORTED_FUSED_MISSING);
            pendingFirst = null;
        }
        if (fuse == SubmissionQueueEntry.FUSE_SECOND && pendingFirst == null) {
            return previousFirstFailed ? Status.ABORTED_FUSED_FAILED : Status.ABORTED_FUSED_MISSING;
        }
        return null;
    }

    /**
     * The fuse fields of a command on queue {@code qid}, before its own checks: null when they
     * fit, else the status. (The atomic size limit, {@link #ATOMIC_BLOCKS}, is checked with the
     * LBA range.)
     */
    Status check(Request r, int qid) {
        SubmissionQueueEntry sqe = r.sqe;
        int fuse = sqe.fuse();
        if (fuse == SubmissionQueueEntry.FUSE_NORMAL) {
            return null;
        }
        if (qid == 0 || fuse == 3) {
            return Status.INVALID_FIELD;    // admin commands do not fuse; 11b is reserved
        }
        if (r.queue.controller().subsystem().gateways()) {
            return Status.INVALID_FIELD;    // not offered (FUSES 0): other processes write the same storage
        }
        NvmOpcode op = NvmOpcode.of(sqe.opcode());
        if (fuse == SubmissionQueueEntry.FUSE_FIRST ? op != NvmOpcode.COMPARE : op != NvmOpcode.WRITE) {
            return Status.INVALID_FIELD;    // only Compare + Write fuse
        }
        return null;
    }

    /** After the command's own checks: a second names the blocks of its first. */
    Status checkPair(Request r) {
        if (r.sqe.fuse() == SubmissionQueueEntry.FUSE_SECOND && !sameRange(pendingFirst.sqe, r.sqe)) {
            return Status.INVALID_FIELD;
        }
        return null;
    }

    /** Both halves of a fused pair name the same blocks. */
    private static boolean sameRange(SubmissionQueueEntry first, SubmissionQueueEntry second) {
        return first.nsid() == second.nsid() && first.slba() == second.slba() && first.blockCount() == second.blockCount();
    }

    /** A fused command failed its checks with {@code s}: its partner is told. */
    void rejected(Request r, Status s) {
        int fuse = r.sqe.fuse();
        if (fuse == SubmissionQueueEntry.FUSE_FIRST) {
            firstFailed = true;
        } else if (fuse == SubmissionQueueEntry.FUSE_SECOND && pendingFirst != null) {
            q.abandon(pendingFirst, s.equals(Status.INVALID_FIELD) ? Status.INVALID_FIELD : Status.ABORTED_FUSED_FAILED);
            pendingFirst = null;
        }
    }

    /** A fused command passed its checks: a first waits for its second, a second joins its first. */
    void accepted(Request r) {
        int fuse = r.sqe.fuse();
        if (fuse == SubmissionQueueEntry.FUSE_FIRST) {
            pendingFirst = r;
        } else if (fuse == SubmissionQueueEntry.FUSE_SECOND) {
            r.partner = pendingFirst;
            pendingFirst.partner = r;
            pendingFirst = null;
        }
    }

    /** A fused half has its data; the pair runs once both have theirs. */
    void ready(Request r) {
        r.state = Request.State.WAITING_FUSED;
        if (r.failWith != null) {
            q.complete(r, r.failWith);
            return;
        }
        Request p = r.partner;
        if (p == null || p.state != Request.State.WAITING_FUSED) {
            return; // the other half is still on its way
        }
        Request first = r.sqe.fuse() == SubmissionQueueEntry.FUSE_FIRST ? r : p;
        first.state = Request.State.EXECUTING;
        first.partner.state = Request.State.EXECUTING;
        if (first.namespace.backend().blocking()) {
            try {
                first.offloaded = true;
                first.partner.offloaded = true;
                q.target().threads().io().execute(first);
            } catch (RejectedExecutionException e) {
                first.status = Status.COMMAND_INTERRUPTED;
                first.partner.status = Status.COMMAND_INTERRUPTED;
                finish(first);
            }
        } else {
            IoCommands.runBackend(first);
            finish(first);
        }
    }

    /** The pair ran (its statuses set): both complete. */
    void finish(Request first) {
        Request second = first.partner;
        first.partner = null;
        second.partner = null;
        q.complete(first, first.status);
        q.complete(second, second.status);
    }

    /** {@code r} completes with {@code status} on its own: the pairing state and its partner follow. */
    void completing(Request r, Status status) {
        if (r == pendingFirst) {
            pendingFirst = null;
            firstFailed = !status.isSuccess();
        }
        Request partner = r.partner;
        if (partner != null && partner.state != Request.State.EXECUTING) {
            r.partner = null;
            partner.partner = null;
            q.abandon(partner, Status.ABORTED_FUSED_FAILED);
        }
    }

    /**
     * The pair's backend work: with the namespace's exclusive lock held, compare, and write only
     * on a match; a miscompare fails the Compare and aborts the Write, leaving the data as it was.
     */
    static void compareAndWrite(Request first, Request second) {
        Namespace ns = first.namespace;
        ns.compareAndWriteLock().lock();
        try {
            if (!ns.holds(second.byteOffset, second.length)) {
                // shrunk since the pair's range was checked: the Compare fails, the Write is aborted
                first.status = Status.LBA_OUT_OF_RANGE;
                second.status = Status.ABORTED_FUSED_FAILED;
                return;
            }
            try {
                first.status = IoCommands.compare(first);
            } catch (IOException | RuntimeException e) {
                first.status = StorageErrors.toStatus(first, e, false);
                second.status = Status.ABORTED_FUSED_FAILED;
                return;
            }
            if (!first.status.isSuccess()) {
                second.status = Status.ABORTED_FUSED_FAILED;
                return;
            }
            ns.backend().write(second.byteOffset, second.dataNio(second.length));
            if (second.sqe.fua()) {
                ns.backend().flush();
            }
            second.status = Status.SUCCESS;
        } catch (IOException | RuntimeException e) {
            second.status = StorageErrors.toStatus(second, e, true);
            if (first.status.isSuccess()) {
                first.status = Status.ABORTED_FUSED_FAILED;
            }
        } finally {
            ns.compareAndWriteLock().unlock();
        }
    }
}
