package io.nvmeof.initiator;

import io.nvmeof.protocol.NvmOpcode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/** {@link BlockDevice} over one namespace of a {@link Controller}; splits transfers at MDTS. */
final class NamespaceDevice implements BlockDevice {
    private final Controller controller;
    private final int nsid;
    private volatile long blocks;
    private final int blockSize;
    private final int blockShift;
    private final int maxTransfer;

    NamespaceDevice(Controller controller, int nsid, long blocks, int blockSize, int maxTransfer) {
        this.controller = controller;
        this.nsid = nsid;
        this.blocks = blocks;
        this.blockSize = blockSize;
        this.blockShift = Integer.numberOfTrailingZeros(blockSize);
        this.maxTransfer = maxTransfer;
    }

    /** The namespace changed size (or went away: 0 blocks). */
    void resize(long newBlocks) {
        this.blocks = newBlocks;
    }

    @Override
    public int nsid() {
        return nsid;
    }

    @Override
    public long size() {
        return blocks << blockShift;
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    private void check(long offset, int length, String what) {
        if (offset < 0 || (offset & (blockSize - 1)) != 0) {
            throw new IllegalArgumentException(what + " offset " + offset + " is not a multiple of the block size "
                    + blockSize);
        }
        if ((length & (blockSize - 1)) != 0) {
            throw new IllegalArgumentException(what + " length " + length + " is not a multiple of the block size "
                    + blockSize);
        }
        if (offset + length > size()) {
            throw new IllegalArgumentException(what + " of " + length + " bytes at " + offset
                    + " goes past the end of the " + size() + "-byte namespace");
        }
    }

    private CompletableFuture<Void> transfer(NvmOpcode op, long offset, ByteBuffer buf) {
        int length = buf.remaining();
        check(offset, length, op == NvmOpcode.READ ? "read" : "write");
        if (length == 0) {
            return CompletableFuture.completedFuture(null);
        }
        int pos = buf.position();
        if (length <= maxTransfer) {
            Command c = io(op, offset, buf, length);
            return c.thenAccept(x -> buf.position(pos + length));
        }
        CompletableFuture<?>[] parts = new CompletableFuture<?>[(length + maxTransfer - 1) / maxTransfer];
        for (int i = 0, at = 0; at < length; i++, at += maxTransfer) {
            int n = Math.min(maxTransfer, length - at);
            ByteBuffer slice = buf.duplicate().position(pos + at).limit(pos + at + n);
            parts[i] = io(op, offset + at, slice, n);
        }
        return CompletableFuture.allOf(parts).thenAccept(x -> buf.position(pos + length));
    }

    private Command io(NvmOpcode op, long offset, ByteBuffer buf, int length) {
        long slba = offset >>> blockShift;
        Command c = new Command(op == NvmOpcode.READ ? "Read" : "Write").opcode(op.code).nsid(nsid)
                .cdw(10, (int) slba).cdw(11, (int) (slba >>> 32)).cdw(12, (length >>> blockShift) - 1);
        if (op == NvmOpcode.READ) {
            c.dataIn(buf, length);
        } else {
            c.dataOut(buf, length);
        }
        controller.submitIo(c);
        return c;
    }

    @Override
    public CompletableFuture<Void> readAsync(long offset, ByteBuffer dst) {
        return transfer(NvmOpcode.READ, offset, dst);
    }

    @Override
    public CompletableFuture<Void> writeAsync(long offset, ByteBuffer src) {
        return transfer(NvmOpcode.WRITE, offset, src);
    }

    @Override
    public CompletableFuture<Void> flushAsync() {
        Command c = new Command("Flush").opcode(NvmOpcode.FLUSH.code).nsid(nsid);
        controller.submitIo(c);
        return c.thenAccept(x -> { });
    }

    private long timeout() {
        return controller.callerTimeoutMillis();
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        Controller.await(readAsync(offset, dst), "read at " + offset, timeout());
    }

    @Override
    public void write(long offset, ByteBuffer src) throws IOException {
        Controller.await(writeAsync(offset, src), "write at " + offset, timeout());
    }

    @Override
    public void flush() throws IOException {
        Controller.await(flushAsync(), "flush", timeout());
    }

    @Override
    public String toString() {
        return controller.uri() + " nsid " + nsid + " (" + size() + " bytes, " + blockSize + "-byte blocks)";
    }
}
