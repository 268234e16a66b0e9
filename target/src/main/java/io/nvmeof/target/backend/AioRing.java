package io.nvmeof.target.backend;

import io.netty.util.internal.PlatformDependent;
import io.nvmeof.target.backend.LinuxIo.LibC;
import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import jnr.ffi.Platform;

/**
 * Linux native AIO (io_setup, io_submit) for O_DIRECT files and block devices, with the
 * completions read from the kernel's event ring in our own memory, as SPDK's aio bdev and fio's
 * {@code userspace_reap} do: no system call to collect them.
 *
 * <p>Why a second {@link KernelQueue} beside {@link IoRing}: io_uring posts a read's completion
 * from task work, which must run on the submitting thread, so each completion first interrupts
 * (or wakes) that thread; in a virtual machine that interrupt is an exit to the hypervisor. AIO
 * writes the event into the ring from the device's interrupt and signals the eventfd from there,
 * so a polling loop sees it at its next poll. Measured on the 2-core VM's virtio disk at QD1,
 * polling for the completion: 58 us a 4 KiB read with AIO against 66 us with io_uring (fio).
 * AIO is asynchronous only for O_DIRECT: a buffered file would block in io_submit, so those stay
 * with io_uring.
 *
 * <p>The ring's layout (fs/aio.c, {@code struct aio_ring}): id, nr, head, tail, magic,
 * compat_features, incompat_features, header_length (32), then {@code nr} events of 32 bytes
 * (data, obj, res, res2). The tail is the kernel's, read with acquire order; the head is ours,
 * written with release order once an event is read (the kernel reads it back to know how many
 * slots are free). A kernel whose ring has another magic or incompatible features is refused.
 */
public final class AioRing extends KernelQueue {
    private static final boolean X86 = Platform.getNativePlatform().getCPU() == Platform.CPU.X86_64;
    private static final long SYS_IO_SETUP = X86 ? 206 : 0;
    private static final long SYS_IO_DESTROY = X86 ? 207 : 1;
    private static final long SYS_IO_SUBMIT = X86 ? 209 : 2;

    private static final int AIO_RING_MAGIC = 0xa10a10a1;
    private static final int RING_HEADER = 32;
    private static final int EVENT_SIZE = 32;
    private static final int IOCB_SIZE = 64;
    private static final short CMD_PREAD = 0;
    private static final short CMD_PWRITE = 1;
    private static final short CMD_FDSYNC = 3;
    /** The iocb's aio_resfd is an eventfd to signal as it completes. */
    private static final int IOCB_FLAG_RESFD = 1;

    /** The kernel's event ring, mapped into our memory; its address is the AIO context's id. */
    private final long ctx;
    private final int nr;
    /** One control block per slot, and the addresses of those queued but not yet submitted, in order. */
    private final long iocbs;
    private final long pending;
    private final int eventFd;

    private AioRing(LibC c, long ctx, int capacity, int eventFd) {
        super(c, capacity);
        this.ctx = ctx;
        this.nr = PlatformDependent.getInt(ctx + 4);
        this.eventFd = eventFd;
        iocbs = PlatformDependent.allocateMemory((long) IOCB_SIZE * capacity);
        pending = PlatformDependent.allocateMemory(8L * capacity);
    }

    /**
     * An AIO context for up to {@code entries} operations in flight; each completion signals
     * {@code eventFd} (-1: none). Throws where the kernel refuses AIO (a seccomp filter,
     * {@code fs.aio-max-nr} reached) or its event ring cannot be read in user space.
     */
    public static AioRing open(int entries, int eventFd) throws IOException {
        if (!PlatformDependent.hasUnsafe()) {
            throw new IOException("AIO needs raw memory access (sun.misc.Unsafe), which this JVM does not allow");
        }
        LibC c = LinuxIo.libc();
        long id = PlatformDependent.allocateMemory(8);
        long ctx;
        try {
            PlatformDependent.putLong(id, 0);
            if (c.syscall(SYS_IO_SETUP, entries, id, 0, 0, 0) < 0) {
                throw error(c, "io_setup");
            }
            ctx = PlatformDependent.getLong(id);
        } finally {
            PlatformDependent.freeMemory(id);
        }
        if (PlatformDependent.getInt(ctx + 16) != AIO_RING_MAGIC || PlatformDependent.getInt(ctx + 24) != 0
                || PlatformDependent.getInt(ctx + 28) != RING_HEADER || PlatformDependent.getInt(ctx + 4) < entries) {
            c.syscall(SYS_IO_DESTROY, ctx, 0, 0, 0, 0);
            throw new IOException("this kernel's AIO event ring cannot be read in user space");
        }
        return new AioRing(c, ctx, entries, eventFd);
    }

    @Override
    public boolean read(int file, long offset, long address, int length, Completion done) {
        return queue(CMD_PREAD, file, offset, address, length, 0, done);
    }

    @Override
    public boolean write(int file, long offset, long address, int length, boolean dsync, Completion done) {
        return queue(CMD_PWRITE, file, offset, address, length, dsync ? RWF_DSYNC : 0, done);
    }

    @Override
    public boolean fdatasync(int file, Completion done) {
        return queue(CMD_FDSYNC, file, 0, 0, 0, 0, done);
    }

    private boolean queue(short op, int file, long offset, long address, int length, int rwFlags, Completion done) {
        int slot = takeSlot(done);
        if (slot < 0) {
            return false;
        }
        long iocb = iocbs + (long) slot * IOCB_SIZE;
        PlatformDependent.setMemory(iocb, IOCB_SIZE, (byte) 0);
        PlatformDependent.putLong(iocb, slot); // aio_data: comes back in the event
        PlatformDependent.putInt(iocb + 12, rwFlags);
        PlatformDependent.putShort(iocb + 16, op);
        PlatformDependent.putInt(iocb + 20, file);
        PlatformDependent.putLong(iocb + 24, address);
        PlatformDependent.putLong(iocb + 32, length);
        PlatformDependent.putLong(iocb + 40, offset);
        if (eventFd >= 0) {
            PlatformDependent.putInt(iocb + 56, IOCB_FLAG_RESFD);
            PlatformDependent.putInt(iocb + 60, eventFd);
        }
        PlatformDependent.putLong(pending + 8L * unsubmitted, iocb);
        unsubmitted++;
        return true;
    }

    /**
     * io_submit for what is queued (the kernel copies the control blocks in), then a reap. An
     * operation the kernel refuses outright (a bad descriptor, a misaligned O_DIRECT buffer)
     * completes with that errno; those behind it are submitted on.
     */
    @Override
    public int submit() {
        int errno = 0;
        while (unsubmitted > 0 && !closed) {
            long n = c.syscall(SYS_IO_SUBMIT, ctx, unsubmitted, pending, 0, 0);
            if (n > 0) {
                dropSubmitted((int) n);
                continue;
            }
            errno = n < 0 ? lastErrno() : EAGAIN;
            if (errno == EAGAIN || errno == EINTR || errno == EBUSY) {
                break; // stays queued: the next submit tries again
            }
            int slot = (int) PlatformDependent.getLong(PlatformDependent.getLong(pending));
            dropSubmitted(1);
            complete(slot, -errno); // may queue more, behind the rest
            errno = 0;
        }
        reap();
        return errno;
    }

    /** The first {@code n} queued control blocks are the kernel's now. */
    private void dropSubmitted(int n) {
        unsubmitted -= n;
        if (unsubmitted > 0) {
            PlatformDependent.copyMemory(pending + 8L * n, pending, 8L * unsubmitted);
        }
    }

    /** Waits (polling the ring) until at least one completion is there: tests, and draining at close. */
    @Override
    int await() {
        int errno = unsubmitted > 0 ? submitOnly() : 0;
        while (errno == 0 && inFlight() > 0 && PlatformDependent.getInt(ctx + 12) == PlatformDependent.getInt(ctx + 8)) {
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(20));
            VarHandle.fullFence(); // read the kernel's tail afresh
        }
        return errno;
    }

    private int submitOnly() {
        long n = c.syscall(SYS_IO_SUBMIT, ctx, unsubmitted, pending, 0, 0);
        if (n < 0) {
            return lastErrno();
        }
        dropSubmitted((int) n);
        return 0;
    }

    @Override
    int reapAll() {
        int head = PlatformDependent.getInt(ctx + 8);
        int count = 0;
        while (true) {
            int tail = PlatformDependent.getInt(ctx + 12);
            VarHandle.acquireFence(); // the events up to the tail are there before we read them
            if (head == tail) {
                break;
            }
            while (head != tail) {
                long event = ctx + RING_HEADER + (long) head * EVENT_SIZE;
                int slot = (int) PlatformDependent.getLong(event);
                long result = PlatformDependent.getLong(event + 16);
                head = head + 1 == nr ? 0 : head + 1;
                VarHandle.releaseFence(); // done reading the event before the kernel may reuse its place
                PlatformDependent.putInt(ctx + 8, head);
                count++;
                complete(slot, (int) result); // may queue again: the slot is free already
            }
        }
        return count;
    }

    /**
     * Destroys the context: the kernel waits for what is in flight, whose completions are not
     * delivered, and unmaps the ring.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        c.syscall(SYS_IO_DESTROY, ctx, 0, 0, 0, 0);
        PlatformDependent.freeMemory(iocbs);
        PlatformDependent.freeMemory(pending);
    }
}
