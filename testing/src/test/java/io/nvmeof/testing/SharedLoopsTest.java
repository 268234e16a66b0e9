package io.nvmeof.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Controllers that bring no loops of their own share the process's: sixteen of them (two I/O
 * queues each) run on at most a loop per core, not on sixteen groups, and on no thread each
 * for what is not I/O, each still moving its own data; when the last one closes, the loops end.
 */
@Timeout(value = 2, unit = java.util.concurrent.TimeUnit.MINUTES)
class SharedLoopsTest {
    private static long hostLoops() {
        return threads("nvmeof-host");
    }

    private static long threads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
    }

    @Test
    void manyControllersRunOnTheCoresLoops() throws Exception {
        int cores = Runtime.getRuntime().availableProcessors();
        try (EmbeddedTarget target = EmbeddedTarget.builder().ramNamespace(16 << 20, 4096).start()) {
            long before = hostLoops();
            List<Controller> controllers = new ArrayList<>();
            try {
                for (int i = 0; i < 16; i++) {
                    controllers.add(Nvmeof.connect(target.uri(), ConnectOptions.defaults().ioQueues(2)));
                }
                long added = hostLoops() - before;
                assertTrue(added <= cores, "16 controllers added " + added + " host loops; at most one a core (" + cores + ")");
                // and no thread each for what is not I/O: those tasks run on the host's shared threads
                long ours = 0;
                for (String host : new String[] {"nvmeof-host", "nvmeof-ctrl", "nvmeof-timer", "nvmeof-path", "nvmeof-multipath"}) {
                    ours += threads(host);
                }
                assertTrue(ours <= 2L * cores + 8, "16 controllers: " + ours + " host threads; at most 2 x cores + 8");
                for (int i = 0; i < controllers.size(); i++) {
                    BlockDevice d = controllers.get(i).namespace(1);
                    byte[] data = new byte[8192];
                    new Random(i).nextBytes(data);
                    d.write(i * 8192L, ByteBuffer.wrap(data));
                    ByteBuffer back = ByteBuffer.allocate(8192);
                    controllers.get((i + 1) % controllers.size()).namespace(1).read(i * 8192L, back);
                    assertArrayEquals(data, back.array(), "controller " + i + "'s write, read through another");
                }
            } finally {
                for (Controller c : controllers) {
                    c.close();
                }
            }
            Awaitility.await("the shared loops end with their last controller").atMost(Duration.ofSeconds(10))
                    .until(() -> hostLoops() <= before);
        }
    }
}
