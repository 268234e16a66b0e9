package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.NvmeofUri;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped unit and default config describe a target that runs: ExecStart with the
 * config's variables expanded the way systemd does it (paths moved into a temp dir and the
 * port to a free one) starts, serves, and stops cleanly on SIGTERM, as systemd stops it.
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
    void defaultConfigStartsServesAndStopsCleanly() throws Exception {
        String unit = Files.readString(SYSTEMD.resolve("nvmeof-target.service"));
        assertTrue(unit.contains("EnvironmentFile=/etc/nvmeof/target.conf"), unit);
        assertTrue(unit.contains("KillSignal=SIGTERM"));
        assertTrue(unit.contains("WantedBy=multi-user.target"));
        Matcher exec = Pattern.compile("(?m)^ExecStart=(.*)$").matcher(unit);
        assertTrue(exec.find(), "ExecStart");
        Map<String, String> env = environmentFile(SYSTEMD.resolve("target.conf"));
        assertTrue(env.containsKey("NVMEOF_TARGET_ARGS"), env.toString());

        List<String> argv = new ArrayList<>();
        for (String word : exec.group(1).trim().split("\\s+")) {
            if (word.startsWith("$")) {
                String v = env.getOrDefault(word.substring(1), "");
                for (String w : v.trim().split("\\s+")) {
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
        List<String> targetArgs = new ArrayList<>();
        for (String a : argv.subList(jar + 3, argv.size())) {
            targetArgs.add(a.replace("/var/lib/nvmeof", dir.toString()).replaceAll(":4420$", ":0"));
        }
        String nqn = targetArgs.get(targetArgs.indexOf("--subsystem") + 1);
        try (TargetProcess t = TargetProcess.start(dir, targetArgs.toArray(new String[0]))) {
            try (Controller c = Controller.connect(NvmeofUri.parse(t.uri(nqn)), ConnectOptions.defaults().ioQueues(1))) {
                BlockDevice dev = c.namespace(1);
                assertEquals(1L << 30, dev.size());
                ByteBuffer b = ByteBuffer.allocate(4096);
                dev.write(0, b);
                dev.flush();
            }
            assertEquals(0, t.stop());
            t.assertNoLeaks();
        }
        assertTrue(Files.exists(dir.resolve("disk0.img")));
    }
}
