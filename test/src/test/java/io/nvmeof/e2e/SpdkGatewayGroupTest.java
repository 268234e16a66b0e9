package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * SPDK's multipath host through our gateway group on separate machines ({@link GatewayGroupLab}),
 * where SPDK is built ({@code SPDK_DIR}, default {@code /var/tmp/spdk}; skipped with a message
 * elsewhere): {@code bdevperf -w verify} in the hosts' namespace with one bdev over both gateways
 * ({@code bdev_nvme_attach_controller -x multipath}, twice, one name; retries without end, as
 * SPDK's users configure a multipath host), while the owner is cut from the hosts, cut from Ceph,
 * frozen past its lease and killed. bdevperf checks every block it wrote when it reads it back:
 * 0 failed I/Os, no mismatch.
 *
 * <p>A long run ({@code mvn -B verify -Plong}): SPDK's target and host are met in every run by
 * SpdkMdnsTest and kernel interop part 14 (SPDK's reserve), gateway groups by GatewayGroupTest.
 */
@Tag("long")
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class SpdkGatewayGroupTest {
    static final String NQN = "nqn.2026-12.io.nvmeof:gw-spdk";
    /** bdevperf's run: long enough for every event (about a minute here). */
    static final int RUNTIME_S = 100;

    @BeforeAll
    static void bdevperfIsBuilt() {
        SpdkMultipathTest.spdkIsBuilt();
        assumeTrue(Files.isExecutable(SpdkMultipathTest.SPDK.resolve("build/examples/bdevperf")),
                "no bdevperf in the SPDK build at " + SpdkMultipathTest.SPDK);
    }

    @Test
    void bdevperfVerifiesThroughBothGatewaysAcrossEveryEvent(@TempDir Path dir) throws Exception {
        GatewayGroupLab.run(dir, NQN, (lab, uri) -> Bdevperf.start(dir, lab));
    }

    /** bdevperf waiting for its test (-z), configured by rpc.py, the test run by bdevperf.py. */
    static final class Bdevperf implements GatewayGroupLab.Host {
        private final SpdkMultipathTest.Spdk app;
        private final Process perform;
        private final Path performOut;
        private boolean finished;

        private Bdevperf(SpdkMultipathTest.Spdk app, Process perform, Path performOut) {
            this.app = app;
            this.perform = perform;
            this.performOut = performOut;
        }

        static Bdevperf start(Path dir, NetnsLab lab) throws Exception {
            SpdkMultipathTest.Spdk app = new SpdkMultipathTest.Spdk(dir, "bdevperf", 0, lab.in("hosts"),
                    List.of("build/examples/bdevperf", "-z", "-q", "16", "-o", "4096", "-w", "verify",
                            "-t", Integer.toString(RUNTIME_S)));
            app.start();
            String attach = " -t tcp -s 4420 -f ipv4 -n " + NQN + " -x multipath -l -1 -o 1";
            // retry without end; a connection whose data go unacknowledged for 2^11 ms closes
            // (TCP_USER_TIMEOUT), which fails that path's commands over to the other. (SPDK's host
            // has no keep-alive timeout, and its timeout action, a reset, fails what is in flight
            // with Do Not Retry, by design: so none is set.)
            app.rpc("bdev_nvme_set_options -r -1 -k 2000 -e 11",
                    "bdev_nvme_attach_controller -b gw -a " + lab.hostAddress("a") + attach,
                    "bdev_nvme_attach_controller -b gw -a " + lab.hostAddress("b") + attach);
            Path out = dir.resolve("perform_tests.out");
            Process perform = new ProcessBuilder("python3",
                    SpdkMultipathTest.SPDK.resolve("examples/bdev/bdevperf/bdevperf.py").toString(), "-s",
                    app.socket().toString(), "-t", Integer.toString(RUNTIME_S + 120), "perform_tests")
                    .redirectErrorStream(true).redirectOutput(out.toFile()).start();
            return new Bdevperf(app, perform, out);
        }

        @Override
        public boolean leavesAFrozenPath() {
            return false;
        }

        @Override
        public void checkpoint(String after, List<String> timings) throws Exception {
            assertTrue(app.process().isAlive(), after + ": bdevperf ended:\n" + Files.readString(app.log()));
            assertFalse(Files.readString(app.log()).contains("Buffer mismatch"), after + ": bdevperf read back what it"
                    + " did not write:\n" + Files.readString(app.log()));
        }

        @Override
        public void finish() throws Exception {
            assertTrue(perform.isAlive(), "bdevperf's run ended before the last event; make RUNTIME_S longer");
            assertTrue(perform.waitFor(RUNTIME_S + 120, TimeUnit.SECONDS), "bdevperf's run did not end");
            String log = Files.readString(app.log());
            String result = Files.readString(performOut);
            System.out.println("bdevperf:\n" + log + "\nperform_tests:\n" + result);
            assertEquals(0, perform.exitValue(), result);
            assertFalse(log.contains("Buffer mismatch"), log);
            assertFalse(log.contains("with error"), log);
            JsonNode r = new ObjectMapper().readTree(result.substring(result.indexOf('{')));
            JsonNode job = r.path("results").get(0);
            assertTrue(job.path("io_failed").isNumber(), result);
            assertEquals(0, job.path("io_failed").asLong(), "failed I/Os: " + result);
            assertTrue(job.path("iops").asDouble() > 0, result);
            finished = true;
        }

        @Override
        public void close() throws Exception {
            if (!finished) {
                perform.destroyForcibly();
                String log = Files.readString(app.log());
                System.out.println("bdevperf, stopped before its end:\n" + log.substring(Math.max(0, log.length() - 6000))
                        + "\nperform_tests:\n" + Files.readString(performOut));
            }
            app.stop();
        }
    }
}
