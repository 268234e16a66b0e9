package io.nvmeof.initiator;

import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Status;
import java.nio.ByteBuffer;

/**
 * A reusable I/O for high-rate users: make a few once ({@link BlockDevice#newRequest()}),
 * then read, write or flush with them again and again; completion goes to a callback, and
 * nothing is allocated per call. One operation at a time per request; a transfer must fit
 * in one command ({@link BlockDevice#maxTransferSize()}). The buffer's position and limit
 * are left alone.
 */
public final class IoRequest extends Command {
    private final NamespaceDevice device;
    private IoCallback callback;
    private volatile boolean busy;
    /** Free for the caller: whatever it needs to find its context again in the callback. */
    public Object attachment;

    IoRequest(NamespaceDevice device) {
        super("I/O request");
        this.device = device;
    }

    /** Reads {@code dst.remaining()} bytes at {@code offset}. */
    public void read(long offset, ByteBuffer dst, IoCallback cb) {
        start(NvmOpcode.READ, offset, dst, cb);
    }

    /** Writes {@code src.remaining()} bytes at {@code offset}. */
    public void write(long offset, ByteBuffer src, IoCallback cb) {
        start(NvmOpcode.WRITE, offset, src, cb);
    }

    public void flush(IoCallback cb) {
        begin(cb);
        opcode(NvmOpcode.FLUSH.code).nsid(device.nsid());
        direction = NONE;
        data = null;
        length = 0;
        submit();
    }

    private void start(NvmOpcode op, long offset, ByteBuffer buf, IoCallback cb) {
        int len = buf.remaining();
        device.checkSingle(offset, len, op == NvmOpcode.READ ? "read" : "write");
        begin(cb);
        try {
            device.fill(this, op, offset, buf, len);
        } catch (RuntimeException e) {
            busy = false;
            throw e;
        }
        submit();
    }

    private void submit() {
        try {
            device.submit(this);
        } catch (RuntimeException e) {
            busy = false;
            throw e;
        }
    }

    private void begin(IoCallback cb) {
        if (busy) {
            throw new IllegalStateException("this request is still in flight");
        }
        busy = true;
        callback = cb;
        timedOut = false;
        expiresAtNanos = 0;
        noPathSinceNanos = 0;
        sqe.clear();
    }

    /** Whether an operation is in flight. */
    public boolean busy() {
        return busy;
    }

    public BlockDevice device() {
        return device;
    }

    @Override
    void finish(Status s, long res) {
        if (dataCorrupt && s.isSuccess()) {
            s = Status.TRANSIENT_TRANSPORT_ERROR;
        }
        if (multipath != null && multipath.completed(this, s, null)) {
            return; // a path error: it runs again on another path
        }
        this.status = s;
        this.result = res;
        done(s.isSuccess() ? null : new NvmeStatusException(name(), s));
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        done(ex);
        return true;
    }

    private void done(Throwable error) {
        IoCallback cb = callback;
        busy = false;
        try {
            cb.completed(this, error);
        } catch (Throwable t) {
            // a callback's own failure must not take the queue (or the other requests) with it
            System.getLogger(IoRequest.class.getName()).log(System.Logger.Level.WARNING, "I/O callback failed", t);
        }
    }
}
