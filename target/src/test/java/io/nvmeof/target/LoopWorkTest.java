package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.target.backend.Backend;
import io.nvmeof.target.backend.NullBackend;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Work that could stall an event loop leaves it, whatever the backend: a Write Zeroes or a
 * deallocate over a large range on a memory backend runs on the I/O executor, while another
 * host on the same (only) loop keeps reading. Asserted by where the work ran, not how long it took.
 */
class LoopWorkTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:loopwork";

    /** A memory backend (never blocking) that records which thread zeroes or deallocates, and can hold it there. */
    static final class Recording implements Backend {
        final Backend inner = new NullBackend(1L << 30, 4096);
        final List<String> threads = new CopyOnWriteArrayList<>();
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch entered = new CountDownLatch(1);

        @Override public long size() { return inner.size(); }
        @Override public int blockSize() { return inner.blockSize(); }
        @Override public boolean blocking() { return false; }
        @Override public void read(long offset, ByteBuffer dst) throws IOException { inner.read(offset, dst); }
        @Override public void write(long offset, ByteBuffer src) throws IOException { inner.write(offset, src); }
        @Override public boolean deallocatedReadsZeroes() { return true; }
        @Override public void flush() { }
        @Override public String describe() { return "recording"; }
        @Override public void close() { }

        @Override
        public void writeZeroes(long offset, long length) {
            record("zeroes " + length);
        }

        @Override
        public void deallocate(long offset, long length) {
            record("deallocate " + length);
        }

        private void record(String what) {
            threads.add(what + " on " + Thread.currentThread().getName());
            if (what.startsWith("zeroes") && !what.equals("zeroes 32768")) {
                entered.countDown();
                try {
                    release.await(10, TimeUnit.SECONDS); // a long zero-fill, held until the test saw the other host served
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    @Test
    void largeZeroingLeavesTheLoopWhileAnotherHostReads() throws Exception {
        Target.Options o = Target.Options.defaults();
        o = o.with(Settings.EVENT_LOOP_THREADS, 1);
        Recording backend = new Recording();
        try (Target target = new Target(o)) {
            Subsystem s = new Subsystem(NQN, "LW1", "loop work", "1.0");
            s.addNamespace(new Namespace(NQN, 1, backend, false, null));
            target.addSubsystem(s);
            InetSocketAddress address = target.listenTcp(new InetSocketAddress("127.0.0.1", 0));
            try (RawHost admin = new RawHost(address); RawHost big = new RawHost(address);
                 RawHost reader = new RawHost(address)) {
                int cntlid = admin.bringUpAdmin(NQN);
                big.bringUpIo(NQN, 1, cntlid);
                reader.bringUpIo(NQN, 2, cntlid);

                // small: on the loop
                assertEquals(Status.SUCCESS, big.command(x -> x.blocks(NvmOpcode.WRITE_ZEROES, 0, 8).psdt(1).nsid(1),
                        null).cqe().status());
                // 65536 blocks of 4 KiB: 256 MiB of zeroes, held in the backend until released
                big.send(big.capsule(x -> x.blocks(NvmOpcode.WRITE_ZEROES, 0, 65536).psdt(1).nsid(1).cid(77), null));
                assertTrue(backend.entered.await(10, TimeUnit.SECONDS), "the zeroing started");
                for (int i = 0; i < 10; i++) {
                    long lba = i * 8L;
                    RawHost.Received d = reader.command(x -> x.blocks(NvmOpcode.READ, lba, 1).psdt(1).nsid(1)
                            .sgl(0, 4096, Sgl.TCP_TRANSPORT), null);
                    assertEquals(PduType.C2H_DATA, d.type(), "read " + i + " served while the zeroing runs");
                    assertTrue(reader.receive().cqe().status().isSuccess());
                }
                backend.release.countDown();
                RawHost.Received done = big.receive();
                assertEquals(77, done.cqe().cid());
                assertTrue(done.cqe().status().isSuccess());

                // deallocate one range of 2^18 blocks (1 GiB)
                ByteBuffer range = Flyweight.allocate(16);
                range.putInt(4, 1 << 18).putLong(8, 0);
                byte[] data = new byte[16];
                range.get(0, data);
                assertTrue(big.command(x -> x.opcode(NvmOpcode.DATASET_MANAGEMENT.code).psdt(1).nsid(1)
                        .datasetManagement(1, 1 << 2).sgl(0, 16, Sgl.IN_CAPSULE), data).cqe().status().isSuccess());
            }
        }
        List<String> t = backend.threads;
        assertEquals(3, t.size(), t.toString());
        assertTrue(t.get(0).startsWith("zeroes 32768 on nvmeof-target"), "8 blocks on the event loop: " + t);
        assertTrue(t.get(1).startsWith("zeroes 268435456 on nvmeof-io-"), "256 MiB on the I/O executor: " + t);
        assertTrue(t.get(2).startsWith("deallocate 1073741824 on nvmeof-io-"), "1 GiB deallocate off the loop: " + t);
    }
}
