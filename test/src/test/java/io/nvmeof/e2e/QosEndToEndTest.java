package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.Nvmeof;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * QoS against the launcher as a process, with a RAM namespace as users configure it: a namespace
 * limit from the configuration holds the host's reads to it (a lower bound on the time, which only
 * the limit can give) and shows in the metrics; `nvmeof qos set` removes it at once and sets a
 * host's write limit across its controllers; that limit survives a restart (the management API's
 * state). Every command completes: none is failed for a limit.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class QosEndToEndTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:qos";
    static final HostIdentity HOST = HostIdentity.of("nqn.2026-11.io.nvmeof:qos-host",
            UUID.fromString("5a5a5a5a-0000-4000-8000-00000000005a"));
    static final Pattern METRICS = Pattern.compile("metrics on (http://\\S+/metrics)");
    final HttpClient http = HttpClient.newHttpClient();

    @Test
    void limitsFromTheConfigAndTheManagementApiHoldAndPersist(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("t.json");
        Files.writeString(config, """
                {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "namespaces": [{"nsid": 1, "backend": "ram", "size": "16M",
                                 "qos": {"rw_ios_per_sec": 500}}]}]}
                """.formatted(NQN, NQN));
        String socket = dir.resolve("rpc.sock").toString();
        String[] args = {"--config", config.toString(), "--rpc-socket", socket, "--state-dir", dir.resolve("state").toString(),
            "--metrics", "tcp://127.0.0.1:0"};
        ConnectOptions two = ConnectOptions.defaults().identity(HOST).ioQueues(2);
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, args);
             Controller c = Nvmeof.connect(t.uri(NQN), two);
             Controller c2 = Nvmeof.connect(t.uri(NQN), two)) {
            t.await("the management API", () -> t.out().contains("management API on"));
            String url = metricsUrl(t);
            BlockDevice d = c.namespace(1);

            // 1500 reads at QD32 against 500 IOPS: at least (1500 - the 5-command burst) / 500 s
            long ns = io(d, 1500, 32, 4096, false);
            assertTrue(ns >= 2_900_000_000L, "1500 reads took " + ns / 1e6 + " ms under a 500-IOPS limit");
            String m = scrape(url);
            double waited = sample(m, "nvmeof_namespace_qos_throttled_seconds_total", "{nsid=\"1\",subsystem=\"" + NQN + "\"}");
            assertTrue(waited > 1, "the metrics show the time throttled: " + waited);

            // removed at once by the management API: the reads wait no more
            TargetProcess.Run r = TargetProcess.cli(60, "qos", "set", "--socket", socket, "--subsystem", NQN, "--nsid", "1",
                    "--rw-ios-per-second", "0");
            assertEquals(0, r.exit(), r.out() + r.err());
            io(d, 1500, 32, 4096, false);
            double after = sample(scrape(url), "nvmeof_namespace_qos_throttled_seconds_total",
                    "{nsid=\"1\",subsystem=\"" + NQN + "\"}");
            assertEquals(waited, after, "no read waited once the limit was gone");

            // a host's write limit holds across both of its controllers: 2 x 1 MiB at 1 MiB/s
            r = TargetProcess.cli(60, "qos", "set", "--socket", socket, "--host", HOST.hostNqn(), "--w-megabytes-per-second", "1");
            assertEquals(0, r.exit(), r.out() + r.err());
            BlockDevice d2 = c2.namespace(1);
            long start = System.nanoTime();
            CompletableFuture<Long> other = CompletableFuture.supplyAsync(() -> io(d2, 8, 4, 128 << 10, true));
            io(d, 8, 4, 128 << 10, true);
            other.join();
            long both = System.nanoTime() - start;
            assertTrue(both >= 1_800_000_000L, "2 MiB of writes from two controllers took " + both / 1e6 + " ms at 1 MiB/s");
            assertTrue(sample(scrape(url), "nvmeof_host_qos_throttled_seconds_total", "{host=\"" + HOST.hostNqn() + "\"}") > 0.5);
            assertEquals(0, t.stop());
            t.assertNoLeaks();
        }
        // the host's limit was kept by the management API's state; the namespace's stays removed
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, args);
             Controller c = Nvmeof.connect(t.uri(NQN), two)) {
            BlockDevice d = c.namespace(1);
            long ns = io(d, 16, 4, 128 << 10, true);
            assertTrue(ns >= 1_800_000_000L, "2 MiB of writes after a restart took " + ns / 1e6 + " ms");
            ns = io(d, 1000, 32, 4096, false);
            String m = scrape(metricsUrl(t));
            assertEquals(0, sample(m, "nvmeof_namespace_qos_throttled_seconds_total", "{nsid=\"1\",subsystem=\"" + NQN + "\"}"),
                    "no namespace limit after the restart: " + ns / 1e6 + " ms for 1000 reads");
        }
    }

    /**
     * Every command that costs the backend counts (issue 47, item 14), each kind on a namespace of
     * its own, all at once, for about 10 s each: Write Zeroes and deallocate of 3 MiB (more than one
     * piece of a 1 MiB/s limit) by their bytes against the write limit, a Copy of 3 MiB (it reads
     * and writes 6 MiB, past the 5 s bound) against the read-write limit, 4 KiB Write Zeroes and
     * Flush as I/Os against 100 IOPS. A limiter is measured over its whole run: what the host had
     * done when its last command completed, over the time since it began, within 1.1 x the limit.
     */
    @Test
    void everyCommandThatCostsTheBackendCounts(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("t.json");
        Files.writeString(config, """
                {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "namespaces": [
                    {"nsid": 1, "backend": "ram", "size": "64M", "qos": {"w_mbytes_per_sec": 1}},
                    {"nsid": 2, "backend": "ram", "size": "64M", "qos": {"w_mbytes_per_sec": 1}},
                    {"nsid": 3, "backend": "ram", "size": "64M", "qos": {"rw_mbytes_per_sec": 1}},
                    {"nsid": 4, "backend": "ram", "size": "16M", "qos": {"rw_ios_per_sec": 100}},
                    {"nsid": 5, "backend": "ram", "size": "16M", "qos": {"rw_ios_per_sec": 100}}]}]}
                """.formatted(NQN, NQN));
        long mib = 1 << 20;
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, "--config", config.toString());
             Controller c = Nvmeof.connect(t.uri(NQN), ConnectOptions.defaults().identity(HOST).ioQueues(2))) {
            BlockDevice[] ns = new BlockDevice[5];
            for (int i = 0; i < ns.length; i++) {
                ns[i] = c.namespace(i + 1);
            }
            // a thread each: the five run at once, whatever the common pool's size
            ExecutorService threads = Executors.newFixedThreadPool(5);
            List<CompletableFuture<double[]>> kinds = List.of(
                    CompletableFuture.supplyAsync(() -> rate(2, 3 * mib, at -> ns[0].writeZeroesAsync(at, 3 * mib)), threads),
                    CompletableFuture.supplyAsync(() -> rate(2, 3 * mib, at -> ns[1].discardAsync(at, 3 * mib)), threads),
                    // a Copy reads and writes its bytes: 6 MiB against the read-write limit
                    CompletableFuture.supplyAsync(() -> rate(2, 6 * mib,
                            at -> ns[2].copyAsync(at, at + 32 * mib, 3 * mib)), threads),
                    CompletableFuture.supplyAsync(() -> rate(4, 1,
                            at -> ns[3].writeZeroesAsync(at / (3 * mib) * 4096, 4096)), threads),
                    CompletableFuture.supplyAsync(() -> rate(4, 1, at -> ns[4].flushAsync()), threads));
            threads.shutdown();
            String[] names = {"Write Zeroes (bytes)", "deallocate (bytes)", "Copy (bytes read and written)",
                "Write Zeroes (I/Os)", "Flush (I/Os)"};
            double[] limits = {mib, mib, mib, 100, 100};
            StringBuilder all = new StringBuilder();
            boolean over = false;
            for (int i = 0; i < names.length; i++) {
                double[] r = kinds.get(i).join();
                all.append(String.format("%s: %.0f a second over %.1f s, %.2f x its limit%n", names[i], r[0], r[1], r[0] / limits[i]));
                over |= r[0] > 1.1 * limits[i];
            }
            System.out.print(all);
            assertTrue(!over, "each kind within 1.1 x its limit:\n" + all);
            assertEquals(0, t.stop());
            t.assertNoLeaks();
        }
    }

    /**
     * Commands from {@code op} (given a byte offset within the first 30 MiB) at {@code depth} at once
     * for 10 s (and 100,000 at most), then waits for those in flight: {cost a second, seconds},
     * where each counts {@code cost}.
     */
    static double[] rate(int depth, long cost, java.util.function.LongFunction<CompletableFuture<Void>> op) {
        Semaphore slots = new Semaphore(depth);
        List<CompletableFuture<Void>> all = new ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < 100_000 && System.nanoTime() - start < 10_000_000_000L; i++) {
            slots.acquireUninterruptibly();
            CompletableFuture<Void> f = op.apply(i % 10 * (3L << 20));
            f.whenComplete((v, e) -> slots.release());
            all.add(f);
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
        double seconds = (System.nanoTime() - start) / 1e9;
        return new double[] {all.size() * (double) cost / seconds, seconds};
    }

    /** {@code count} commands of {@code size} bytes at {@code depth} at once: nanoseconds they took; any failure throws. */
    static long io(BlockDevice d, int count, int depth, int size, boolean write) {
        Semaphore slots = new Semaphore(depth);
        List<CompletableFuture<Void>> all = new ArrayList<>();
        long blocks = d.size() / size;
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            slots.acquireUninterruptibly();
            ByteBuffer b = ByteBuffer.allocateDirect(size);
            long at = (i * 7919L % blocks) * size;
            CompletableFuture<Void> f = write ? d.writeAsync(at, b) : d.readAsync(at, b);
            f.whenComplete((v, e) -> slots.release());
            all.add(f);
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
        return System.nanoTime() - start;
    }

    static String metricsUrl(TargetProcess t) throws Exception {
        t.await("the metrics endpoint", () -> METRICS.matcher(t.out()).find());
        Matcher at = METRICS.matcher(t.out());
        assertTrue(at.find(), t.out());
        return at.group(1);
    }

    String scrape(String url) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        return r.body();
    }

    static double sample(String text, String name, String labels) {
        return MetricsEndToEndTest.sample(text, name, labels);
    }
}
