package io.nvmeof.initiator;

import io.nvmeof.protocol.CopyRange;
import io.nvmeof.protocol.IdentifyNamespace;
import io.nvmeof.protocol.NvmOpcode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * {@link BlockDevice} over one namespace of a {@link Controller}, or of a {@link Multipath} set of
 * them (the {@link IoSink} its commands go to); splits transfers at MDTS.
 */
final class NamespaceDevice implements BlockDevice {
    /** Dataset Management attribute AD: deallocate the ranges. */
    private static final int DSM_DEALLOCATE = 1 << 2;
    private final IoSink controller;
    private final int nsid;
    private volatile long blocks;
    private final int blockSize;
    private final int blockShift;
    private final int maxTransfer;

    NamespaceDevice(IoSink controller, int nsid, long blocks, int blockSize, int maxTransfer) {
        this.controller = controller;
        this.nsid = nsid;
        this.blocks = blocks;
        this.blockSize = blockSize;
        this.blockShift = Integer.numberOfTrailingZeros(blockSize);
        this.maxTransfer = maxTransfer;
    }

    private volatile boolean readOnly;

    /** Copy limits from Identify Namespace: blocks per range (MSSRL), per command (MCL), ranges (MSRC + 1); 0: no Copy. */
    private volatile int maxRangeBlocks;
    private volatile long maxCopyBlocks;
    private volatile int maxRanges;

    /** What Identify Namespace says now: its size (0 blocks: gone), write protection, Copy limits. */
    void update(IdentifyNamespace ns) {
        this.blocks = ns.nsze();
        this.readOnly = (ns.nsattr() & 1) != 0;
        this.maxRangeBlocks = ns.mssrl();
        this.maxCopyBlocks = ns.mcl();
        this.maxRanges = ns.msrc() + 1;
    }

    /** Bytes one Copy command may move here; 0 where the namespace offers no Copy. */
    long maxCopyBytes() {
        return maxRangeBlocks == 0 ? 0 : Math.min(maxCopyBlocks, (long) maxRangeBlocks * maxRanges) << blockShift;
    }

    /**
     * Copy commands (source range format 0), each as many ranges of at most MSSRL blocks as MSRC
     * and MCL allow; one after another where source and destination overlap (so the result is a
     * memmove's), all at once otherwise. Where the namespace offers no Copy, the host reads and
     * writes the data itself, a chunk of MDTS at a time.
     */
    @Override
    public CompletableFuture<Void> copyAsync(long from, long to, long length) {
        checkRange(from, length, "copy source");
        checkRange(to, length, "copy destination");
        long perCommand = maxCopyBytes();
        boolean overlap = from < to + length && to < from + length;
        if (perCommand == 0) {
            return copyThroughHost(from, to, length);
        }
        boolean backward = overlap && to > from;
        List<long[]> pieces = new ArrayList<>();
        for (long done = 0; done < length; ) {
            long n = Math.min(perCommand, length - done);
            pieces.add(new long[] {backward ? length - done - n : done, n});
            done += n;
        }
        if (!overlap) {
            List<CompletableFuture<?>> parts = new ArrayList<>();
            for (long[] p : pieces) {
                parts.add(copyCommand(from + p[0], to + p[0], p[1]));
            }
            return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0]));
        }
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (long[] p : pieces) {
            chain = chain.thenCompose(x -> copyCommand(from + p[0], to + p[0], p[1]));
        }
        return chain;
    }

    /** One Copy of {@code length} bytes (at most {@link #maxCopyBytes}) as consecutive ranges of at most MSSRL blocks. */
    private CompletableFuture<Void> copyCommand(long from, long to, long length) {
        long blocksLeft = length >>> blockShift;
        int ranges = (int) ((blocksLeft + maxRangeBlocks - 1) / maxRangeBlocks);
        ByteBuffer d = ByteBuffer.allocateDirect(ranges * CopyRange.SIZE).order(ByteOrder.LITTLE_ENDIAN);
        long slba = from >>> blockShift;
        for (int i = 0; i < ranges; i++) {
            int nlb = (int) Math.min(maxRangeBlocks, blocksLeft);
            d.putLong(i * CopyRange.SIZE + CopyRange.SLBA_OFFSET, slba)
                    .putShort(i * CopyRange.SIZE + CopyRange.NLB_OFFSET, (short) (nlb - 1));
            slba += nlb;
            blocksLeft -= nlb;
        }
        long sdlba = to >>> blockShift;
        int n = ranges;
        Command c = new Command("Copy").opcode(NvmOpcode.COPY.code).nsid(nsid).cdw(10, (int) sdlba)
                .cdw(11, (int) (sdlba >>> 32)).cdw(12, n - 1).dataOut(d, d.capacity());
        controller.submitIo(c);
        return c.thenAccept(x -> { });
    }

    /** A copy through this host: read a chunk, write it; backward where the ranges overlap that way. */
    private CompletableFuture<Void> copyThroughHost(long from, long to, long length) {
        int chunk = (int) Math.min(length, Math.max(blockSize, maxTransfer / blockSize * (long) blockSize));
        ByteBuffer buf = ByteBuffer.allocateDirect(Math.max(chunk, blockSize));
        boolean backward = to > from && to < from + length;
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (long done = 0; done < length; ) {
            int n = (int) Math.min(chunk, length - done);
            long at = backward ? length - done - n : done;
            chain = chain.thenCompose(x -> readAsync(from + at, buf.clear().limit(n)))
                    .thenCompose(x -> writeAsync(to + at, buf.flip()));
            done += n;
        }
        return chain;
    }

    @Override
    public void copy(long from, long to, long length) throws IOException {
        sync(() -> copyAsync(from, to, length), "copy of " + length + " bytes from " + from + " to " + to);
    }

    @Override
    public boolean readOnly() {
        return readOnly;
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

    private CompletableFuture<Void> transfer(NvmOpcode op, long offset, ByteBuffer buf) {
        int length = buf.remaining();
        checkRange(offset, length, op == NvmOpcode.READ ? "read" : "write");
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
        Command c = new Command(op == NvmOpcode.READ ? "Read" : "Write");
        fill(c, op, offset, buf, length);
        controller.submitIo(c);
        return c;
    }

    /** Sets a read or write command's fields. */
    void fill(Command c, NvmOpcode op, long offset, ByteBuffer buf, int length) {
        long slba = offset >>> blockShift;
        c.sqe.blocks(op, slba, length >>> blockShift).nsid(nsid);
        if (op == NvmOpcode.READ) {
            c.dataIn(buf, length);
        } else {
            c.dataOut(buf, length);
        }
    }

    void submit(Command c) {
        controller.submitIo(c);
    }

    /** Checks a transfer that must fit one command (the callback form does not split). */
    void checkSingle(long offset, int length, String what) {
        checkRange(offset, length, what);
        if (length == 0 || length > maxTransfer) {
            throw new IllegalArgumentException(what + " of " + length + " bytes: one request moves 1.." + maxTransfer + " bytes");
        }
    }

    @Override
    public int maxTransferSize() {
        return maxTransfer;
    }

    @Override
    public Reservations reservations() {
        return new Reservations(controller, nsid);
    }

    @Override
    public IoRequest newRequest() {
        return new IoRequest(this);
    }

    /** Ranges of at most 2^32 - 1 blocks, 256 per Dataset Management command. */
    @Override
    public CompletableFuture<Void> discardAsync(long offset, long length) {
        checkRange(offset, length, "discard");
        List<CompletableFuture<?>> parts = new ArrayList<>();
        long block = offset >>> blockShift;
        long blocksLeft = length >>> blockShift;
        while (blocksLeft > 0) {
            ByteBuffer ranges = ByteBuffer.allocateDirect(256 * 16).order(ByteOrder.LITTLE_ENDIAN);
            int n = 0;
            while (blocksLeft > 0 && n < 256) {
                long count = Math.min(blocksLeft, 0xffffffffL);
                ranges.putInt(n * 16 + 4, (int) count).putLong(n * 16 + 8, block);
                block += count;
                blocksLeft -= count;
                n++;
            }
            int count = n;
            Command c = Command.of("Dataset Management", q -> q.datasetManagement(count, DSM_DEALLOCATE).nsid(nsid))
                    .dataOut(ranges.limit(n * 16), n * 16);
            controller.submitIo(c);
            parts.add(c);
        }
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0]));
    }

    /** At most 65536 blocks per Write Zeroes. */
    @Override
    public CompletableFuture<Void> writeZeroesAsync(long offset, long length) {
        checkRange(offset, length, "write zeroes");
        List<CompletableFuture<?>> parts = new ArrayList<>();
        long block = offset >>> blockShift;
        long blocksLeft = length >>> blockShift;
        while (blocksLeft > 0) {
            int count = (int) Math.min(blocksLeft, 65536);
            long first = block;
            Command c = Command.of("Write Zeroes", q -> q.blocks(NvmOpcode.WRITE_ZEROES, first, count).nsid(nsid));
            controller.submitIo(c);
            parts.add(c);
            block += count;
            blocksLeft -= count;
        }
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0]));
    }

    private void checkRange(long offset, long length, String what) {
        if (length < 0 || (length & (blockSize - 1)) != 0) {
            throw new IllegalArgumentException(what + " length " + length + " is not a multiple of the block size " + blockSize);
        }
        if (offset < 0 || (offset & (blockSize - 1)) != 0) {
            throw new IllegalArgumentException(what + " offset " + offset + " is not a multiple of the block size " + blockSize);
        }
        if (offset + length > size()) {
            throw new IllegalArgumentException(what + " of " + length + " bytes at " + offset
                    + " goes past the end of the " + size() + "-byte namespace");
        }
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        sync(() -> discardAsync(offset, length), "discard at " + offset);
    }

    @Override
    public void writeZeroes(long offset, long length) throws IOException {
        sync(() -> writeZeroesAsync(offset, length), "write zeroes at " + offset);
    }

    @Override
    public CompletableFuture<Void> readAsync(long offset, ByteBuffer... dsts) {
        return vectored(NvmOpcode.READ, offset, dsts);
    }

    @Override
    public CompletableFuture<Void> writeAsync(long offset, ByteBuffer... srcs) {
        return vectored(NvmOpcode.WRITE, offset, srcs);
    }

    /** Scatter/gather: every buffer but the last must hold whole blocks; each goes as its own transfer. */
    private CompletableFuture<Void> vectored(NvmOpcode op, long offset, ByteBuffer[] bufs) {
        List<CompletableFuture<?>> parts = new ArrayList<>();
        long at = offset;
        for (ByteBuffer b : bufs) {
            int n = b.remaining();
            parts.add(transfer(op, at, b));
            at += n;
        }
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0]));
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

    /** Waits for an asynchronous operation as the synchronous forms do (never on an event loop). */
    private void sync(Supplier<CompletableFuture<Void>> op, String what) throws IOException {
        controller.checkBlockingAllowed(); // before anything is sent
        Controller.await(op.get(), what, controller.callerTimeoutMillis());
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        sync(() -> readAsync(offset, dst), "read at " + offset);
    }

    @Override
    public void write(long offset, ByteBuffer src) throws IOException {
        sync(() -> writeAsync(offset, src), "write at " + offset);
    }

    @Override
    public void flush() throws IOException {
        sync(() -> flushAsync(), "flush");
    }

    @Override
    public String toString() {
        return controller.describe() + " nsid " + nsid + " (" + size() + " bytes, " + blockSize + "-byte blocks)";
    }
}
