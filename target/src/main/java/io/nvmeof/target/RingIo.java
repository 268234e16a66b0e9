package io.nvmeof.target;

import io.netty.buffer.ByteBuf;
import io.netty.util.internal.PlatformDependent;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import io.nvmeof.target.backend.KernelQueue;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Read, Write and Flush of file and block namespaces through the event loop's own kernel queues
 * ({@link LoopRing}: Linux AIO for O_DIRECT, io_uring otherwise): submitted on the command's loop and completed there, with no hand-off to
 * the I/O threads. The command counts as offloaded meanwhile, as on the I/O threads: a queue
 * that closes, a namespace being drained or a reservation's abort wait for it the same way.
 *
 * <p>A transfer the kernel moves in part goes on from where it stopped; a read past the end of
 * the file reads as zeroes, as {@link io.nvmeof.target.backend.Backend#read} does. A write holds
 * its namespace's shared writers' lock until it completes, as the I/O threads' write does, so a
 * fused Compare and Write stays atomic; the loop only tries the lock, and where a Compare and
 * Write holds it the command goes to the I/O threads instead of waiting. Everything else (Write
 * Zeroes, deallocation, Compare, fused commands, Copy, a Flush of all namespaces) stays with
 * the I/O threads.
 */
final class RingIo {
    private RingIo() {
    }

    /**
     * Submits {@code r} to its loop's ring if it is a command the ring serves; false when it is not,
     * or when there is no ring, no room in it, or no address for its data: the caller offloads it.
     */
    static boolean submit(Request r) {
        Namespace ns = r.namespace;
        QueuePair q = r.queue;
        if (ns == null || r.partner != null || !q.target().tuning().ringFileIo()) {
            return false;
        }
        int op = r.sqe.opcode();
        boolean write = op == NvmOpcode.WRITE.code;
        if (!write && op != NvmOpcode.READ.code && (op != NvmOpcode.FLUSH.code || ns.readOnly())) {
            return false;
        }
        LoopRing ring = LoopRing.of(q.transport().eventLoop());
        if (ring == null) {
            return false;
        }
        int fd;
        try {
            fd = ns.backend().ringFd();
        } catch (IOException e) {
            return false; // the I/O threads report it as they meet it
        }
        KernelQueue kq = ring.queue(ns.backend().ringDirect(), q.target().tuning().aioFileIo());
        if (kq == null || kq.room() == 0) {
            return false;
        }
        long address = op == NvmOpcode.FLUSH.code ? 0 : address(r.data, r.dataOffset, r.length);
        if (fd < 0 || address == 0 && op != NvmOpcode.FLUSH.code) {
            return false;
        }
        if (write) {
            if (!ns.tryWritersSharedLock(r.byteOffset, r.length)) {
                return false;
            }
            r.ringLocked = true;
        }
        r.ring = ring;
        r.ringQueue = kq;
        r.ringFd = fd;
        r.ringAddress = address;
        r.ringMoved = 0;
        r.offloaded = true;
        queueNext(r);
        return true;
    }

    /** The memory address of {@code length} bytes at {@code offset} of {@code buf}; 0 if it has none. */
    static long address(ByteBuf buf, int offset, int length) {
        if (buf == null || !buf.isDirect()) {
            return 0;
        }
        if (buf.hasMemoryAddress()) {
            return buf.memoryAddress() + offset;
        }
        if (buf.nioBufferCount() != 1 || !PlatformDependent.hasUnsafe()) {
            return 0;
        }
        ByteBuffer nio = buf.internalNioBuffer(offset, length);
        return PlatformDependent.directBufferAddress(nio) + nio.position();
    }

    /** Queues what is left of {@code r}'s transfer (or its flush). There is room: its own slot was just freed or checked. */
    private static void queueNext(Request r) {
        KernelQueue ring = r.ringQueue;
        int op = r.sqe.opcode();
        long at = r.byteOffset + r.ringMoved;
        long address = r.ringAddress + r.ringMoved;
        int left = r.length - r.ringMoved;
        boolean queued;
        if (op == NvmOpcode.READ.code) {
            queued = ring.read(r.ringFd, at, address, left, r);
        } else if (op == NvmOpcode.WRITE.code) {
            // Force Unit Access: this write durable before it completes (NVM Command Set 1.0, 3.2.6)
            queued = ring.write(r.ringFd, at, address, left, r.sqe.fua(), r);
        } else {
            queued = ring.fdatasync(r.ringFd, r);
        }
        if (!queued) {
            finish(r, Status.INTERNAL_ERROR); // cannot happen while the slot accounting holds
            return;
        }
        r.ring.queued();
    }

    /** The kernel finished an operation of {@code r}: {@code result} bytes moved, or a negated errno. On the loop. */
    static void done(Request r, int result) {
        int op = r.sqe.opcode();
        if (result == -KernelQueue.EINTR || result == -KernelQueue.EAGAIN) {
            queueNext(r); // nothing moved: the same again
            return;
        }
        if (result < 0) {
            IoCommands.failed(r, new IOException(r.ringQueue.describe(result)));
            finish(r, r.status);
            return;
        }
        if (op != NvmOpcode.FLUSH.code) {
            r.ringMoved += result;
            if (r.ringMoved < r.length) {
                if (result > 0) {
                    queueNext(r);
                    return;
                }
                if (op == NvmOpcode.READ.code) {
                    // past the end of a sparse or shrunk file: reads as zeroes
                    r.data.setZero(r.dataOffset + r.ringMoved, r.length - r.ringMoved);
                } else {
                    IoCommands.failed(r, new IOException("a write at " + (r.byteOffset + r.ringMoved) + " moved nothing"));
                    finish(r, r.status);
                    return;
                }
            }
        }
        finish(r, Status.SUCCESS);
    }

    private static void finish(Request r, Status status) {
        if (r.ringLocked) {
            r.ringLocked = false;
            r.namespace.writersSharedLock().unlock();
        }
        r.queue.transport().holdFlush(r.ring);
        r.ring = null;
        r.ringQueue = null;
        r.status = status;
        r.queue.ioFinished(r);
    }
}
