package io.nvmeof.target.backend;

import io.netty.util.internal.PlatformDependent;
import io.nvmeof.target.backend.LinuxIo.LibC;
import java.io.IOException;
import java.lang.invoke.VarHandle;
import jnr.ffi.Platform;

/**
 * An io_uring of our own (Linux 5.6 and later), driven through its three system calls with
 * jnr-ffi: no native code to build, no library beyond libc. A {@link KernelQueue} for any file,
 * buffered or O_DIRECT. Nothing here allocates per operation.
 *
 * <p>The rings are shared with the kernel: the submission tail and completion head are ours,
 * written with release order; the submission head and completion tail are the kernel's, read
 * with acquire order (io_uring(7)). No more operations are in flight than the completion ring
 * holds, so it never overflows.
 */
public final class IoRing extends KernelQueue {
    private static final boolean X86 = Platform.getNativePlatform().getCPU() == Platform.CPU.X86_64;
    /** io_uring's calls have one number on every architecture since 5.1 (x86-64's table included). */
    private static final long SYS_IO_URING_SETUP = 425;
    private static final long SYS_IO_URING_ENTER = 426;
    private static final long SYS_IO_URING_REGISTER = 427;
    private static final long SYS_MMAP = X86 ? 9 : 222;
    private static final long SYS_MUNMAP = X86 ? 11 : 215;
    private static final long SYS_CLOSE = X86 ? 3 : 57;

    private static final int PROT_READ_WRITE = 0x3;
    private static final int MAP_SHARED_POPULATE = 0x01 | 0x8000;
    private static final long OFF_SQ_RING = 0;
    private static final long OFF_CQ_RING = 0x8000000L;
    private static final long OFF_SQES = 0x10000000L;
    private static final int ENTER_GETEVENTS = 1;
    private static final int REGISTER_EVENTFD = 4;

    private static final byte OP_FSYNC = 3;
    private static final byte OP_READ = 22;
    private static final byte OP_WRITE = 23;
    private static final int FSYNC_DATASYNC = 1;

    private static final int SQE_SIZE = 64;
    private static final int CQE_SIZE = 16;
    private static final int PARAMS_SIZE = 120;

    private final int fd;
    private final long sqRing;
    private final long sqRingSize;
    private final long cqRing;
    private final long cqRingSize;
    private final long sqes;
    private final long sqesSize;
    private final long sqTail;
    private final int sqMask;
    private final long cqHead;
    private final long cqTail;
    private final int cqMask;
    private final long cqes;
    /** Our submission tail, ahead of what the kernel has seen until {@link #submit}. */
    private int tail;

    private IoRing(LibC c, int fd, long params) throws IOException {
        // no more in flight than the completion ring holds (capped by the submission ring), so it never overflows
        super(c, Math.min(PlatformDependent.getInt(params), PlatformDependent.getInt(params + 4)));
        this.fd = fd;
        int sqEntries = PlatformDependent.getInt(params);
        int cqEntries = PlatformDependent.getInt(params + 4);
        long sqOff = params + 40;
        long cqOff = params + 80;
        sqRingSize = PlatformDependent.getInt(sqOff + 24) + 4L * sqEntries; // array + its entries
        cqRingSize = PlatformDependent.getInt(cqOff + 20) + (long) CQE_SIZE * cqEntries; // cqes + entries
        sqesSize = (long) SQE_SIZE * sqEntries;
        long sq = 0;
        long cq = 0;
        long se = 0;
        try {
            sq = map(sqRingSize, OFF_SQ_RING);
            cq = map(cqRingSize, OFF_CQ_RING);
            se = map(sqesSize, OFF_SQES);
        } catch (IOException e) {
            unmap(sq, sqRingSize);
            unmap(cq, cqRingSize);
            throw e;
        }
        sqRing = sq;
        cqRing = cq;
        sqes = se;
        sqTail = sq + PlatformDependent.getInt(sqOff + 4);
        sqMask = PlatformDependent.getInt(sq + PlatformDependent.getInt(sqOff + 8));
        long array = sq + PlatformDependent.getInt(sqOff + 24);
        for (int i = 0; i < sqEntries; i++) {
            PlatformDependent.putInt(array + 4L * i, i); // slot i of the ring is always SQE i
        }
        cqHead = cq + PlatformDependent.getInt(cqOff);
        cqTail = cq + PlatformDependent.getInt(cqOff + 4);
        cqMask = PlatformDependent.getInt(cq + PlatformDependent.getInt(cqOff + 8));
        cqes = cq + PlatformDependent.getInt(cqOff + 20);
        tail = PlatformDependent.getInt(sqTail);
    }

    /**
     * Sets up a ring of {@code entries} submission entries (a power of two). Throws where the
     * kernel has no io_uring (ENOSYS), refuses it (EPERM under a seccomp filter or
     * {@code kernel.io_uring_disabled}), or this JVM cannot reach raw memory.
     */
    public static IoRing open(int entries) throws IOException {
        if (!PlatformDependent.hasUnsafe()) {
            throw new IOException("io_uring needs raw memory access (sun.misc.Unsafe), which this JVM does not allow");
        }
        LibC c = LinuxIo.libc();
        long params = PlatformDependent.allocateMemory(PARAMS_SIZE);
        try {
            PlatformDependent.setMemory(params, PARAMS_SIZE, (byte) 0);
            long fd = c.syscall(SYS_IO_URING_SETUP, entries, params, 0, 0, 0, 0);
            if (fd < 0) {
                throw error(c, "io_uring_setup");
            }
            try {
                return new IoRing(c, (int) fd, params);
            } catch (IOException | RuntimeException e) {
                c.syscall(SYS_CLOSE, fd, 0, 0, 0, 0, 0);
                throw e;
            }
        } finally {
            PlatformDependent.freeMemory(params);
        }
    }

    private long map(long size, long offset) throws IOException {
        long at = c.syscall(SYS_MMAP, 0, size, PROT_READ_WRITE, MAP_SHARED_POPULATE, fd, offset);
        if (at == -1) {
            throw error(c, "mmap of an io_uring");
        }
        return at;
    }

    private void unmap(long address, long size) {
        if (address != 0) {
            c.syscall(SYS_MUNMAP, address, size, 0, 0, 0, 0);
        }
    }

    /** Has the kernel signal {@code eventFd} whenever it posts a completion (IORING_REGISTER_EVENTFD). */
    public void registerEventFd(int eventFd) throws IOException {
        long arg = PlatformDependent.allocateMemory(4);
        try {
            PlatformDependent.putInt(arg, eventFd);
            if (c.syscall(SYS_IO_URING_REGISTER, fd, REGISTER_EVENTFD, arg, 1, 0, 0) < 0) {
                throw error(c, "io_uring_register(EVENTFD)");
            }
        } finally {
            PlatformDependent.freeMemory(arg);
        }
    }

    @Override
    public boolean read(int file, long offset, long address, int length, Completion done) {
        return queue(OP_READ, file, offset, address, length, 0, done);
    }

    @Override
    public boolean write(int file, long offset, long address, int length, boolean dsync, Completion done) {
        return queue(OP_WRITE, file, offset, address, length, dsync ? RWF_DSYNC : 0, done);
    }

    @Override
    public boolean fdatasync(int file, Completion done) {
        return queue(OP_FSYNC, file, 0, 0, 0, FSYNC_DATASYNC, done);
    }

    private boolean queue(byte op, int file, long offset, long address, int length, int flags, Completion done) {
        int slot = takeSlot(done);
        if (slot < 0) {
            return false;
        }
        long sqe = sqes + (long) (tail & sqMask) * SQE_SIZE;
        PlatformDependent.setMemory(sqe, SQE_SIZE, (byte) 0);
        PlatformDependent.putByte(sqe, op);
        PlatformDependent.putInt(sqe + 4, file);
        PlatformDependent.putLong(sqe + 8, offset);
        PlatformDependent.putLong(sqe + 16, address);
        PlatformDependent.putInt(sqe + 24, length);
        PlatformDependent.putInt(sqe + 28, flags);
        PlatformDependent.putLong(sqe + 32, slot);
        tail++;
        VarHandle.releaseFence(); // the entry is written before the kernel can see the new tail
        PlatformDependent.putInt(sqTail, tail);
        unsubmitted++;
        return true;
    }

    /** One io_uring_enter for what is queued, then a reap. */
    @Override
    public int submit() {
        int errno = 0;
        if (unsubmitted > 0) {
            // five arguments: with no GETEVENTS flag the kernel reads neither sig nor sigsz
            long n = c.syscall(SYS_IO_URING_ENTER, fd, unsubmitted, 0, 0, 0);
            if (n < 0) {
                errno = lastErrno();
            } else {
                unsubmitted -= (int) n;
            }
        }
        reap();
        return errno;
    }

    @Override
    int await() {
        long n = c.syscall(SYS_IO_URING_ENTER, fd, unsubmitted, 1, ENTER_GETEVENTS, 0, 0);
        if (n < 0) {
            return lastErrno();
        }
        unsubmitted -= (int) n;
        return 0;
    }

    @Override
    int reapAll() {
        int head = PlatformDependent.getInt(cqHead);
        int count = 0;
        while (true) {
            int kernelTail = PlatformDependent.getInt(cqTail);
            VarHandle.acquireFence(); // the entries up to the tail are there before we read them
            if (head == kernelTail) {
                break;
            }
            while (head != kernelTail) {
                long cqe = cqes + (long) (head & cqMask) * CQE_SIZE;
                int slot = (int) PlatformDependent.getLong(cqe);
                int result = PlatformDependent.getInt(cqe + 8);
                head++;
                VarHandle.releaseFence(); // done reading the entry before the kernel may reuse it
                PlatformDependent.putInt(cqHead, head);
                count++;
                complete(slot, result); // may queue again: the slot is free already
            }
        }
        return count;
    }

    /**
     * Unmaps and closes the ring; operations still in flight are cancelled by the kernel as it
     * closes, and their completions are not delivered.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        unmap(sqes, sqesSize);
        unmap(cqRing, cqRingSize);
        unmap(sqRing, sqRingSize);
        c.syscall(SYS_CLOSE, fd, 0, 0, 0, 0, 0);
    }
}
