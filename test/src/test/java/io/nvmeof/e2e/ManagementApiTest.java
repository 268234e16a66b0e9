package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.target.Setting;
import io.nvmeof.target.Settings;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The management API end to end, against the target process as users run it: changes made
 * through it serve hosts at once and survive a restart; calls made at once, and a reload racing
 * them, lose nothing; a caller the target does not admit, a path outside the allowed ones and a
 * corrupt state file are refused with what is wrong.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ManagementApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String A = "nqn.2026-11.io.nvmeof:api-a";
    private static final String B = "nqn.2026-11.io.nvmeof:api-b";

    @TempDir
    Path dir;

    private Path config() throws IOException {
        Path c = dir.resolve("target.json");
        Files.writeString(c, """
                {"ports": [{"portid": 1, "trtype": "tcp", "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "namespaces": [{"nsid": 1, "backend": "ram", "size": "1M"}]}],
                 "management": {"allowed_paths": ["%s"], "allowed_groups": ["nvmeof-operators"]}}
                """.formatted(A, A, dir.resolve("volumes")));
        Files.createDirectories(dir.resolve("volumes"));
        return c;
    }

    private TargetProcess start(Path config) throws Exception {
        return TargetProcess.startManaged(dir, config);
    }

    private Path socket() {
        return TargetProcess.managementSocket(dir);
    }

    /** One call over the socket, as any JSON-RPC client makes it; the response. */
    static JsonNode rpc(Path socket, String method, String params) throws IOException {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(socket));
            String req = "{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"" + method + "\", \"params\": " + params + "}\n";
            ByteBuffer b = ByteBuffer.wrap(req.getBytes(StandardCharsets.UTF_8));
            while (b.hasRemaining()) {
                ch.write(b);
            }
            String line = new BufferedReader(new InputStreamReader(Channels.newInputStream(ch), StandardCharsets.UTF_8))
                    .readLine();
            JsonNode r = JSON.readTree(line);
            assertEquals(7, r.path("id").asInt(), line);
            return r;
        }
    }

    private Set<String> subsystems() throws IOException {
        Set<String> s = new HashSet<>();
        for (JsonNode n : rpc(socket(), "get_subsystems", "{}").get("result")) {
            s.add(n.get("nqn").asText());
        }
        return s;
    }

    /**
     * A target started with flags alone (no configuration file), as the management guide's first
     * commands have it: without {@code --allowed-path} a file namespace is refused with a message
     * that names the flag; with it, the same command adds the namespace; the state directory
     * stays refused even when it lies under an allowed path.
     */
    @Test
    void allowedPathFlagLetsTheApiAddFileNamespaces() throws Exception {
        Path volumes = Files.createDirectories(dir.resolve("vols"));
        Path state = dir.resolve("vols/state");
        String nqn = "nqn.2026-12.io.nvmeof:flags";
        for (boolean allowed : new boolean[] {false, true}) {
            List<String> args = new ArrayList<>(List.of("--listen", "tcp://127.0.0.1:0", "--subsystem", nqn, "--namespace",
                    "ram:1M", "--rpc-socket", socket().toString(), "--state-dir", state.toString()));
            if (allowed) {
                args.addAll(List.of("--allowed-path", volumes.toString()));
            }
            try (TargetProcess t = TargetProcess.start(Fabric.TCP, dir, args.toArray(String[]::new))) {
                t.await("the management API", () -> t.out().contains("management API on"));
                TargetProcess.Run r = TargetProcess.cli(60, "ns", "add", "--socket", socket().toString(), "--subsystem",
                        nqn, "file:" + volumes.resolve("v.img") + ",size=4M");
                if (allowed) {
                    assertEquals(0, r.exit(), r.err());
                    assertTrue(r.out().contains("namespace 2 added"), r.out());
                    r = TargetProcess.cli(60, "ns", "add", "--socket", socket().toString(), "--subsystem", nqn,
                            "file:" + state.resolve("state.json"));
                    assertEquals(1, r.exit(), "the state directory is never served: " + r.out());
                } else {
                    assertEquals(1, r.exit(), r.out());
                    assertTrue(r.err().contains("is not a file or device under management.allowed_paths")
                            && r.err().contains("--allowed-path DIR"), r.err());
                }
            }
        }
    }

    /** A reload that changes management.allowed_paths says so (it once said "no changes"), and the API takes it. */
    @Test
    void aReloadNamesAChangeOfTheAllowedPaths() throws Exception {
        Path config = config();
        Path more = Files.createDirectories(dir.resolve("more"));
        try (TargetProcess t = start(config)) {
            Files.writeString(config, Files.readString(config).replace("\"allowed_paths\": [\"",
                    "\"allowed_paths\": [\"" + more + "\", \""));
            t.signal("HUP");
            t.await("the reload", () -> t.out().contains("nvmeof target reloaded"));
            assertTrue(t.out().contains("management.allowed_paths now [\"" + more + "\","), t.out());
            TargetProcess.Run r = TargetProcess.cli(60, "subsystem", "add", "--socket", socket().toString(), B);
            assertEquals(0, r.exit(), r.err());
            r = TargetProcess.cli(60, "ns", "add", "--socket", socket().toString(), "--subsystem", B,
                    "file:" + more.resolve("m.img") + ",size=1M");
            assertEquals(0, r.exit(), "a file under the newly allowed directory: " + r.err());
        }
    }

    @Test
    void changesServeAtOnceSurviveARestartAndRacingCallsAndAReloadLoseNothing() throws Exception {
        Path config = config();
        byte[] data = new byte[64 << 10];
        new Random(5).nextBytes(data);
        Path in = dir.resolve("in.bin");
        Files.write(in, data);
        int port;
        try (TargetProcess t = start(config)) {
            port = t.port;
            assertTrue(t.out().contains("management API on " + socket()), t.out());
            assertEquals("rw-rw----", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket())));
            // the friendly commands: a subsystem, a file namespace under the allowed path, served on port 1
            TargetProcess.Run r = TargetProcess.cli(60, "subsystem", "add", "--socket", socket().toString(), B);
            assertEquals(0, r.exit(), r.err());
            r = TargetProcess.cli(60, "ns", "add", "--socket", socket().toString(), "--subsystem", B,
                    "file:" + dir.resolve("volumes/b.img") + ",size=4M");
            assertEquals(0, r.exit(), r.err());
            assertTrue(r.out().contains("namespace 1 added"), r.out());
            r = TargetProcess.cli(60, "rpc", "--socket", socket().toString(), "add_port_subsystem",
                    "{\"portid\": 1, \"nqn\": \"" + B + "\"}");
            assertEquals(0, r.exit(), r.err());
            r = TargetProcess.cli(60, "write", t.uri(B), "--offset", "8192", "--input", in.toString());
            assertEquals(0, r.exit(), "a host writes to the namespace the API added: " + r.err());

            // a path outside management.allowed_paths: refused, named, nothing changed
            r = TargetProcess.cli(60, "ns", "add", "--socket", socket().toString(), "--subsystem", B, "file:/etc/hostname");
            assertEquals(1, r.exit());
            assertTrue(r.err().contains("params.path: /etc/hostname is not a file or device under management.allowed_paths"),
                    r.err());
            r = TargetProcess.cli(60, "ns", "add", "--socket", socket().toString(), "--subsystem", B,
                    "file:" + dir.resolve("volumes/../outside.img") + ",size=1M");
            assertEquals(1, r.exit(), "a path that leaves the allowed one by ..");
            JsonNode e = rpc(socket(), "add_namespace", "{\"nqn\": \"" + B + "\", \"backend\": \"ram\", \"size\": \"3k\"}");
            assertEquals(-32602, e.at("/error/code").asInt(), e.toString());
            assertTrue(e.at("/error/message").asText().contains("is not a multiple of the 4096-byte block size"), e.toString());
            e = rpc(socket(), "set_host_keys", "{\"host\": \"nqn.2014-08.org.nvmexpress:uuid:1\", \"dhchap_key_file\": \"k\"}");
            assertEquals("params.dhchap_key_file", e.at("/error/data/field").asText(), e.toString());
            e = rpc(socket(), "no_such_method", "{}");
            assertEquals(-32601, e.at("/error/code").asInt());
            assertEquals(2, rpc(socket(), "get_config", "{}").at("/result/subsystems").size());

            // eight calls at once and a reload (SIGHUP) among them: every change stays
            int n = 8;
            ExecutorService pool = Executors.newFixedThreadPool(n);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<JsonNode>> calls = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                String nqn = "nqn.2026-11.io.nvmeof:api-c" + i;
                calls.add(pool.submit(() -> {
                    go.await();
                    return rpc(socket(), "create_subsystem", "{\"nqn\": \"" + nqn + "\"}");
                }));
            }
            go.countDown();
            new ProcessBuilder("kill", "-HUP", Long.toString(t.process.pid())).start().waitFor();
            for (Future<JsonNode> f : calls) {
                JsonNode res = f.get(60, TimeUnit.SECONDS);
                assertTrue(res.has("result"), res.toString());
            }
            pool.shutdown();
            t.await("the reload", () -> t.out().contains("nvmeof target reloaded"));
            Set<String> subs = subsystems();
            assertEquals(n + 2, subs.size(), subs.toString());
            JsonNode stats = rpc(socket(), "get_stats", "{}").get("result");
            assertTrue(stats.get("generation").asLong() >= n + 4, stats.toString());
            String state = Files.readString(dir.resolve("state/state.json"));
            for (int i = 0; i < n; i++) {
                assertTrue(state.contains("api-c" + i), state);
            }
            assertFalse(Files.readString(config).contains(B), "the operator's file is never written");
            assertEquals(0, t.stop());
            t.assertNoLeaks();
        }
        // restarted: the file, then the API's changes; the data is where it was written
        try (TargetProcess t = start(config)) {
            assertEquals(10, subsystems().size());
            Path out = dir.resolve("out.bin");
            TargetProcess.Run r = TargetProcess.cli(60, "read", t.uri(B), "--offset", "8192", "--length",
                    Integer.toString(data.length), "--output", out.toString());
            assertEquals(0, r.exit(), r.err());
            assertArrayEquals(data, Files.readAllBytes(out));
            // save_config: the configuration in effect as one private file that --config takes, in its directory
            Path saved = dir.resolve("state/saved/saved.json");
            JsonNode res = rpc(socket(), "save_config", "{\"path\": \"saved.json\"}");
            assertTrue(res.has("result"), res.toString());
            assertEquals(saved.toString(), res.at("/result/path").asText());
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(saved)));
            r = TargetProcess.cli(60, "target", "--config", saved.toString(), "--show-config");
            assertEquals(0, r.exit(), r.err());
            assertEquals(10, JSON.readTree(r.out()).get("subsystems").size(), r.out());
            // a removal persists too
            r = TargetProcess.cli(60, "subsystem", "remove", "--socket", socket().toString(), "nqn.2026-11.io.nvmeof:api-c0");
            assertEquals(0, r.exit(), r.err());
            assertEquals(0, t.stop());
        }
        try (TargetProcess t = start(config)) {
            assertEquals(9, subsystems().size());
            assertFalse(subsystems().contains("nqn.2026-11.io.nvmeof:api-c0"));
            assertEquals(0, t.stop());
        }
        // a corrupt state is named, never silently dropped
        Files.writeString(dir.resolve("state/state.json"), "{\"version\": 1, \"subsystems\": [");
        TargetProcess.Run r = TargetProcess.cli(60, "target", "--config", config.toString(), "--rpc-socket",
                socket().toString(), "--state-dir", dir.resolve("state").toString());
        assertEquals(1, r.exit());
        assertTrue(r.err().contains("state file " + dir.resolve("state/state.json") + " is corrupt"), r.err());
        assertNotEquals(0, port);
    }

    /**
     * The commands' flags are the configuration schema's rows (issue 48): a subsystem and a
     * namespace made with every generated flag hold each value in get_config, and written back
     * read the same; a bad value is refused by the daemon with the field named, and nothing
     * changes.
     */
    @Test
    void theCommandsFlagsAreTheSchemasRows() throws Exception {
        String host = "nqn.2026-11.io.nvmeof:flag-host";
        try (TargetProcess t = start(config())) {
            String sock = socket().toString();
            // a serial of digits stays text, an OUI of digits stays hex, a flag alone does not take the next argument
            TargetProcess.Run r = TargetProcess.cli(60, "subsystem", "add", "--socket", sock, B,
                    "--allow-host", host, "--model", "flagged", "--serial", "12345678", "--firmware", "9.9",
                    "--ieee-oui", "001018", "--cntlid-min", "10", "--cntlid-max", "20", "--gateways=false",
                    "--allow-any-host=false");
            assertEquals(0, r.exit(), r.err());
            r = TargetProcess.cli(60, "ns", "add", "--socket", sock, "--subsystem", B, "--allow-shrink", "ram:8M", "--nsid",
                    "5", "--ana-grpid", "2", "--visible-to", host, "--uuid", "6f1c5d0e-7a43-4b8e-9d61-0a1b2c3d4e10",
                    "--enable=false");
            assertEquals(0, r.exit(), r.err());
            r = TargetProcess.cli(60, "ns", "add", "--socket", sock, "--subsystem", B, "ram:8M", "--ana-grpid", "999");
            assertEquals(1, r.exit());
            assertTrue(r.err().contains("params.ana_grpid") || r.err().contains("ana_grpid: must be 1..128"), r.err());
            r = TargetProcess.cli(60, "subsystem", "add", "--socket", sock, "nqn.2026-11.io.nvmeof:bad-oui",
                    "--ieee-oui", "0x1000000");
            assertEquals(1, r.exit());
            assertTrue(r.err().contains("ieee_oui"), r.err());
            // add_port takes the port schema's keys, and only those; its transport options are checked as in a file
            JsonNode e = rpc(socket(), "add_port", "{\"trtype\": \"tcp\", \"traddr\": \"127.0.0.1\", \"bogus\": 1}");
            assertEquals(-32602, e.at("/error/code").asInt(), e.toString());
            assertTrue(e.at("/error/message").asText().contains("bogus"), e.toString());
            e = rpc(socket(), "add_port", "{\"trtype\": \"tcp\", \"traddr\": \"127.0.0.1\", \"trsvcid\": 0,"
                    + " \"tls\": \"maybe\"}");
            assertEquals(-32602, e.at("/error/code").asInt(), e.toString());
            assertTrue(e.at("/error/message").asText().contains("tls"), e.toString());
            e = rpc(socket(), "add_port", "{\"portid\": 77, \"trtype\": \"tcp\", \"traddr\": \"127.0.0.1\", \"trsvcid\": 0,"
                    + " \"subsystems\": [\"" + B + "\"], \"ana_groups\": [{\"grpid\": 2, \"ana\": {\"state\": \"inaccessible\"}}]}");
            assertTrue(e.has("result"), e.toString());
            JsonNode config = rpc(socket(), "get_config", "{}").get("result");
            JsonNode added = null;
            for (JsonNode port : config.get("ports")) {
                if (port.get("portid").asInt() == 77) {
                    added = port;
                }
            }
            assertTrue(added != null && added.get("subsystems").get(0).asText().equals(B)
                    && added.at("/ana_groups/0/ana/state").asText().equals("inaccessible"), config.toString());
            JsonNode sub = null;
            for (JsonNode s : config.get("subsystems")) {
                if (s.get("nqn").asText().equals(B)) {
                    sub = s;
                }
                assertNotEquals("nqn.2026-11.io.nvmeof:bad-oui", s.get("nqn").asText(), "a refused call changes nothing");
            }
            assertTrue(sub != null, config.toString());
            assertEquals("flagged", sub.get("model").asText());
            assertEquals("12345678", sub.get("serial").asText());
            assertEquals("9.9", sub.get("firmware").asText());
            assertEquals("0x001018", sub.get("ieee_oui").asText());
            assertEquals(10, sub.get("cntlid_min").asInt());
            assertEquals(20, sub.get("cntlid_max").asInt());
            assertFalse(sub.get("allow_any_host").asBoolean());
            assertEquals(host, sub.get("allowed_hosts").get(0).asText());
            assertEquals(1, sub.get("namespaces").size(), "the one that was refused is not there: " + sub);
            JsonNode ns = sub.get("namespaces").get(0);
            assertEquals(5, ns.get("nsid").asInt());
            assertEquals(2, ns.get("ana_grpid").asInt());
            assertEquals(host, ns.get("visible_to").get(0).asText());
            assertEquals("6f1c5d0e-7a43-4b8e-9d61-0a1b2c3d4e10", ns.get("uuid").asText());
            assertTrue(ns.get("allow_shrink").asBoolean());
            assertFalse(ns.get("enable").asBoolean(), "added disabled");
            // set_ana_state: the ANA group's rows check it, and name the parameter
            r = TargetProcess.cli(60, "ana", "set", "--socket", sock, "--port", "77", "--group", "129", "optimized");
            assertEquals(1, r.exit());
            assertTrue(r.err().contains("params.grpid"), r.err());
            r = TargetProcess.cli(60, "ana", "set", "--socket", sock, "--port", "77", "--group", "2", "sideways");
            assertEquals(1, r.exit());
            assertTrue(r.err().contains("params.state") && r.err().contains("persistent-loss"), r.err());
            r = TargetProcess.cli(60, "ana", "set", "--socket", sock, "--port", "77", "--group", "2", "non-optimized");
            assertEquals(0, r.exit(), r.err());
            JsonNode states = rpc(socket(), "get_ana_states", "{}").get("result");
            assertTrue(states.toString().contains("non-optimized"), states.toString());
            // set_host_keys takes the host's rows that name key files, and nothing inline
            e = rpc(socket(), "set_host_keys", "{\"host\": \"" + host + "\", \"dhchap_key\": \"DHHC-1:00:x:\"}");
            assertEquals(-32602, e.at("/error/code").asInt(), e.toString());
            assertTrue(e.at("/error/message").asText().contains("dhchap_key"), e.toString());
            e = rpc(socket(), "set_host_keys", "{\"host\": \"" + host + "\", \"tls_key_file\": \"/nonexistent\","
                    + " \"dhchap_hashes\": [\"md5\"]}");
            assertEquals("params.dhchap_hashes[0]", e.at("/error/data/field").asText(), e.toString());
            assertTrue(e.at("/error/message").asText().contains("sha256, sha384 or sha512"), e.toString());
            assertEquals(0, t.stop());
        }
    }

    /**
     * A caller whose user and group the target does not admit is refused by SO_PEERCRED, even
     * where the socket's mode let it connect; the refusal is logged with who it was.
     */
    @Test
    void aCallerTheTargetDoesNotAdmitIsRefused() throws Exception {
        Path config = config();
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        ProcessBuilder probe = new ProcessBuilder("setpriv", "--reuid=65534", "--regid=0", "--clear-groups", "true");
        boolean canSwitch;
        try {
            canSwitch = probe.start().waitFor() == 0;
        } catch (IOException e) {
            canSwitch = false;
        }
        assumeTrue(canSwitch, "needs root and setpriv to call as another user");
        // the socket's directory and a copy of the jar must be reachable for the other user (a clone
        // may sit in a private directory); the socket itself is 0660 root:root
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path jar = Files.copy(TargetProcess.JAR, dir.resolve("nvmeof.jar"));
        Files.setPosixFilePermissions(jar, PosixFilePermissions.fromString("rw-r--r--"));
        try (TargetProcess t = start(config)) {
            Files.setPosixFilePermissions(socket().getParent(), PosixFilePermissions.fromString("rwxr-xr-x"));
            List<String> cmd = new ArrayList<>(List.of("setpriv", "--reuid=65534", "--regid=0", "--clear-groups",
                    java.toString(), "-Xmx128m", "-XX:-UsePerfData", "-jar", jar.toString(), "rpc",
                    "--socket", socket().toString(), "create_subsystem", "{\"nqn\": \"nqn.2026-11.io.nvmeof:intruder\"}"));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(60, TimeUnit.SECONDS));
            assertEquals(1, p.exitValue(), out);
            assertTrue(out.contains("not authorized: user nobody (group root) may not manage this target"), out);
            t.await("the refusal in the log", () -> t.err().contains("management API: refused user nobody (group root)"));
            assertFalse(subsystems().contains("nqn.2026-11.io.nvmeof:intruder"));
            assertEquals(0, t.stop());
        }
    }

    /** --show-config prints every setting of the table once, the flags over the file. */
    @Test
    void showConfigPrintsEverySettingOnce() throws Exception {
        TargetProcess.Run r = TargetProcess.cli(60, "target", "--config", config().toString(), "--show-config",
                "--max-connections", "77", "--busy-poll");
        assertEquals(0, r.exit(), r.err());
        JsonNode settings = JSON.readTree(r.out()).get("settings");
        List<String> keys = new ArrayList<>();
        for (Iterator<String> it = settings.fieldNames(); it.hasNext(); ) {
            keys.add(it.next());
        }
        List<String> table = new ArrayList<>();
        for (Setting<?> s : Settings.ALL) {
            table.add(s.key());
        }
        assertEquals(table, keys);
        assertEquals(77, settings.get("max_connections").asInt());
        assertEquals("always", settings.get("busy_poll").asText());
        r = TargetProcess.cli(60, "target", "--config", config().toString(), "--show-config", "--mdts", "99");
        assertEquals(1, r.exit());
        assertTrue(r.err().contains("--mdts must be 1..10, not 99"), r.err());
    }
}
