package io.nvmeof.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.target.Faults;
import io.nvmeof.target.Settings;
import io.nvmeof.target.Target;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What a dropped connection costs: a host resubmits the old association's commands only once
 * the target can no longer run them. Our target reports a Command Quiesce Time (CQT) and holds to
 * it, so our host, seeing the target close every connection, waits CQT from then; a target that
 * reports none costs the keep-alive timeout, as before.
 */
class QuiesceTimeTest {
    private static final int BLOCK = 512;
    private static final Duration KATO = Duration.ofSeconds(8);

    private static ConnectOptions options() {
        return ConnectOptions.defaults().ioQueues(2).keepAlive(KATO).reconnectDelay(Duration.ofMillis(100))
                .connectTimeout(Duration.ofSeconds(2)).controllerLossTimeout(Duration.ofSeconds(60));
    }

    private static ByteBuffer pattern(int seed, int length) {
        ByteBuffer b = ByteBuffer.allocateDirect(length);
        for (int i = 0; i < length; i++) {
            b.put((byte) (seed * 31 + i));
        }
        return b.flip();
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    /** Drops the connections under 16 held writes; returns the milliseconds until they all completed. */
    private static long dropUnderWrites(EmbeddedTarget target, Controller c) throws Exception {
        BlockDevice disk = c.namespace(1);
        disk.write(0, pattern(1, BLOCK));
        Faults.Rule hold = target.namespace(1).delay(Duration.ofSeconds(3));
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            writes.add(disk.writeAsync((8 + i) * (long) BLOCK, pattern(50 + i, BLOCK)));
        }
        Thread.sleep(200);
        long start = System.nanoTime();
        assertEquals(1, target.dropConnections());
        hold.remove();
        for (CompletableFuture<Void> w : writes) {
            w.get(60, TimeUnit.SECONDS);
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertEquals(1, c.reconnects());
        for (int i = 0; i < 16; i++) {
            ByteBuffer back = ByteBuffer.allocateDirect(BLOCK);
            disk.read((8 + i) * (long) BLOCK, back);
            assertArrayEquals(bytes(pattern(50 + i, BLOCK)), bytes(back.flip()), "block " + (8 + i));
        }
        return ms;
    }

    @Test
    void ourTargetReportsCqtAndAHostWaitsItInsteadOfTheKeepAlive() throws Exception {
        Target.Options o = Target.Options.defaults().with(Settings.COMMAND_QUIESCE_TIME_MS, 1500L);
        try (EmbeddedTarget target = EmbeddedTarget.builder().ramNamespace(1 << 20, BLOCK).options(o).start();
             Controller c = Nvmeof.connect(target.uri(), options())) {
            assertEquals(1500, c.identify().cqt());
            long ms = dropUnderWrites(target, c);
            // never before CQT (the guarantee), and well before the keep-alive timeout
            assertTrue(ms >= 1500, "resubmitted after " + ms + " ms, before the CQT of 1500 ms");
            assertTrue(ms < KATO.toMillis() - 2000, "resubmitted after " + ms + " ms: waited for the keep-alive");
        }
    }

    @Test
    void aTargetThatReportsNoCqtCostsTheKeepAliveTimeout() throws Exception {
        Target.Options o = Target.Options.defaults().with(Settings.COMMAND_QUIESCE_TIME_MS, 0L);
        try (EmbeddedTarget target = EmbeddedTarget.builder().ramNamespace(1 << 20, BLOCK).options(o).start();
             Controller c = Nvmeof.connect(target.uri(), options())) {
            assertEquals(0, c.identify().cqt());
            long ms = dropUnderWrites(target, c);
            assertTrue(ms >= KATO.toMillis() - 300, "resubmitted after " + ms + " ms, before the keep-alive timeout");
        }
    }
}
