package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.internal.PlatformDependent;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Multipath;
import io.nvmeof.initiator.Nvmeof;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 55's host goal: 256 connected devices in one JVM (64 subsystems of 4 namespaces, each
 * subsystem through two paths, so 128 controllers) run on at most 2 x cores + 8 threads of ours,
 * and each idle device costs at most 256 KiB of heap and direct memory; every device moves its
 * own data. The target is the launcher in a process of its own, so that what is measured here
 * is the host alone. (QD1 latency beside 255 idle devices is a benchmark:
 * {@code bench/many-devices.sh}.)
 */
@Timeout(value = 4, unit = java.util.concurrent.TimeUnit.MINUTES)
class ManyDevicesTest {
    static final int SUBSYSTEMS = 64;
    static final int NAMESPACES = 4;
    static final long PER_DEVICE = 256 << 10;
    private static final Pattern LISTENING = Pattern.compile("listening on tcp://127\\.0\\.0\\.1:(\\d+)");
    /** The names of every thread the host makes. */
    static final List<String> HOST_THREADS = List.of("nvmeof-host", "nvmeof-ctrl", "nvmeof-timer", "nvmeof-close",
            "nvmeof-path", "nvmeof-multipath");

    static String nqn(int s) {
        return "nqn.2026-12.io.nvmeof:many-" + s;
    }

    /** The daemon's configuration: {@code subsystems} of {@code namespaces} null namespaces, served on two ports. */
    static String config(int subsystems, int namespaces) {
        String nqns = java.util.stream.IntStream.range(0, subsystems).mapToObj(s -> "\"" + nqn(s) + "\"")
                .collect(Collectors.joining(","));
        StringBuilder subs = new StringBuilder();
        for (int s = 0; s < subsystems; s++) {
            StringBuilder ns = new StringBuilder();
            for (int n = 1; n <= namespaces; n++) {
                ns.append(n > 1 ? "," : "").append("{\"nsid\": ").append(n).append(", \"backend\": \"null\", \"size\": \"1G\"}");
            }
            subs.append(s > 0 ? ",\n" : "").append("{\"nqn\": \"").append(nqn(s)).append("\", \"namespaces\": [").append(ns)
                    .append("]}");
        }
        return """
                {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": [%s]},
                           {"portid": 2, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": [%s]}],
                 "subsystems": [%s]}
                """.formatted(nqns, nqns, subs);
    }

    static long threads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
    }

    static long hostThreads() {
        return HOST_THREADS.stream().mapToLong(ManyDevicesTest::threads).sum();
    }

    /** Heap in use after a full collection, and direct memory: the JVM's buffers, Netty's own and its pool's. */
    record Memory(long heap, long direct) {
        static Memory now() {
            for (int i = 0; i < 3; i++) {
                System.gc();
            }
            long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
            long direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                    .filter(b -> b.getName().equals("direct")).mapToLong(BufferPoolMXBean::getMemoryUsed).sum();
            long netty = Math.max(0, PlatformDependent.usedDirectMemory());
            long pooled = EventLoops.ALLOCATOR instanceof ByteBufAllocatorMetricProvider p ? p.metric().usedDirectMemory() : 0;
            return new Memory(heap, direct + netty + pooled);
        }

        long total() {
            return heap + direct;
        }
    }

    @Test
    void twoHundredFiftySixDevicesOnTheCoresThreads(@TempDir Path dir) throws Exception {
        int cores = Runtime.getRuntime().availableProcessors();
        Path config = dir.resolve("target.json");
        Files.writeString(config, config(SUBSYSTEMS, NAMESPACES));
        try (TargetProcess t = TargetProcess.startWith(List.of("-Xmx1g"), Fabric.TCP, dir, "--config", config.toString())) {
            t.await("both ports", () -> LISTENING.matcher(t.out()).results().count() >= 2);
            Matcher m = LISTENING.matcher(t.out());
            List<String> ports = new ArrayList<>();
            while (m.find()) {
                ports.add(m.group(1));
            }
            long threadsBefore = hostThreads();
            long loopsBefore = threads("nvmeof-host");
            Memory before = Memory.now();
            List<Multipath> sets = new ArrayList<>();
            List<BlockDevice> devices = new ArrayList<>();
            try {
                for (int s = 0; s < SUBSYSTEMS; s++) {
                    Multipath set = Nvmeof.connectMultipath("nvme+tcp://127.0.0.1:" + ports.get(0) + ",127.0.0.1:"
                            + ports.get(1) + "/" + nqn(s), ConnectOptions.defaults());
                    sets.add(set);
                    for (int n = 1; n <= NAMESPACES; n++) {
                        devices.add(set.namespace(n));
                    }
                }
                assertEquals(SUBSYSTEMS * NAMESPACES, devices.size());
                for (Multipath set : sets) {
                    assertEquals(2, set.paths().size());
                    for (Multipath.Path p : set.paths()) {
                        assertEquals("live", p.state(), "every path is up");
                    }
                }
                // every device moves data: a write, then a read (the null backend reads zeros)
                ByteBuffer buf = ByteBuffer.allocateDirect(4096);
                for (int i = 0; i < devices.size(); i++) {
                    BlockDevice d = devices.get(i);
                    assertEquals(1L << 30, d.size(), "device " + i);
                    d.write(4096L * i, buf.clear());
                    buf.clear().put(0, (byte) 1);
                    d.read(4096L * i, buf);
                    assertEquals(0, buf.get(0), "device " + i + " read what its namespace holds");
                }
                long ours = hostThreads();
                Set<String> names = Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                        .filter(n -> HOST_THREADS.stream().anyMatch(n::startsWith)).collect(Collectors.toSet());
                assertTrue(ours <= 2L * cores + 8, devices.size() + " devices: " + ours + " host threads (" + names
                        + "); at most 2 x cores + 8 = " + (2 * cores + 8));
                // idle: keep-alives only; what each device holds
                Memory after = Memory.now();
                long grown = after.total() - before.total();
                System.out.printf("many devices: %d devices, %d controllers, %d host threads (%d before), %.1f KiB"
                        + " heap and direct memory per device (heap %.1f, direct %.1f)%n", devices.size(), 2 * sets.size(),
                        ours, threadsBefore, grown / 1024.0 / devices.size(),
                        (after.heap() - before.heap()) / 1024.0 / devices.size(),
                        (after.direct() - before.direct()) / 1024.0 / devices.size());
                assertTrue(grown <= PER_DEVICE * devices.size(), "per idle device " + grown / devices.size()
                        + " bytes of heap and direct memory; at most " + PER_DEVICE);
            } finally {
                for (Multipath set : sets) {
                    set.close();
                }
            }
            Awaitility.await("the host's threads end with its last device").atMost(Duration.ofSeconds(30))
                    .until(() -> threads("nvmeof-host") <= loopsBefore);
            t.assertNoLeaks();
        }
    }
}
