package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Our initiator's multipath against SPDK's target, where SPDK is built ({@code SPDK_DIR}, default
 * {@code /var/tmp/spdk}; {@code bench/spdk/build-spdk.sh} builds it), and skipped with a message
 * elsewhere. Two {@code nvmf_tgt} processes serve one subsystem from one file (an {@code aio} bdev,
 * O_DIRECT) with ANA reporting ({@code nvmf_create_subsystem -r}), disjoint controller IDs and the
 * same namespace UUID and NGUID: A's listener optimized, B's non-optimized; SPDK's own {@code
 * rpc.py} configures them as its users do. Then the scenario our own gateways pass: {@code nvmeof
 * bench --verify} through both while each side is SIGKILLed and restarted three times, A's path is
 * partitioned and A's listener goes inaccessible ({@code nvmf_subsystem_listener_set_ana_state})
 * and back. And the same scenario against one {@code nvmf_tgt} with two listeners, a side going
 * away by its listener's removal.
 *
 * <p>A long run ({@code mvn -B verify -Plong}): MultipathGatewaysTest rides the same scenario
 * through our own gateways and SpdkGatewayGroupTest meets SPDK's target in every run.
 */
@Tag("long")
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class SpdkMultipathTest {
    static final Path SPDK = Path.of(System.getenv().getOrDefault("SPDK_DIR", "/var/tmp/spdk"));
    static final String NQN = "nqn.2026-11.io.nvmeof:spdk-gateways";
    static final String UUID = "6c1e5f3a-8d2b-4a7c-9e0f-1b2c3d4e5f60";

    @BeforeAll
    static void spdkIsBuilt() {
        boolean built = Files.isExecutable(SPDK.resolve("build/bin/nvmf_tgt")) && Files.isRegularFile(SPDK.resolve("scripts/rpc.py"));
        if (!built) {
            System.out.println("SpdkMultipathTest SKIPPED: no SPDK build at " + SPDK + " (bench/spdk/build-spdk.sh builds one)");
        }
        assumeTrue(built, "no SPDK build at " + SPDK);
    }

    @Test
    void benchVerifyRidesThroughKillsAPartitionAndAnAnaChangeOfSpdksTarget(@TempDir Path dir) throws Exception {
        Path file = volume(dir);
        List<ProcessGateway> gateways = List.of(
                new ProcessGateway(new Spdk(dir, "a", 0), file, Ports.free(), 1, "optimized"),
                new ProcessGateway(new Spdk(dir, "b", 1), file, Ports.free(), 1000, "non_optimized"));
        try {
            for (ProcessGateway g : gateways) {
                g.start();
            }
            MultipathGatewaysTest.rideThrough(gateways.get(0), gateways.get(1), NQN, Duration.ofSeconds(4),
                    Duration.ofMillis(1500), 3);
        } finally {
            for (ProcessGateway g : gateways) {
                g.spdk.stop();
            }
        }
    }

    /**
     * One {@code nvmf_tgt} with two listeners of one subsystem (two ports of one box, the usual
     * multipath setup): each side "dies" by {@code nvmf_subsystem_remove_listener}, which drops
     * its connections, and comes back by {@code nvmf_subsystem_add_listener}.
     */
    @Test
    void benchVerifyRidesThroughListenersOfOneSpdkTargetComingAndGoing(@TempDir Path dir) throws Exception {
        Path file = volume(dir);
        Spdk spdk = new Spdk(dir, "one", 0);
        try {
            spdk.start();
            spdk.rpc(setup(file, 1));
            ListenerGateway a = new ListenerGateway(spdk, Ports.free(), "optimized");
            ListenerGateway b = new ListenerGateway(spdk, Ports.free(), "non_optimized");
            a.start();
            b.start();
            MultipathGatewaysTest.rideThrough(a, b, NQN, Duration.ofSeconds(4), Duration.ofMillis(1500), 3);
            assertTrue(spdk.process.isAlive(), "SPDK's target still runs");
        } finally {
            spdk.stop();
        }
    }

    private static Path volume(Path dir) throws IOException {
        Path file = dir.resolve("volume.img");
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(64 << 20);
        }
        return file;
    }

    /** rpc.py commands for the subsystem with ANA reporting and the file as namespace 1 (no listener yet). */
    private static String[] setup(Path file, int cntlidMin) {
        return new String[] {"nvmf_create_transport -t TCP",
            "bdev_aio_create " + file + " Aio0 4096",
            "nvmf_create_subsystem " + NQN + " -a -s SPDKGW0001 -r -i " + cntlidMin + " -I " + (cntlidMin + 998),
            "nvmf_subsystem_add_ns " + NQN + " Aio0 -u " + UUID + " -g " + UUID.replace("-", "")};
    }

    private static String listener(int port) {
        return " -t tcp -a 127.0.0.1 -s " + port + " -f ipv4";
    }

    /** A whole {@code nvmf_tgt} process as one gateway: killed with SIGKILL, started and configured afresh. */
    private record ProcessGateway(Spdk spdk, Path file, int port, int cntlidMin, String ana)
            implements MultipathGatewaysTest.Gateway {
        @Override
        public void start() throws IOException, InterruptedException {
            spdk.start();
            List<String> commands = new ArrayList<>(List.of(setup(file, cntlidMin)));
            commands.add("nvmf_subsystem_add_listener " + NQN + listener(port) + " -n " + ana);
            spdk.rpc(commands.toArray(String[]::new));
        }

        @Override
        public void kill() throws InterruptedException {
            spdk.process.destroyForcibly().waitFor();
        }

        @Override
        public void ana(String state) throws IOException, InterruptedException {
            spdk.rpc("nvmf_subsystem_listener_set_ana_state " + NQN + " -n " + state.replace('-', '_') + listener(port));
        }
    }

    /** One listener of a running {@code nvmf_tgt} as one gateway. */
    private record ListenerGateway(Spdk spdk, int port, String ana) implements MultipathGatewaysTest.Gateway {
        @Override
        public void start() throws IOException, InterruptedException {
            spdk.rpc("nvmf_subsystem_add_listener " + NQN + listener(port) + " -n " + ana);
        }

        @Override
        public void kill() throws IOException, InterruptedException {
            spdk.rpc("nvmf_subsystem_remove_listener " + NQN + listener(port));
        }

        @Override
        public void ana(String state) throws IOException, InterruptedException {
            spdk.rpc("nvmf_subsystem_listener_set_ana_state " + NQN + " -n " + state.replace('-', '_') + listener(port));
        }
    }

    /**
     * An SPDK application on one core, without hugepages, driven by SPDK's {@code rpc.py}: {@code
     * nvmf_tgt} (in interrupt mode), or another with its own arguments, run by a launcher ({@code
     * ip netns exec NS}) or not.
     */
    static final class Spdk {
        private final Path dir;
        private final String name;
        private final int core;
        private final Path sock;
        private final List<String> launcher;
        private final List<String> program;
        private final List<Process> started = new ArrayList<>();
        private final java.util.Map<String, String> env = new java.util.HashMap<>();
        private Process process;
        private Path log;

        Spdk(Path dir, String name, int core) {
            this(dir, name, core, List.of(), List.of("build/bin/nvmf_tgt", "--interrupt-mode"));
        }

        /** {@code program}: its path under the SPDK build, then its own arguments. */
        Spdk(Path dir, String name, int core, List<String> launcher, List<String> program) {
            this.dir = dir;
            this.name = name;
            this.core = core;
            this.sock = dir.resolve(name + ".spdk.sock");
            this.launcher = launcher;
            this.program = program;
        }

        void start() throws IOException {
            Files.deleteIfExists(sock);
            List<String> cmd = new ArrayList<>(launcher);
            cmd.addAll(List.of(SPDK.resolve(program.get(0)).toString(), "-m", "0x" + Integer.toHexString(1 << core),
                    "--no-pci", "--no-huge", "-s", "512", "-r", sock.toString()));
            cmd.addAll(program.subList(1, program.size()));
            log = dir.resolve(name + ".spdk." + started.size() + ".log");
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
            pb.environment().put("LD_LIBRARY_PATH", SPDK.resolve("build/lib") + ":" + SPDK.resolve("isa-l/.libs"));
            pb.environment().putAll(env);
            process = pb.start();
            started.add(process);
        }

        /** The output of its latest start. */
        Path log() {
            return log;
        }

        /** Its RPC socket. */
        Path socket() {
            return sock;
        }

        Process process() {
            return process;
        }

        /** An environment variable for its next start (DBUS_SYSTEM_BUS_ADDRESS for its Avahi client, say). */
        Spdk env(String name, String value) {
            env.put(name, value);
            return this;
        }

        /** Runs SPDK's rpc.py with these commands, one per line, waiting up to 30 s for the socket. */
        void rpc(String... commands) throws IOException, InterruptedException {
            rpcOutput(commands);
        }

        /** {@link #rpc}, returning what rpc.py printed. */
        String rpcOutput(String... commands) throws IOException, InterruptedException {
            Process p = new ProcessBuilder("python3", SPDK.resolve("scripts/rpc.py").toString(), "-s", sock.toString(), "-r", "150")
                    .redirectErrorStream(true).start();
            p.getOutputStream().write((String.join("\n", commands) + "\n").getBytes(StandardCharsets.UTF_8));
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, p.waitFor(), "rpc.py " + String.join("; ", commands) + ":\n" + out);
            return out;
        }

        /** Ends what is running and removes the DPDK run directories of every incarnation. */
        void stop() throws IOException, InterruptedException {
            if (process != null && process.isAlive()) {
                process.destroy();
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor();
                }
            }
            for (Process p : started) {
                Path run = Path.of("/var/run/dpdk/spdk_pid" + p.pid());
                if (Files.isDirectory(run)) {
                    try (Stream<Path> files = Files.walk(run)) {
                        for (Path q : files.sorted(Comparator.reverseOrder()).toList()) {
                            Files.deleteIfExists(q);
                        }
                    }
                }
            }
        }
    }
}
