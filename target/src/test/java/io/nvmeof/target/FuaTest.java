package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.protocol.NvmOpcode;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.target.backend.Backend;
import io.nvmeof.target.backend.RamBackend;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A Write with Force Unit Access is on stable storage before it completes; a plain one need not be. */
class FuaTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:fua";

    /** Counts flushes of a RAM backend and claims to block, as a file does. */
    static final class CountingBackend implements Backend {
        final RamBackend ram = new RamBackend(1 << 20, 4096);
        final AtomicInteger flushes = new AtomicInteger();

        @Override public long size() { return ram.size(); }
        @Override public int blockSize() { return ram.blockSize(); }
        @Override public boolean blocking() { return true; }
        @Override public void read(long offset, ByteBuffer dst) { ram.read(offset, dst); }
        @Override public void write(long offset, ByteBuffer src) { ram.write(offset, src); }
        @Override public void flush() { flushes.incrementAndGet(); }
        @Override public String describe() { return "counting"; }
        @Override public void close() { }
    }

    @Test
    void fuaWriteFlushesBeforeCompletion() throws IOException {
        CountingBackend backend = new CountingBackend();
        try (Target target = new Target()) {
            Subsystem s = new Subsystem(NQN, "F1", "fua", "1.0");
            s.addNamespace(new Namespace(NQN, 1, backend, false, null));
            target.addSubsystem(s);
            InetSocketAddress address = target.listenTcp(new InetSocketAddress("127.0.0.1", 0));
            try (RawHost admin = new RawHost(address); RawHost io = new RawHost(address)) {
                int cntlid = admin.bringUpAdmin(NQN);
                io.bringUpIo(NQN, 1, cntlid);
                byte[] block = new byte[4096];
                assertTrue(io.command(q -> q.opcode(NvmOpcode.WRITE.code).psdt(1).nsid(1).slba(1).blockCount(1)
                        .sgl(0, 4096, Sgl.IN_CAPSULE), block).cqe().status().isSuccess());
                assertEquals(0, backend.flushes.get(), "a plain write does not flush");
                assertTrue(io.command(q -> q.opcode(NvmOpcode.WRITE.code).psdt(1).nsid(1).slba(1).blockCount(1)
                        .cdw(12, 1L << 30).sgl(0, 4096, Sgl.IN_CAPSULE), block).cqe().status().isSuccess());
                assertEquals(1, backend.flushes.get(), "FUA flushed before the completion was sent");
            }
        }
    }

    @Test
    void identifyStringsAreChecked() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Subsystem(NQN, "S".repeat(21), "m", "1"));
        assertTrue(e.getMessage().startsWith("serial must be 1..20"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new Subsystem(NQN, "S", "m\u00e9", "1"));
        assertTrue(e.getMessage().startsWith("model"), e.getMessage());
    }
}
