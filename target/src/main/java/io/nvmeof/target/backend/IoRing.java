package io.nvmeof.target.backend;

import io.netty.util.internal.PlatformDependent;
import io.nvmeof.target.backend.LinuxIo.LibC;
import java.io.IOException;
import java.lang.invoke.VarHandle;
import jnr.ffi.Platform;
import jnr.ffi.Runtime;

/**
 * An io_uring of our own (Linux 5.6 and later), driven through its three system calls with
 * jnr-ffi: no native code to build, no library beyond libc. One thread owns a ring: it queues
 * reads, writes and fdatasyncs ({@link #read}, {@link #write}, {@link #fdatasync}), hands them to
 * the kernel with {@link #submit} and collects what completed with {@link #reap}, each
 * completion going to the {@link Completion} queued with it. Nothing here allocates per
 * operation.
 *
 * <p>The rings are shared with the kernel: the submission tail and completion head are ours,
 * written with release order; the submission head and completion tail are the kernel's, read
 * with acquire order (io_uring(7)). No more operations are in flight than the completion ring
 * holds, so it never overflows.
 */
public final class IoRing implements AutoCloseable {
    /** Where an operation's result goes: bytes moved, or a negated errno. */
    public interface Completion {
        void ringDone(int result);
    }

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
    /** RWF_DSYNC: this write alone is durable when it completes, as with O_DSYNC (for FUA). */
    private static final int RWF_DSYNC = 2;

    public static final int EINTR = 4;
    public static final int EAGAIN = 11;
    public static final int EBUSY = 16;

    private static final int SQE_SIZE = 64;
    private static final int CQE_SIZE = 16;
    private static final int PARAMS_SIZE = 120;

    private final LibC c;
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
    /** The most operations in flight at once: the completion ring's size, capped by the submission ring's. */
    private final int capacity;

    /** Completions by slot; a free slot is null. The slot is the operation's user_data. */
    private final Completion[] waiting;
    private final int[] freeSlots;
    private int free;
    /** Our submission tail, ahead of what the kernel has seen until {@link #submit}. */
    private int tail;
    /** Queued and not yet taken by the kernel. */
    private int unsubmitted;
    private boolean closed;
    private boolean reaping;

    private IoRing(LibC c, int fd, long params) throws IOException {
        this.c = c;
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
        capacity = Math.min(cqEntries, sqEntries);
        waiting = new Completion[capacity];
        freeSlots = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            freeSlots[i] = capacity - 1 - i;
        }
        free = capacity;
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

    private static IOException error(LibC c, String what) {
        int errno = Runtime.getRuntime(c).getLastError();
        return new IOException(what + ": " + c.strerror(errno) + " (errno " + errno + ")");
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

    /** Operations that may still be queued now: none once the ring is full. */
    public int room() {
        return free;
    }

    /** Queued operations the kernel has not taken yet. */
    public int unsubmitted() {
        return unsubmitted;
    }

    /** Operations queued or in flight. */
    public int inFlight() {
        return capacity - free;
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

    /**
     * Queues a read of {@code length} bytes at {@code offset} of {@code file} into the memory at
     * {@code address}. Returns false, queuing nothing, when the ring is full.
     */
    public boolean read(int file, long offset, long address, int length, Completion done) {
        return queue(OP_READ, file, offset, address, length, 0, done);
    }

    /** Queues a write, as {@link #read}; with {@code dsync} it is durable as it completes (RWF_DSYNC). */
    public boolean write(int file, long offset, long address, int length, boolean dsync, Completion done) {
        return queue(OP_WRITE, file, offset, address, length, dsync ? RWF_DSYNC : 0, done);
    }

    /** Queues an fdatasync of {@code file}. */
    public boolean fdatasync(int file, Completion done) {
        return queue(OP_FSYNC, file, 0, 0, 0, FSYNC_DATASYNC, done);
    }

    private boolean queue(byte op, int file, long offset, long address, int length, int flags, Completion done) {
        if (free == 0 || closed) {
            return false;
        }
        int slot = freeSlots[--free];
        waiting[slot] = done;
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

    /**
     * Hands what is queued to the kernel (one io_uring_enter), then reaps what completed meanwhile.
     * Returns 0, or the errno that stopped the kernel from taking everything: EAGAIN and EBUSY
     * (short of memory, or completions to reap first) and EINTR mean "try again"; what was not
     * taken stays queued for the next submit.
     */
    public int submit() {
        int errno = 0;
        if (unsubmitted > 0) {
            // five arguments: with no GETEVENTS flag the kernel reads neither sig nor sigsz
            long n = c.syscall(SYS_IO_URING_ENTER, fd, unsubmitted, 0, 0, 0);
            if (n < 0) {
                errno = Runtime.getRuntime(c).getLastError();
            } else {
                unsubmitted -= (int) n;
            }
        }
        reap();
        return errno;
    }

    /** Waits in the kernel until at least one completion is there (tests, and draining at close). */
    int await() {
        long n = c.syscall(SYS_IO_URING_ENTER, fd, unsubmitted, 1, ENTER_GETEVENTS, 0, 0);
        if (n < 0) {
            return Runtime.getRuntime(c).getLastError();
        }
        unsubmitted -= (int) n;
        return 0;
    }

    /** Hands every posted completion to its {@link Completion}; returns how many. */
    public int reap() {
        if (reaping) {
            return 0; // a completion submitted from within reap: the outer reap goes on
        }
        reaping = true;
        try {
            return reapAll();
        } finally {
            reaping = false;
        }
    }

    private int reapAll() {
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
                Completion done = waiting[slot];
                waiting[slot] = null;
                freeSlots[free++] = slot;
                count++;
                done.ringDone(result); // may queue again: the slot is free already
            }
        }
        return count;
    }

    /** A negated errno from a completion, in words. */
    public String describe(int result) {
        return c.strerror(-result) + " (errno " + -result + ")";
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
