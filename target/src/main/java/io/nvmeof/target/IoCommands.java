package io.nvmeof.target;

import io.netty.buffer.ByteBuf;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.SubmissionQueueEntry;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The NVM command set on I/O queues (NVM Command Set 1.0, 3.2): validation before any data
 * moves, then execution inline for memory backends and on the I/O executor for backends
 * that block.
 */
final class IoCommands {
    private static final int ALL_NAMESPACES = 0xffffffff;

    private IoCommands() {
    }

    /** The NVM commands this target executes: each checks its fields, then calls the namespace's backend. */
    static final CommandSet SET = new CommandSet("NVM",
            nvm(NvmOpcode.FLUSH, "Flush", 0, (r, ns) -> null, IoCommands::flush),
            nvm(NvmOpcode.WRITE, "Write", CommandSet.LBCC, IoCommands::checkWrite, IoCommands::write),
            nvm(NvmOpcode.READ, "Read", 0, IoCommands::checkTransfer, IoCommands::read),
            nvm(NvmOpcode.COMPARE, "Compare", 0, IoCommands::checkTransfer, IoCommands::compare),
            nvm(NvmOpcode.WRITE_ZEROES, "Write Zeroes", CommandSet.LBCC, IoCommands::checkWriteZeroes,
                    IoCommands::writeZeroes),
            nvm(NvmOpcode.DATASET_MANAGEMENT, "Dataset Management", CommandSet.LBCC, IoCommands::checkDatasetManagement,
                    IoCommands::datasetManagement),
            new CommandSet.Handler(NvmOpcode.COPY.code, "Copy", CommandSet.LBCC, CopyCommand::execute, CopyCommand::check,
                    CopyCommand::run),
            reservation(NvmOpcode.RESERVATION_REGISTER, "Reservation Register", 16),
            reservation(NvmOpcode.RESERVATION_REPORT, "Reservation Report", 0),
            reservation(NvmOpcode.RESERVATION_ACQUIRE, "Reservation Acquire", 16),
            reservation(NvmOpcode.RESERVATION_RELEASE, "Reservation Release", 8));

    /** A reservation command: {@code keys} bytes of keys from the host; run on the event loop. */
    private static CommandSet.Handler reservation(NvmOpcode op, String name, int keys) {
        return new CommandSet.Handler(op.code, name, 0, ReservationCommands::execute,
                (r, ns) -> !r.queue.controller().subsystem().offersReservations(ns) ? Status.INVALID_OPCODE // RESCAP says none
                        : r.length < keys ? Status.INVALID_FIELD : null, null);
    }

    private static CommandSet.Handler nvm(NvmOpcode op, String name, int effects, CommandSet.Check check,
                                          CommandSet.BackendCall call) {
        return new CommandSet.Handler(op.code, name, effects, IoCommands::execute, check, call);
    }

    /** CDW12 bit 25 of Write Zeroes: deallocate (DEAC); CDW11 bit 2 of Dataset Management: deallocate (AD). */
    static final int WRITE_ZEROES_DEAC = 1 << 25;
    static final int DSM_DEALLOCATE = 1 << 2;
    /** Dataset Management ranges are 16 bytes: attributes, length in blocks, starting LBA. */
    static final int DSM_RANGE_SIZE = 16;

    /**
     * Finds the command's namespace and runs its handler's field checks; returns an error or
     * null. Only a Flush may name all namespaces.
     */
    static Status prepare(Request r, Subsystem subsystem) {
        int nsid = r.sqe.nsid();
        Namespace ns = subsystem.namespace(nsid);
        if (ns != null && !ns.visibleTo(r.queue.controller().hostNqn())) {
            ns = null; // another host's namespace: to this one it does not exist
        }
        if (ns == null) {
            return nsid == ALL_NAMESPACES && r.handler.opcode() == NvmOpcode.FLUSH.code ? null : Status.INVALID_NAMESPACE;
        }
        r.stats = ns.stats(); // counted there as it completes, refused or not
        Port port = r.queue.port();
        Status path = port != null ? port.anaState(ns.anaGroup()).ioStatus : null;
        if (path != null) {
            return path; // this path cannot serve the namespace now; another may (nvmet_check_ana_state)
        }
        Status s = r.handler.check().check(r, ns);
        if (s != null) {
            return s;
        }
        Reservations res = ns.reservations();
        r.abortEpoch = res.abortEpoch(); // before the check: a preempt after it aborts the command
        s = res.check(r.queue.controller().hostId(), r.queue.controller().hostNqn(), r.handler.opcode());
        if (s != null) {
            return s;
        }
        if (!ns.acquire()) {
            return Status.INVALID_NAMESPACE; // being removed
        }
        r.namespace = ns;
        return null;
    }

    /** Read and Compare: the LBA range, and data exactly as long as the blocks. */
    private static Status checkTransfer(Request r, Namespace ns) {
        return checkRange(r, ns, true);
    }

    private static Status checkWrite(Request r, Namespace ns) {
        Status s = checkRange(r, ns, true);
        return s != null ? s : ns.readOnly() ? Status.NAMESPACE_WRITE_PROTECTED : null;
    }

    private static Status checkWriteZeroes(Request r, Namespace ns) {
        Status s = checkRange(r, ns, false);
        return s != null ? s : ns.readOnly() ? Status.NAMESPACE_WRITE_PROTECTED : null;
    }

    /**
     * The LBA range within the namespace, the data as long as the blocks where {@code transfers},
     * and within the atomic unit for a fused half; sets the byte offset.
     */
    private static Status checkRange(Request r, Namespace ns, boolean transfers) {
        long slba = r.sqe.slba();
        int blocks = r.sqe.blockCount();
        if (slba < 0 || slba + blocks > ns.blocks() || slba + blocks < 0) {
            return Status.LBA_OUT_OF_RANGE;
        }
        if (transfers && ((long) blocks << ns.blockShift()) != r.length) {
            return Status.DATA_SGL_LENGTH_INVALID;
        }
        if (r.sqe.fuse() != SubmissionQueueEntry.FUSE_NORMAL && blocks > FusedCommands.ATOMIC_BLOCKS) {
            return Status.INVALID_FIELD;
        }
        r.byteOffset = slba << ns.blockShift();
        return null;
    }

    private static Status checkDatasetManagement(Request r, Namespace ns) {
        int ranges = (r.sqe.cdw10() & 0xff) + 1;
        if (r.length < ranges * DSM_RANGE_SIZE) {
            // at least the ranges announced; more is allowed, as the kernel target allows it
            return Status.DATA_SGL_LENGTH_INVALID;
        }
        if ((r.sqe.cdw11() & DSM_DEALLOCATE) != 0 && ns.readOnly()) {
            return Status.NAMESPACE_WRITE_PROTECTED;
        }
        return null;
    }

    /** Executes a prepared command on the event loop, or hands it to the I/O executor. */
    static void execute(Request r, Controller c) {
        QueuePair q = r.queue;
        int opcode = r.sqe.opcode();
        if (opcode == NvmOpcode.READ.code) {
            if (r.reserved == 0 && sentFromBackendMemory(r, q)) {
                q.complete(r, Status.SUCCESS);
                return;
            }
            if (r.reserved == 0 && !q.reserveData(r, r.length)) {
                return; // waits for a buffer; runs again once one is reserved
            }
            r.data = q.transport().allocateData(r, r.length);
            if (r.data == null) {
                q.complete(r, Status.COMMAND_INTERRUPTED);
                return;
            }
            r.c2hLength = r.length;
        } else if (r.data != null && r.dataAlignment() > 1
                && r.dataNio(r.length).alignmentOffset(r.dataNio(r.length).position(), r.dataAlignment()) != 0) {
            // in-capsule data came in before its namespace (and so its alignment) was known
            ByteBuf unaligned = r.data;
            int from = r.dataOffset;
            r.data = q.transport().allocateData(r, r.length); // sets an aligned dataOffset
            if (r.data == null) {
                r.data = unaligned;
                q.complete(r, Status.COMMAND_INTERRUPTED);
                return;
            }
            r.data.setBytes(r.dataOffset, unaligned, from, r.length);
            unaligned.release();
        }
        if (opcode == NvmOpcode.DATASET_MANAGEMENT.code && (r.sqe.cdw11() & DSM_DEALLOCATE) != 0 && !r.qosCharged) {
            // charged for QoS once its ranges are in, checked first: a refused one costs nothing
            r.qosCharged = true;
            long blocks = deallocatedBlocks(r, r.namespace);
            if (blocks < 0) {
                q.complete(r, Status.LBA_OUT_OF_RANGE);
                return;
            }
            if (q.throttled(r, 0, blocks << r.namespace.blockShift())) {
                return; // runs from here again once its turn comes
            }
        }
        if (r.sqe.fuse() != SubmissionQueueEntry.FUSE_NORMAL) {
            q.fused().ready(r);
            return;
        }
        boolean blocking = r.handler.callsBackend() && (r.namespace == null ? anyBlocking(q.controller().subsystem())
                : r.namespace.backend().blocking() || longWork(r));
        if (blocking) {
            if (!RingIo.submit(r) && !RbdIo.submit(r)) {
                q.offload(r);
            }
        } else {
            runBackend(r);
            q.complete(r, r.status);
        }
    }

    /**
     * A read of a backend that holds its data in memory (RAM) goes out as a view of that memory
     * when the transport can send one: no buffer, no copy before the socket's own.
     */
    private static boolean sentFromBackendMemory(Request r, QueuePair q) {
        Namespace ns = r.namespace;
        if (ns == null || !q.transport().sendsViews() || ns.backend().blocking()
                || r.sqe.fuse() != SubmissionQueueEntry.FUSE_NORMAL) {
            return false;
        }
        ByteBuf v = ns.backend().readView(r.byteOffset, r.length);
        if (v == null) {
            return false;
        }
        r.view = v;
        r.c2hLength = r.length;
        return true;
    }

    /**
     * Bytes of work a non-blocking backend may do on the event loop for one command. Reads and
     * writes are bounded by MDTS; Write Zeroes (up to 65536 blocks) and a deallocate (up to 256
     * ranges of 2^32 blocks) are not, and zero-filling that much memory would stall every other
     * queue on the loop: beyond this they run on the I/O executor, as a file's I/O does.
     */
    static final long LOOP_WORK_BYTES = 1 << 20;

    /** A failing device fails every command: one line per few, with how many were suppressed. */
    private static final RateLimitedLog IO_ERRORS = new RateLimitedLog(System.getLogger(IoCommands.class.getName()));

    /** Whether {@code r}'s backend work is too much for the event loop whatever its backend. */
    static boolean longWork(Request r) {
        int op = r.sqe.opcode();
        Namespace ns = r.namespace;
        if (op == NvmOpcode.WRITE_ZEROES.code) {
            return ((long) r.sqe.blockCount() << ns.blockShift()) > LOOP_WORK_BYTES;
        }
        if (op == NvmOpcode.DATASET_MANAGEMENT.code && (r.sqe.cdw11() & DSM_DEALLOCATE) != 0 && r.data != null) {
            return (deallocatedBlocks(r, ns) << ns.blockShift()) > LOOP_WORK_BYTES;
        }
        return false;
    }

    /**
     * The blocks a deallocate's ranges cover in all (at most 256 x (2^32 - 1): no overflow), or -1
     * when one lies outside the namespace; the data must be in.
     */
    static long deallocatedBlocks(Request r, Namespace ns) {
        int ranges = (r.sqe.cdw10() & 0xff) + 1;
        long all = 0;
        for (int i = 0; i < ranges; i++) {
            int at = r.dataOffset + i * DSM_RANGE_SIZE;
            long blocks = r.data.getUnsignedIntLE(at + 4);
            long slba = r.data.getLongLE(at + 8);
            if (slba < 0 || blocks > ns.blocks() || slba > ns.blocks() - blocks) {
                return -1;
            }
            all += blocks;
        }
        return all;
    }

    private static boolean anyBlocking(Subsystem s) {
        for (Namespace ns : s.namespaces().values()) {
            if (ns.backend().blocking()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Does the backend call; sets {@link Request#status}. On the event loop for a backend that
     * does not block, on the I/O executor ({@link QueuePair#offload}) for one that does.
     */
    static void runBackend(Request r) {
        try {
            if (r.partner != null) {
                FusedCommands.compareAndWrite(r, r.partner);
                return;
            }
            r.status = r.handler.backend().run(r);
        } catch (VirtualMachineError e) {
            // not a storage error: the JVM is out of memory or broken, and no status can say so
            Fatal.error(e);
            throw e;
        } catch (Throwable t) {
            failed(r, t);
        }
    }

    /** The backend failed {@code r}: its status says how, and the log says so (a few lines per burst). */
    static void failed(Request r, Throwable t) {
        int op = r.sqe.opcode();
        r.status = StorageErrors.toStatus(r, t, op != NvmOpcode.READ.code && op != NvmOpcode.COMPARE.code);
        IO_ERRORS.log(System.Logger.Level.WARNING, "I/O error on {0}: {1}", r.namespace, t);
    }

    private static Status read(Request r) throws IOException {
        r.namespace.backend().read(r.byteOffset, r.dataNio(r.length));
        return Status.SUCCESS;
    }

    /** A write; taken under the namespace's shared lock so a fused Compare and Write is atomic against it. */
    private static Status write(Request r) throws IOException {
        r.namespace.writersSharedLock().lock();
        try {
            if (!r.namespace.holds(r.byteOffset, r.length)) {
                return Status.LBA_OUT_OF_RANGE; // shrunk since its range was checked
            }
            r.namespace.backend().write(r.byteOffset, r.dataNio(r.length));
        } finally {
            r.namespace.writersSharedLock().unlock();
        }
        if (r.sqe.fua()) {
            // Force Unit Access: durable before completion (NVM Command Set 1.0, 3.2.6).
            r.namespace.backend().flush();
        }
        return Status.SUCCESS;
    }

    private static Status writeZeroes(Request r) throws IOException {
        long length = (long) r.sqe.blockCount() << r.namespace.blockShift();
        r.namespace.writersSharedLock().lock();
        try {
            if (!r.namespace.holds(r.byteOffset, length)) {
                return Status.LBA_OUT_OF_RANGE; // shrunk since its range was checked
            }
            r.namespace.backend().writeZeroes(r.byteOffset, length);
        } finally {
            r.namespace.writersSharedLock().unlock();
        }
        if (r.sqe.fua()) {
            r.namespace.backend().flush();
        }
        return Status.SUCCESS;
    }

    /** Flush of one namespace, or of every writable one (NSID FFFFFFFFh). */
    private static Status flush(Request r) throws IOException {
        if (r.namespace != null) {
            r.namespace.backend().flush();
        } else {
            Controller c = r.queue.controller();
            for (Namespace ns : c.subsystem().namespaces().values()) {
                if (!ns.readOnly() && ns.visibleTo(c.hostNqn())) {
                    ns.backend().flush();
                }
            }
        }
        return Status.SUCCESS;
    }

    /** Compare: reads the range and compares it with the host's data (NVM Command Set 1.0, 3.2.1). */
    static Status compare(Request r) throws IOException {
        int align = r.dataAlignment();
        ByteBuf stored = EventLoops.ALLOCATOR.directBuffer(r.length + align);
        try {
            ByteBuffer nio = stored.internalNioBuffer(0, r.length + align);
            int skew = nio.alignmentOffset(nio.position(), align);
            nio.position(nio.position() + (skew == 0 ? 0 : align - skew)); // O_DIRECT wants it aligned
            nio.limit(nio.position() + r.length);
            int start = nio.position(); // a view into the pool's memory: not at 0
            r.namespace.backend().read(r.byteOffset, nio);
            nio.position(start);
            return nio.equals(r.dataNio(r.length)) ? Status.SUCCESS : Status.COMPARE_FAILURE;
        } finally {
            stored.release();
        }
    }

    /** Dataset Management: with the deallocate attribute, every range (each checked before) is deallocated. */
    private static Status datasetManagement(Request r) throws IOException {
        if ((r.sqe.cdw11() & DSM_DEALLOCATE) == 0) {
            return Status.SUCCESS; // integral read/write hints only: nothing to do
        }
        Namespace ns = r.namespace;
        int ranges = (r.sqe.cdw10() & 0xff) + 1;
        ByteBuf d = r.data; // every range checked by execute() already, before it was charged for QoS
        ns.writersSharedLock().lock();
        try {
            // and again under the lock that keeps a shrink out, before any is deallocated
            for (int i = 0; i < ranges; i++) {
                int at = r.dataOffset + i * DSM_RANGE_SIZE;
                long blocks = d.getUnsignedIntLE(at + 4);
                long slba = d.getLongLE(at + 8);
                if (slba < 0 || blocks > ns.blocks() || slba > ns.blocks() - blocks) {
                    return Status.LBA_OUT_OF_RANGE;
                }
            }
            for (int i = 0; i < ranges; i++) {
                int at = r.dataOffset + i * DSM_RANGE_SIZE;
                long blocks = d.getUnsignedIntLE(at + 4);
                long slba = d.getLongLE(at + 8);
                if (blocks > 0) {
                    ns.backend().deallocate(slba << ns.blockShift(), blocks << ns.blockShift());
                }
            }
        } finally {
            ns.writersSharedLock().unlock();
        }
        return Status.SUCCESS;
    }
}
