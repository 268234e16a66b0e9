package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.NvmeofUri;
import io.nvmeof.daemon.config.ConfigLoader;
import io.nvmeof.daemon.config.TargetConfig;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped unit and default config describe a target that runs: ExecStart with the
 * environment file expanded the way systemd does it, the JSON config moved into a temp dir
 * (paths and ports rewritten), starts, serves, reloads on SIGHUP (ExecReload) with a host
 * connected, and stops cleanly on SIGTERM, as systemd does.
 */
class SystemdUnitTest {
    static final Path SYSTEMD = Path.of(System.getProperty("user.dir")).resolve("../systemd").normalize();

    @TempDir
    Path dir;

    static Map<String, String> environmentFile(Path p) throws Exception {
        Map<String, String> env = new HashMap<>();
        Pattern kv = Pattern.compile("^([A-Z_][A-Z0-9_]*)=\"?(.*?)\"?$");
        for (String line : Files.readAllLines(p)) {
            Matcher m = kv.matcher(line.trim());
            if (!line.trim().startsWith("#") && m.matches()) {
                env.put(m.group(1), m.group(2));
            }
        }
        return env;
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void defaultConfigStartsServesReloadsAndStopsCleanly() throws Exception {
        String unit = Files.readString(SYSTEMD.resolve("nvmeof-target.service"));
        assertTrue(unit.contains("EnvironmentFile=/etc/nvmeof/target.conf"), unit);
        assertTrue(unit.contains("KillSignal=SIGTERM"));
        assertTrue(unit.contains("ExecReload=/bin/kill -HUP $MAINPID"));
        assertTrue(unit.contains("WantedBy=multi-user.target"));
        assertTrue(unit.contains("Type=notify"), "READY=1 once every port listens");
        assertTrue(unit.contains("WatchdogSec="), "the event loops feed a watchdog");
        assertTrue(unit.contains("User=nvmeof"), "its own unprivileged user");
        assertTrue(unit.contains("RuntimeDirectory=nvmeof") && unit.contains("RuntimeDirectoryMode=0750"),
                "the management socket's directory");
        assertTrue(unit.contains("StateDirectory=nvmeof"), "the management API's state");
        Matcher exec = Pattern.compile("(?m)^ExecStart=(.*)$").matcher(unit);
        assertTrue(exec.find(), "ExecStart");
        Map<String, String> env = environmentFile(SYSTEMD.resolve("target.conf"));

        List<String> argv = new ArrayList<>();
        for (String word : exec.group(1).trim().split("\\s+")) {
            if (word.startsWith("$")) {
                for (String w : env.getOrDefault(word.substring(1), "").trim().split("\\s+")) {
                    if (!w.isEmpty()) {
                        argv.add(w);
                    }
                }
            } else {
                argv.add(word);
            }
        }
        assertEquals("/usr/bin/nvmeof", argv.get(0), "the packaged launcher, which execs java: the JVM is the main PID");
        assertEquals("target", argv.get(1));
        assertTrue(env.containsKey("NVMEOF_JAVA_OPTS"), "JVM options for the launcher");
        List<String> targetArgs = new ArrayList<>(argv.subList(2, argv.size()));
        int c = targetArgs.indexOf("--config");
        assertEquals("/etc/nvmeof/target.json", targetArgs.get(c + 1));

        // the shipped JSON, with its state directory and ports moved for the test
        String json = Files.readString(SYSTEMD.resolve("target.json"));
        TargetConfig shipped = ConfigLoader.parse(json);
        assertEquals(8009, shipped.ports().get(1).trsvcid(), "a discovery port by default");
        // the management API may create volumes in a directory of their own, never among the state files
        assertTrue(shipped.management().allowedPaths().contains(Path.of("/var/lib/nvmeof/volumes")));
        assertFalse(shipped.management().allowedPaths().contains(Path.of("/var/lib/nvmeof")));
        assertTrue(unit.contains("StateDirectory=nvmeof nvmeof/volumes"), "the volumes directory is made");
        String local = json.replace("/var/lib/nvmeof", dir.toString()).replace("4420", "0").replace("8009", "0");
        Path config = dir.resolve("target.json");
        Files.writeString(config, local);
        targetArgs.set(c + 1, config.toString());
        String nqn = shipped.subsystems().get(0).nqn();
        // systemd gives the service its directories in the environment; the management API takes them
        Path run = Files.createDirectories(dir.resolve("run"));
        Path state = Files.createDirectories(dir.resolve("state"));
        try (TargetProcess t = TargetProcess.startWith(List.of(), Map.of("RUNTIME_DIRECTORY", run.toString(),
                "STATE_DIRECTORY", state.toString()), Fabric.TCP, dir, targetArgs.toArray(new String[0]))) {
            t.await("the management API", () -> t.out().contains("management API on " + run.resolve("rpc.sock")
                    + ", its changes kept in " + state.resolve("state.json")));
            TargetProcess.Run api = TargetProcess.cli(60, "ns", "add", "--socket", run.resolve("rpc.sock").toString(),
                    "--subsystem", shipped.subsystems().get(0).nqn(), "--nsid", "3", "ram:8M");
            assertEquals(0, api.exit(), api.err());
            assertTrue(Files.readString(state.resolve("state.json")).contains("\"nsid\" : 3"));
            try (Controller ctrl = Controller.connect(NvmeofUri.parse(t.uri(nqn)), ConnectOptions.defaults().ioQueues(1))) {
                BlockDevice dev = ctrl.namespace(1);
                assertEquals(1L << 30, dev.size());
                dev.write(0, ByteBuffer.allocate(4096));
                dev.flush();
                // systemctl reload: a second namespace appears under the connected host
                Files.writeString(config, local.replace("\"size\": \"1G\"}", "\"size\": \"1G\"},\n"
                        + "       {\"nsid\": 2, \"backend\": \"ram\", \"size\": \"16M\"}"));
                Process hup = new ProcessBuilder("kill", "-HUP", Long.toString(t.process.pid())).start();
                assertEquals(0, hup.waitFor());
                t.await("the reload", () -> t.out().contains("reloaded"));
                assertTrue(t.out().contains("namespace 2 added"), t.out());
                assertEquals(List.of(1, 2, 3), ctrl.activeNamespaces(), "the file's namespaces and the API's");
                assertEquals(16 << 20, ctrl.namespace(2).size());
                dev.write(4096, ByteBuffer.allocate(4096)); // the old connection still works
                // a broken file on reload is reported and the running configuration kept
                Files.writeString(config, "{ not json");
                new ProcessBuilder("kill", "-HUP", Long.toString(t.process.pid())).start().waitFor();
                t.await("the refused reload", () -> t.out().contains("kept its configuration"));
                assertEquals(List.of(1, 2, 3), ctrl.activeNamespaces());
            }
            assertEquals(0, t.stop());
            t.assertNoLeaks();
        }
        assertTrue(Files.exists(dir.resolve("disk0.img")));
    }

    /**
     * The notify protocol without systemd: a datagram socket where systemd's would be (python3
     * receives, as Java has no AF_UNIX datagrams) gets READY=1 after the ports listen,
     * WATCHDOG=1 at half the period while the event loops run and none while the process is
     * stopped, RELOADING=1 and READY=1 around a reload, and STOPPING=1 at SIGTERM.
     */
    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void notifiesReadyWatchdogReloadAndStop() throws Exception {
        Assumptions.assumeTrue(new ProcessBuilder("python3", "-c", "import socket").start().waitFor() == 0,
                "python3 is needed to receive the datagrams");
        Path sock = dir.resolve("notify.sock");
        Path log = dir.resolve("notify.log");
        Process receiver = new ProcessBuilder("python3", "-u", "-c", String.join("\n",
                "import socket, sys, time",
                "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)",
                "s.bind(sys.argv[1])",
                "print('BOUND', flush=True)",
                "while True:",
                "    m = s.recv(4096).decode()",
                "    print('%d %s' % (time.monotonic_ns() // 1000000, m.replace(chr(10), '|')), flush=True)"),
                sock.toString()).redirectOutput(log.toFile()).redirectErrorStream(true).start();
        try {
            Awaitility.await().atMost(TargetProcess.PATIENCE).until(() -> Files.readString(log).contains("BOUND"));
            Path config = dir.resolve("t.json");
            String json = "{\"ports\": [{\"portid\": 1, \"trtype\": \"tcp\", \"traddr\": \"127.0.0.1\", \"trsvcid\": 0,"
                    + " \"subsystems\": [\"nqn.2026-11.io.nvmeof:sd\"]}], \"subsystems\": [{\"nqn\": \"nqn.2026-11.io.nvmeof:sd\","
                    + " \"namespaces\": [{\"nsid\": 1, \"backend\": \"ram\", \"size\": \"8M\"}]}]}";
            Files.writeString(config, json);
            try (TargetProcess t = TargetProcess.startWith(List.of(), Map.of("NOTIFY_SOCKET", sock.toString(),
                    "WATCHDOG_USEC", "600000"), Fabric.TCP, dir, "--config", config.toString())) {
                t.await("READY=1", () -> Files.readString(log).contains("READY=1"));
                String ready = Files.readString(log).lines().filter(l -> l.contains("READY=1")).findFirst().orElseThrow();
                assertTrue(ready.contains("STATUS=serving 1 subsystem(s), 1 namespace(s) on 1 port(s)"), ready);
                assertTrue(ready.contains("MAINPID=" + t.process.pid()), ready);
                t.await("watchdog pings", () -> count(log, "WATCHDOG=1") >= 4);

                // stopped, the process feeds nothing: systemd would kill and restart it
                new ProcessBuilder("kill", "-STOP", Long.toString(t.process.pid())).start().waitFor();
                Path stat = Path.of("/proc/" + t.process.pid() + "/stat");
                Awaitility.await().atMost(TargetProcess.PATIENCE).until(() -> Files.readString(stat).matches("\\d+ \\(.*\\) T .*\\s*"));
                // a ping sent just before the stop may still be on its way through a busy receiver:
                // wait until a second passes without one (pings come every 300 ms while it runs)
                AtomicInteger last = new AtomicInteger(-1);
                Awaitility.await("a second without a ping").atMost(TargetProcess.PATIENCE).pollInterval(Duration.ofSeconds(1))
                        .until(() -> {
                            int now = count(log, "WATCHDOG=1");
                            return now == last.getAndSet(now);
                        });
                int before = count(log, "WATCHDOG=1");
                Awaitility.await("no pings while stopped").during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(10))
                        .until(() -> count(log, "WATCHDOG=1") == before);
                new ProcessBuilder("kill", "-CONT", Long.toString(t.process.pid())).start().waitFor();
                t.await("watchdog pings after SIGCONT", () -> count(log, "WATCHDOG=1") > before + 1);

                new ProcessBuilder("kill", "-HUP", Long.toString(t.process.pid())).start().waitFor();
                t.await("READY=1 after the reload", () -> count(log, "READY=1") == 2);
                String text = Files.readString(log);
                assertTrue(text.indexOf("RELOADING=1|MONOTONIC_USEC=") > text.indexOf("READY=1"), text);
                assertTrue(text.lastIndexOf("READY=1") > text.indexOf("RELOADING=1"), text);
                assertEquals(0, t.stop());
                Awaitility.await().atMost(TargetProcess.PATIENCE).until(() -> Files.readString(log).contains("STOPPING=1"));
                t.assertNoLeaks();
            }
        } finally {
            receiver.destroy();
        }
    }

    private static int count(Path log, String what) throws java.io.IOException {
        return (int) Files.readString(log).lines().filter(l -> l.contains(what)).count();
    }

    /** systemd's own review of the unit's sandboxing: an exposure of at most 3.0 (where systemd-analyze can say). */
    @Test
    void systemdRatesTheSandboxAtMostThree() throws Exception {
        Process v;
        try {
            v = new ProcessBuilder("systemd-analyze", "--version").redirectErrorStream(true).start();
        } catch (java.io.IOException e) {
            Assumptions.abort("systemd-analyze is not installed here; the service test in a systemd guest checks it");
            return;
        }
        String version = new String(v.getInputStream().readAllBytes());
        Matcher m = Pattern.compile("systemd (\\d+)").matcher(version);
        Assumptions.assumeTrue(v.waitFor() == 0 && m.find() && Integer.parseInt(m.group(1)) >= 250,
                "systemd-analyze security --offline needs systemd 250 or later: " + version);
        Path unit = dir.resolve("nvmeof-target.service");
        Files.copy(SYSTEMD.resolve("nvmeof-target.service"), unit);
        Process p = new ProcessBuilder("systemd-analyze", "security", "--offline=true", "--no-pager", unit.toString())
                .directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        p.waitFor();
        Matcher score = Pattern.compile("Overall exposure level for nvmeof-target.service: (\\d+\\.\\d)").matcher(out);
        assertTrue(score.find(), out);
        assertTrue(Double.parseDouble(score.group(1)) <= 3.0, "exposure " + score.group(1) + ":\n" + out);
    }
}
