package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.CopyRange;
import io.nvmeof.protocol.IdentifyCns;
import io.nvmeof.protocol.IdentifyController;
import io.nvmeof.protocol.IdentifyNamespace;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.tcp.Pdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.target.backend.Backend;
import io.nvmeof.target.backend.FileBackend;
import io.nvmeof.target.backend.RamBackend;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Copy command on the wire: Identify's limits, copies read back, and each refusal with its status. */
class CopyCommandTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:copy";
    static final int BS = 4096;

    /** Copy descriptors for ranges {slba, blocks}, NLB 0's based. */
    static byte[] ranges(long[]... r) {
        ByteBuffer b = ByteBuffer.allocate(r.length * CopyRange.SIZE).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < r.length; i++) {
            b.putLong(i * CopyRange.SIZE + CopyRange.SLBA_OFFSET, r[i][0])
                    .putShort(i * CopyRange.SIZE + CopyRange.NLB_OFFSET, (short) (r[i][1] - 1));
        }
        return b.array();
    }

    static Status copy(RawHost io, long sdlba, int cdw12Extra, byte[] descriptors) throws IOException {
        int nr = descriptors.length / CopyRange.SIZE - 1;
        return io.command(q -> q.opcode(NvmOpcode.COPY.code).psdt(1).nsid(1).cdw(10, (int) sdlba).cdw(11, (int) (sdlba >>> 32))
                .cdw(12, nr | cdw12Extra).sgl(0, descriptors.length, Sgl.IN_CAPSULE), descriptors).cqe().status();
    }

    /** Serves {@code backend} as namespace 1 of {@link #NQN} on a TCP port of loopback: its address. */
    static InetSocketAddress serve(Target target, Backend backend) throws IOException {
        Subsystem s = new Subsystem(NQN, "C1", "copy", "1.0");
        s.addNamespace(new Namespace(NQN, 1, backend, false, null));
        target.addSubsystem(s);
        return target.listenTcp(new InetSocketAddress("127.0.0.1", 0));
    }

    static ByteBuffer identify(RawHost admin, int cns) throws IOException {
        admin.send(admin.capsule(q -> q.opcode(AdminOpcode.IDENTIFY.code).psdt(1).nsid(cns == IdentifyCns.NAMESPACE ? 1 : 0)
                .identifyCns(cns).sgl(0, 4096, Sgl.TCP_TRANSPORT), null));
        RawHost.Received d = admin.receive();
        assertEquals(PduType.C2H_DATA, d.type());
        ByteBuffer page = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
        page.put(0, d.bytes(), d.u8(Pdu.PDO_OFFSET), 4096);
        assertEquals(Status.SUCCESS, admin.receive().cqe().status());
        return page;
    }

    void copiesAndRefusals(Backend backend) throws Exception {
        byte[] data = new byte[64 * BS];
        new Random(3).nextBytes(data);
        ByteBuffer src = ByteBuffer.allocateDirect(data.length + BS).alignedSlice(BS);
        src.put(data).flip();
        backend.write(0, src);
        try (Target target = new Target()) {
            InetSocketAddress address = serve(target, backend);
            Subsystem s = target.subsystem(NQN);
            Namespace ns = s.namespace(1);
            try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
                io.bringUpIo(NQN, 1, admin.bringUpAdmin(NQN));
                ByteBuffer ctrl = identify(admin, IdentifyCns.CONTROLLER);
                assertEquals(1 << 8, ctrl.getShort(IdentifyController.ONCS_OFFSET) & 1 << 8, "ONCS: Copy");
                assertEquals(1, ctrl.getShort(IdentifyController.OCFS_OFFSET), "OCFS: source range format 0");
                IdentifyNamespace id = new IdentifyNamespace().wrap(identify(admin, IdentifyCns.NAMESPACE), 0);
                long mcl = (64L << 20) / BS;
                assertEquals(mcl, id.mcl());
                assertEquals(mcl, id.mssrl(), "MSSRL: NLB's reach, within MCL");
                assertEquals(127, id.msrc());

                // one range: blocks 0..63 to 256..319 (SPDK's simple_copy); then two ranges back to back
                assertEquals(Status.SUCCESS, copy(io, 256, 0, ranges(new long[] {0, 64})));
                assertEquals(Status.SUCCESS, copy(io, 512, 0, ranges(new long[] {10, 5}, new long[] {40, 3})));
                // overlapping: blocks 0..31 to 16..47, as a memmove
                assertEquals(Status.SUCCESS, copy(io, 16, 0, ranges(new long[] {0, 32})));
                byte[] expect = new byte[1024 * BS];
                System.arraycopy(data, 0, expect, 0, data.length);
                System.arraycopy(data, 0, expect, 256 * BS, 64 * BS);
                System.arraycopy(data, 10 * BS, expect, 512 * BS, 5 * BS);
                System.arraycopy(data, 40 * BS, expect, 517 * BS, 3 * BS);
                System.arraycopy(expect, 0, expect, 16 * BS, 32 * BS);
                // exactly the namespace: an aligned slice is a block longer where the allocation happens to be aligned
                ByteBuffer all = ByteBuffer.allocateDirect(1024 * BS + BS).alignedSlice(BS).limit(1024 * BS);
                backend.read(0, all);
                byte[] got = new byte[1024 * BS];
                all.flip().get(got);
                assertArrayEquals(expect, got);
                assertEquals((64 + 5 + 3 + 32) * BS, ns.stats().bytes(IoStats.Op.COPY), "bytes copied, counted");

                assertEquals(Status.INVALID_FIELD, copy(io, 600, 1 << 8, ranges(new long[] {0, 1})), "format 1");
                assertEquals(Status.COMMAND_SIZE_LIMIT_EXCEEDED, copy(io, 600, 0, ranges(new long[] {0, mcl + 1})),
                        "a range past MSSRL");
                long[][] seventeen = new long[17][];
                java.util.Arrays.fill(seventeen, new long[] {0, 1024}); // each within the namespace, 17 x 1024 > MCL
                assertEquals(Status.COMMAND_SIZE_LIMIT_EXCEEDED, copy(io, 0, 0, ranges(seventeen)), "past MCL in all");
                assertEquals(Status.COMMAND_SIZE_LIMIT_EXCEEDED, copy(io, 600, 0, new byte[129 * CopyRange.SIZE]),
                        "129 ranges, past MSRC");
                long blocks = ns.blocks();
                assertEquals(Status.LBA_OUT_OF_RANGE, copy(io, 600, 0, ranges(new long[] {blocks - 1, 2})), "source past the end");
                assertEquals(Status.LBA_OUT_OF_RANGE, copy(io, blocks - 1, 0, ranges(new long[] {0, 2})), "destination past the end");
                // near 2^63 the sum past the end wraps negative (issue 47, item 18)
                assertEquals(Status.LBA_OUT_OF_RANGE, copy(io, 600, 0, ranges(new long[] {Long.MAX_VALUE - 1, 2})), "source at 2^63");
                assertEquals(Status.LBA_OUT_OF_RANGE, copy(io, Long.MAX_VALUE - 1, 0, ranges(new long[] {0, 2})),
                        "destination at 2^63");
                s.readOnly(1, true);
                assertEquals(Status.NAMESPACE_WRITE_PROTECTED, copy(io, 600, 0, ranges(new long[] {0, 1})));
            }
        }
    }

    @Test
    void ram() throws Exception {
        copiesAndRefusals(new RamBackend(4 << 20, BS));
    }

    @Test
    void file(@TempDir Path dir) throws Exception {
        try (FileBackend f = FileBackend.open(dir.resolve("ns.img"), 4 << 20, BS, false, true)) {
            copiesAndRefusals(f);
        }
    }

    /**
     * Issue 47, item 15: a controller's Copies past its budget ({@link Settings#MAX_COPY_IN_FLIGHT})
     * wait their turn, and each goes to the I/O executor a step at a time: eight 4 MiB Copies at once
     * against a 1 MiB budget run one after another, 4 steps each: the backend never copies for two at
     * once (a step is handed the next only after it returned, and the next Copy gets the budget only
     * after the last step of the one before), where without the budget there would be eight whole
     * Copies at once. Counted, not timed.
     */
    @Test
    void copiesPastTheControllersBudgetWaitAndGoAStepAtATime() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        AtomicInteger tasks = new AtomicInteger();
        ExecutorService counting = new AbstractExecutorService() {
            @Override
            public void execute(Runnable command) {
                tasks.incrementAndGet();
                pool.execute(command);
            }

            @Override
            public void shutdown() {
                pool.shutdown();
            }

            @Override
            public List<Runnable> shutdownNow() {
                return pool.shutdownNow();
            }

            @Override
            public boolean isShutdown() {
                return pool.isShutdown();
            }

            @Override
            public boolean isTerminated() {
                return pool.isTerminated();
            }

            @Override
            public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
                return pool.awaitTermination(timeout, unit);
            }
        };
        Target.Options o = Target.Options.defaults().with(Settings.MAX_COPY_IN_FLIGHT, 1L << 20).withIoExecutor(counting);
        try (Target target = new Target(o)) {
            CopyCounting backend = new CopyCounting(new RamBackend(64 << 20, BS));
            InetSocketAddress address = serve(target, backend);
            Subsystem s = target.subsystem(NQN);
            Namespace ns = s.namespace(1);
            try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
                io.bringUpIo(NQN, 1, admin.bringUpAdmin(NQN));
                int copies = 8;
                int blocks = (4 << 20) / BS;
                for (int i = 0; i < copies; i++) {
                    byte[] d = ranges(new long[] {0, blocks});
                    long sdlba = (long) (i + 1) * blocks;
                    io.send(io.capsule(q -> q.opcode(NvmOpcode.COPY.code).psdt(1).nsid(1).cdw(10, (int) sdlba)
                            .cdw(11, 0).cdw(12, 0).sgl(0, d.length, Sgl.IN_CAPSULE), d));
                }
                for (int i = 0; i < copies; i++) {
                    assertEquals(Status.SUCCESS, io.receive().cqe().status());
                }
                assertEquals(copies * 4, tasks.get(), "each 4 MiB Copy went to the executor in 1 MiB steps");
                assertEquals(1, backend.most.get(), "Copy steps in the backend at once");
                assertEquals(copies * (4L << 20), ns.stats().bytes(IoStats.Op.COPY));
            }
        } finally {
            pool.shutdown();
        }
    }

    /** A RAM backend that counts how many copies run in it at once. */
    static final class CopyCounting implements Backend {
        final RamBackend ram;
        final AtomicInteger running = new AtomicInteger();
        final AtomicInteger most = new AtomicInteger();

        CopyCounting(RamBackend ram) {
            this.ram = ram;
        }

        @Override public long size() { return ram.size(); }
        @Override public int blockSize() { return ram.blockSize(); }
        @Override public boolean blocking() { return ram.blocking(); }
        @Override public void read(long offset, ByteBuffer dst) throws IOException { ram.read(offset, dst); }
        @Override public void write(long offset, ByteBuffer src) throws IOException { ram.write(offset, src); }
        @Override public void flush() throws IOException { ram.flush(); }
        @Override public String describe() { return "copy-counting " + ram.describe(); }
        @Override public void close() throws IOException { ram.close(); }

        @Override
        public void copy(long from, long to, long length, ByteBuffer bounce) throws IOException {
            most.accumulateAndGet(running.incrementAndGet(), Math::max);
            try {
                ram.copy(from, to, length, bounce);
            } finally {
                running.decrementAndGet();
            }
        }
    }
}
