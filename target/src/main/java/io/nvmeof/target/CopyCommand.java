package io.nvmeof.target;

import io.nvmeof.protocol.CopyRange;
import io.nvmeof.protocol.Status;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Copy (NVM Command Set 1.0+, opcode 19h), source range descriptor format 0: up to
 * {@link #MAX_RANGES} ranges of at most {@link #MAX_RANGE_BLOCKS} blocks each, at most
 * {@link #maxCopyBytes} in all, written one after another from SDLBA. The descriptors come as the
 * command's data (32 bytes each: SLBA at 8, NLB 0's based at 16); once they are in, the ranges are
 * checked and kept in the request, and the data buffer goes back. The backend copies
 * ({@link io.nvmeof.target.backend.Backend#copy}): RAM by memory copy, a file by copy_file_range,
 * otherwise by reads and writes through one bounce buffer of {@link #BOUNCE} bytes reserved from
 * the target's buffer budget before the work goes to the I/O executor. Copies larger than the
 * event loop may do run there too, a {@link #STEP} at a time, each step queued behind what other
 * commands queued meanwhile; a controller has at most {@link Settings#MAX_COPY_IN_FLIGHT} bytes of
 * Copy running ({@link CopyBudget}). Writers are kept apart from fused Compare and Write as a
 * Write is; FUA flushes before the completion.
 */
final class CopyCommand {
    /** MSRC + 1: source ranges per command. */
    static final int MAX_RANGES = 128;
    /** MSSRL: blocks per source range (NLB is 16 bits, 0's based). */
    static final int MAX_RANGE_BLOCKS = 65536 - 1;
    /** MCL, in bytes: 64 MiB per command whatever the block size. */
    static final long MAX_COPY_BYTES = 64L << 20;
    /** The bounce buffer of a copy through reads and writes. */
    static final int BOUNCE = 1 << 20;
    /**
     * The most a Copy copies in one turn on the I/O executor: a 64 MiB Copy takes 64 turns, and a
     * command another host queued there waits behind one step of it, not the whole.
     */
    static final int STEP = BOUNCE;

    private CopyCommand() {
    }

    /** MCL in blocks for a namespace of {@code 2^blockShift}-byte blocks. */
    static long maxCopyBlocks(int blockShift) {
        return MAX_COPY_BYTES >>> blockShift;
    }

    static long maxCopyBytes(int blockShift) {
        return maxCopyBlocks(blockShift) << blockShift;
    }

    /** MSSRL for a namespace: the smaller of NLB's reach and MCL. */
    static int maxRangeBlocks(int blockShift) {
        return (int) Math.min(MAX_RANGE_BLOCKS, maxCopyBlocks(blockShift));
    }

    /** Before any data moves: the descriptor format, their count, the data's length, write protection. */
    static Status check(Request r, Namespace ns) {
        int cdw12 = r.sqe.cdw12();
        int ranges = CopyRange.ranges(cdw12);
        if (CopyRange.format(cdw12) != 0) {
            return Status.INVALID_FIELD; // only format 0 (OCFS bit 0)
        }
        if ((cdw12 >>> 12 & 0xf) != 0 || (cdw12 >>> 26 & 0xf) != 0) {
            return Status.INVALID_FIELD; // protection information: the namespace has none
        }
        if (ranges > MAX_RANGES) {
            return Status.COMMAND_SIZE_LIMIT_EXCEEDED;
        }
        if (r.length < ranges * CopyRange.SIZE) {
            return Status.DATA_SGL_LENGTH_INVALID;
        }
        return ns.readOnly() ? Status.NAMESPACE_WRITE_PROTECTED : null;
    }

    /**
     * With its descriptors in: checks and keeps the ranges, gives the data back, then runs the
     * copy here or on the I/O executor (reserving its bounce buffer first where it may need one).
     * Runs again, past what it has done, when its QoS turn comes, its controller's Copy budget has
     * room for it, or a waited-for buffer is reserved.
     */
    static void execute(Request r, Controller c) {
        QueuePair q = r.queue;
        Namespace ns = r.namespace;
        if (r.copyCount == 0) {
            Status s = parse(r, ns);
            r.releaseData();
            if (s != null) {
                q.complete(r, s);
                return;
            }
            if (q.throttled(r, r.copyBytes, r.copyBytes)) {
                return; // over a QoS limit: waits its turn (holding nothing), then runs from here
            }
        }
        if (r.copyHeld == 0 && !c.copies.reserve(r, q.target().tuning().maxCopyInFlight())) {
            return; // the controller has as much copying as it may: runs from here once earlier ones finish
        }
        boolean blocking = ns.backend().blocking();
        if (blocking) {
            if (r.reserved == 0 && !q.reserveData(r, bounceSize(r))) {
                return; // waits for its buffer; runs again once it has one
            }
            if (r.data == null) {
                r.data = q.transport().allocateData(r, bounceSize(r));
                if (r.data == null) {
                    q.complete(r, Status.COMMAND_INTERRUPTED);
                    return;
                }
            }
            q.offload(r);
        } else if (r.copyBytes > IoCommands.LOOP_WORK_BYTES) {
            q.offload(r);
        } else {
            IoCommands.runBackend(r);
            q.complete(r, r.status);
        }
    }

    /** The bounce buffer of {@code r}: {@link #BOUNCE}, or less for a smaller copy (whole blocks either way). */
    static int bounceSize(Request r) {
        return (int) Math.min(BOUNCE, r.copyBytes);
    }

    private static Status parse(Request r, Namespace ns) {
        int ranges = CopyRange.ranges(r.sqe.cdw12());
        int shift = ns.blockShift();
        long blocks = ns.blocks();
        if (r.copyRanges == null) {
            r.copyRanges = new long[2 * MAX_RANGES]; // once per request object, kept for its next Copy
        }
        long total = 0;
        int maxRange = maxRangeBlocks(shift);
        for (int i = 0; i < ranges; i++) {
            int at = r.dataOffset + i * CopyRange.SIZE;
            long slba = r.data.getLongLE(at + CopyRange.SLBA_OFFSET);
            int nlb = r.data.getUnsignedShortLE(at + CopyRange.NLB_OFFSET) + 1;
            if (nlb > maxRange) {
                return Status.COMMAND_SIZE_LIMIT_EXCEEDED;
            }
            if (slba < 0 || slba > blocks - nlb) {
                return Status.LBA_OUT_OF_RANGE; // not slba + nlb > blocks: near 2^63 that sum wraps negative
            }
            r.copyRanges[2 * i] = slba << shift;
            r.copyRanges[2 * i + 1] = (long) nlb << shift;
            total += nlb;
        }
        if (total > maxCopyBlocks(shift)) {
            return Status.COMMAND_SIZE_LIMIT_EXCEEDED;
        }
        long sdlba = r.sqe.slba();
        if (sdlba < 0 || sdlba > blocks - total) {
            return Status.LBA_OUT_OF_RANGE;
        }
        r.byteOffset = sdlba << shift;
        r.copyCount = ranges;
        r.copyBytes = total << shift;
        return null;
    }

    /**
     * The backend work: each range in turn to the next destination blocks, under the writers'
     * shared lock. On the I/O executor one step of at most {@link #STEP} bytes a call (the
     * queue hands the Copy back there for the next, behind what others queued meanwhile); on the
     * event loop (a small Copy of a memory backend) all of it. A range whose destination overlaps
     * its source from above is stepped through from its end, as a memmove.
     */
    static Status run(Request r) throws IOException {
        Namespace ns = r.namespace;
        // a buffer of its own over the bounce memory: the backend moves its position and limit
        ByteBuffer bounce = r.data != null ? r.dataNio(bounceSize(r)).slice() : null;
        long budget = r.offloaded ? STEP : Long.MAX_VALUE;
        ns.writersSharedLock().lock();
        try {
            while (r.copyIndex < r.copyCount && budget > 0) {
                long from = r.copyRanges[2 * r.copyIndex];
                long length = r.copyRanges[2 * r.copyIndex + 1];
                long to = r.byteOffset;
                long left = length - r.copyRangeDone;
                long n = Math.min(budget, left);
                boolean backward = to > from && to < from + length;
                long at = backward ? left - n : r.copyRangeDone;
                if (!ns.holds(from + at, n) || !ns.holds(to + at, n)) {
                    return Status.LBA_OUT_OF_RANGE; // the namespace shrank since the ranges were checked
                }
                ns.backend().copy(from + at, to + at, n, bounce);
                budget -= n;
                r.copyRangeDone += n;
                if (r.copyRangeDone == length) {
                    r.copyIndex++;
                    r.copyRangeDone = 0;
                    r.byteOffset += length;
                }
            }
        } finally {
            ns.writersSharedLock().unlock();
        }
        if (done(r) && r.sqe.fua()) {
            ns.backend().flush();
        }
        return Status.SUCCESS;
    }

    /** Whether every range of the Copy has been copied. */
    static boolean done(Request r) {
        return r.copyIndex == r.copyCount;
    }
}
