package io.nvmeof.target;

import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.SubmissionQueueEntry;
import java.util.Map;

/**
 * The NVM command set on I/O queues (NVM Command Set 1.0, 3.2): validation before any data
 * moves, then execution inline for memory backends and on the I/O executor for backends
 * that block.
 */
final class IoCommands {
    private static final int ALL_NAMESPACES = 0xffffffff;

    private IoCommands() {
    }

    /** Invalid Command Opcode for anything but the NVM commands this target executes. */
    static Status checkOpcode(SubmissionQueueEntry sqe) {
        NvmOpcode op = NvmOpcode.of(sqe.opcode());
        return op != null && supported(op) ? null : Status.INVALID_OPCODE;
    }

    static boolean supported(NvmOpcode op) {
        switch (op) {
            case READ:
            case WRITE:
            case FLUSH:
                return true;
            default:
                return false;
        }
    }

    /** Whether the command changes logical block content (the LBCC effect). */
    static boolean changesData(NvmOpcode op) {
        return op == NvmOpcode.WRITE || op == NvmOpcode.WRITE_ZEROES || op == NvmOpcode.DATASET_MANAGEMENT;
    }

    /** Checks namespace, LBA range and transfer length; returns an error or null. */
    static Status prepare(Request r, Subsystem subsystem) {
        SubmissionQueueEntry sqe = r.sqe;
        NvmOpcode op = NvmOpcode.of(sqe.opcode());
        if (op == null) {
            return Status.INVALID_OPCODE;
        }
        if (sqe.fuse() != SubmissionQueueEntry.FUSE_NORMAL) {
            return Status.INVALID_FIELD;
        }
        switch (op) {
            case READ:
            case WRITE: {
                Namespace ns = subsystem.namespace(sqe.nsid());
                if (ns == null) {
                    return Status.INVALID_NAMESPACE;
                }
                long slba = sqe.slba();
                int blocks = sqe.blockCount();
                if (slba < 0 || slba + blocks > ns.blocks() || slba + blocks < 0) {
                    return Status.LBA_OUT_OF_RANGE;
                }
                long bytes = (long) blocks << ns.blockShift();
                if (bytes != r.length) {
                    return Status.DATA_SGL_LENGTH_INVALID;
                }
                if (op == NvmOpcode.WRITE && ns.readOnly()) {
                    return Status.NAMESPACE_WRITE_PROTECTED;
                }
                if (!ns.acquire()) {
                    return Status.INVALID_NAMESPACE; // being removed
                }
                r.namespace = ns;
                r.byteOffset = slba << ns.blockShift();
                return null;
            }
            case FLUSH: {
                int nsid = sqe.nsid();
                if (nsid != ALL_NAMESPACES) {
                    Namespace ns = subsystem.namespace(nsid);
                    if (ns == null || !ns.acquire()) {
                        return Status.INVALID_NAMESPACE;
                    }
                    r.namespace = ns;
                }
                return null;
            }
            default:
                return Status.INVALID_OPCODE;
        }
    }

    /** Executes a prepared command on the event loop, or hands it to the I/O executor. */
    static void execute(Request r) {
        QueuePair q = r.queue;
        int opcode = r.sqe.opcode();
        if (opcode == NvmOpcode.READ.code) {
            r.data = q.transport().allocateData(r, r.length);
            r.c2hLength = r.length;
        }
        boolean blocking = r.namespace == null ? anyBlocking(q.controller().subsystem()) : r.namespace.backend().blocking();
        if (blocking) {
            q.executeBlocking(r);
        } else {
            executeBlocking(r);
            q.complete(r, r.status);
        }
    }

    private static boolean anyBlocking(Subsystem s) {
        for (Namespace ns : s.namespaces().values()) {
            if (ns.backend().blocking()) {
                return true;
            }
        }
        return false;
    }

    /** Does the backend call; sets {@link Request#status}. Runs on the I/O executor for blocking backends. */
    static void executeBlocking(Request r) {
        int opcode = r.sqe.opcode();
        boolean write = opcode != NvmOpcode.READ.code;
        try {
            if (opcode == NvmOpcode.READ.code) {
                r.namespace.backend().read(r.byteOffset, r.dataNio(r.length));
            } else if (opcode == NvmOpcode.WRITE.code) {
                r.namespace.backend().write(r.byteOffset, r.dataNio(r.length));
                if (r.sqe.fua()) {
                    // Force Unit Access: durable before completion (NVM Command Set 1.0, 3.2.6).
                    r.namespace.backend().flush();
                }
            } else if (r.namespace != null) {
                r.namespace.backend().flush();
            } else {
                for (Map.Entry<Integer, Namespace> e : r.queue.controller().subsystem().namespaces().entrySet()) {
                    if (!e.getValue().readOnly()) {
                        e.getValue().backend().flush();
                    }
                }
            }
            r.status = Status.SUCCESS;
        } catch (Throwable t) {
            r.status = StorageErrors.toStatus(t, write);
            System.getLogger(IoCommands.class.getName()).log(System.Logger.Level.WARNING,
                    "I/O error on " + r.namespace + ": " + t);
        }
    }

}
