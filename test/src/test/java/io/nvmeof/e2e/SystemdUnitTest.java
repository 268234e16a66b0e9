package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.NvmeofUri;
import io.nvmeof.target.config.ConfigLoader;
import io.nvmeof.target.config.TargetConfig;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
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
        assertEquals("/usr/bin/java", argv.get(0));
        int jar = argv.indexOf("-jar");
        assertEquals("/opt/nvmeof/nvmeof.jar", argv.get(jar + 1));
        assertEquals("target", argv.get(jar + 2));
        List<String> targetArgs = new ArrayList<>(argv.subList(jar + 3, argv.size()));
        int c = targetArgs.indexOf("--config");
        assertEquals("/etc/nvmeof/target.json", targetArgs.get(c + 1));

        // the shipped JSON, with its state directory and ports moved for the test
        String json = Files.readString(SYSTEMD.resolve("target.json"));
        TargetConfig shipped = ConfigLoader.parse(json);
        assertEquals(8009, shipped.ports().get(1).trsvcid(), "a discovery port by default");
        String local = json.replace("/var/lib/nvmeof", dir.toString()).replace("4420", "0").replace("8009", "0");
        Path config = dir.resolve("target.json");
        Files.writeString(config, local);
        targetArgs.set(c + 1, config.toString());
        String nqn = shipped.subsystems().get(0).nqn();
        try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, targetArgs.toArray(new String[0]))) {
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
                Awaitility.await().atMost(20, TimeUnit.SECONDS).until(() -> t.out().contains("reloaded"));
                assertTrue(t.out().contains("namespace 2 added"), t.out());
                assertEquals(List.of(1, 2), ctrl.activeNamespaces());
                assertEquals(16 << 20, ctrl.namespace(2).size());
                dev.write(4096, ByteBuffer.allocate(4096)); // the old connection still works
                // a broken file on reload is reported and the running configuration kept
                Files.writeString(config, "{ not json");
                new ProcessBuilder("kill", "-HUP", Long.toString(t.process.pid())).start().waitFor();
                Awaitility.await().atMost(20, TimeUnit.SECONDS).until(() -> t.out().contains("kept its configuration"));
                assertEquals(List.of(1, 2), ctrl.activeNamespaces());
            }
            assertEquals(0, t.stop());
            t.assertNoLeaks();
        }
        assertTrue(Files.exists(dir.resolve("disk0.img")));
    }
}
