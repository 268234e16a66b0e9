package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.NvmeofUri;
import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.protocol.auth.DhchapKey;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The management API tried as an attacker would, against the target process as users run it
 * (real socket, real files, another user by setpriv): paths that leave the allowed directories,
 * state edited behind the target's back, keys a caller could carry off or freeze, sizes and files
 * that would halt or wedge the target, and callers that would lock out root.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ManagementTrustTest {
    private static final String A = "nqn.2026-11.io.nvmeof:trust-a";
    private static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:0b6f7b8e-3c55-4a0b-9d7e-5f1c2a9e7d11";

    @TempDir
    Path dir;

    private Path socket() {
        return TargetProcess.managementSocket(dir);
    }

    private Path volumes() {
        return dir.resolve("volumes");
    }

    /** A configuration allowing {@code volumes/} (and {@code extra}, JSON text, in its management object). */
    private Path config(String extraManagement, String extraRoot) throws IOException {
        Files.createDirectories(volumes());
        Path c = dir.resolve("target.json");
        Files.writeString(c, """
                {"ports": [{"portid": 1, "trtype": "tcp", "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "namespaces": [{"nsid": 1, "backend": "ram", "size": "1M"}]}]%s,
                 "management": {"allowed_paths": ["%s"]%s}}
                """.formatted(A, A, extraRoot, volumes(), extraManagement));
        Files.setPosixFilePermissions(c, PosixFilePermissions.fromString("rw-------"));
        return c;
    }

    private TargetProcess start(Path config) throws Exception {
        return TargetProcess.startManaged(dir, config);
    }

    private JsonNode rpc(String method, String params) throws IOException {
        return ManagementApiTest.rpc(socket(), method, params);
    }

    /** The call was refused as invalid params naming {@code field}. */
    private static void refused(JsonNode r, String field) {
        assertEquals(-32602, r.at("/error/code").asInt(), r.toString());
        assertEquals(field, r.at("/error/data/field").asText(), r.toString());
    }

    private List<Long> nsids(String nqn) throws IOException {
        List<Long> l = new ArrayList<>();
        for (JsonNode s : rpc("get_subsystems", "{}").get("result")) {
            if (s.get("nqn").asText().equals(nqn)) {
                s.get("namespaces").forEach(n -> l.add(n.get("nsid").asLong()));
            }
        }
        return l;
    }

    private static String addFile(String path, String size) {
        return "{\"nqn\": \"" + A + "\", \"backend\": \"file\", \"path\": \"" + path + "\""
                + (size == null ? "" : ", \"size\": \"" + size + "\"") + "}";
    }

    /**
     * Item 1: a link inside the allowed directory to one outside, then {@code ..}: the kernel
     * follows the link first, so the path names a file outside. Refused, reading and creating,
     * with one answer that does not tell whether the file is there.
     */
    @Test
    void aLinkAndDotDotCannotLeaveTheAllowedPaths() throws Exception {
        Path outside = Files.createDirectories(dir.resolve("outside"));
        Path secret = Files.writeString(dir.resolve("secret"), "TOPSECRET".repeat(1000));
        try (TargetProcess t = start(config("", ""))) {
            Files.createSymbolicLink(volumes().resolve("l"), outside);
            refused(rpc("add_namespace", addFile(volumes() + "/l/../secret", null)), "params.path");
            refused(rpc("add_namespace", addFile(volumes() + "/l/../cron", "1M")), "params.path");
            assertFalse(Files.exists(dir.resolve("cron")), "nothing created outside");
            refused(rpc("add_namespace", addFile(volumes() + "/l/x.img", "1M")), "params.path");
            assertFalse(Files.exists(outside.resolve("x.img")));
            Files.createSymbolicLink(volumes().resolve("s.img"), secret);
            refused(rpc("add_namespace", addFile(volumes() + "/s.img", null)), "params.path");
            // item 20: a file that is there and one that is not get the same answer
            String there = rpc("add_namespace", addFile("/etc/hostname", null)).at("/error/message").asText();
            String absent = rpc("add_namespace", addFile("/etc/no-such-dir/x", null)).at("/error/message").asText();
            assertEquals(there.replace("/etc/hostname", "P"), absent.replace("/etc/no-such-dir/x", "P"));
            assertEquals(List.of(1L), nsids(A));
            // the allowed directory still works, by a link within it too; the resolved path is kept
            Path real = volumes().resolve("real.img");
            assertTrue(rpc("add_namespace", addFile(real.toString(), "1M")).has("result"));
            Files.write(volumes().resolve("real2.img"), new byte[1 << 20]);
            Files.createSymbolicLink(volumes().resolve("alias.img"), volumes().resolve("real2.img"));
            JsonNode r = rpc("add_namespace", addFile(volumes() + "/alias.img", null));
            assertTrue(r.has("result"), r.toString());
            assertEquals(List.of(1L, 2L, 3L), nsids(A));
            assertFalse(Files.readString(dir.resolve("state/state.json")).contains("alias.img"), "the link is not kept");
            assertEquals(0, t.stop());
        }
        assertTrue(Files.readString(secret).startsWith("TOPSECRET"));
    }

    /**
     * Items 2 and 10: what the API added is checked again at every open. A file it added that
     * became a link to a file outside, and a namespace written into the state file by hand, are
     * not served after a restart: logged, and named in get_subsystems.
     */
    @Test
    void theStateIsCheckedAtEveryStart() throws Exception {
        Path secret = Files.writeString(dir.resolve("secret"), "TOPSECRET".repeat(1000));
        Path config = config("", "");
        Path img = volumes().resolve("a.img");
        try (TargetProcess t = start(config)) {
            assertTrue(rpc("add_namespace", addFile(img.toString(), "1M")).has("result"));
            assertEquals(List.of(1L, 2L), nsids(A));
            assertEquals(0, t.stop());
        }
        Files.delete(img);
        Files.createSymbolicLink(img, secret);
        Path state = dir.resolve("state/state.json");
        String s = Files.readString(state);
        Files.writeString(state, s.replace("\"namespaces\" : {", "\"namespaces\" : {\"" + A + "#7\": {\"nsid\": 7,"
                + " \"backend\": \"file\", \"path\": \"" + secret + "\"},"));
        try (TargetProcess t = start(config)) {
            assertEquals(List.of(1L), nsids(A), "neither the re-pointed file nor the hand-written one is served");
            JsonNode sub = rpc("get_subsystems", "{}").get("result").get(0);
            List<Long> unserved = new ArrayList<>();
            sub.get("unserved_namespaces").forEach(n -> unserved.add(n.get("nsid").asLong()));
            assertEquals(List.of(2L, 7L), unserved, sub.toString());
            t.await("the refusal in the log", () -> t.err().contains("not serving namespace " + A + "#2"));
            // the API works on beside them
            assertTrue(rpc("add_namespace", addFile(volumes().resolve("b.img").toString(), "1M")).has("result"));
            try (Controller c = Controller.connect(NvmeofUri.parse(t.uri(A)), ConnectOptions.defaults().ioQueues(1))) {
                assertEquals(2, c.activeNamespaces().size(), c.activeNamespaces().toString());
            }
            assertEquals(0, t.stop());
        }
    }

    /**
     * Item 3: save_config writes no key (a key file's path for a key from one, a marker the
     * loader refuses for an inline one), only into its own directory, and never through a
     * file planted at its name.
     */
    @Test
    void saveConfigWritesNoKeyAndOnlyIntoItsDirectory() throws Exception {
        SecureRandom rnd = new SecureRandom();
        String inline = DhchapKey.create(DhchapKey.randomSecret(32, rnd), null, HOST).format();
        String fromFile = DhchapKey.create(DhchapKey.randomSecret(32, rnd), null, HOST).format();
        Path keyFile = Files.writeString(dir.resolve("host2.key"), fromFile);
        Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("rw-------"));
        String hosts = ", \"hosts\": [{\"nqn\": \"" + HOST + "\", \"dhchap_key\": \"" + inline + "\"},"
                + " {\"nqn\": \"" + HOST + "-2\", \"dhchap_key_file\": \"" + keyFile + "\"}]";
        Path config = config("", hosts);
        try (TargetProcess t = start(config)) {
            Path saveDir = dir.resolve("state/saved");
            JsonNode r = rpc("save_config", "{\"path\": \"s.json\"}");
            assertTrue(r.has("result"), r.toString());
            Path saved = saveDir.resolve("s.json");
            assertEquals(saved.toString(), r.at("/result/path").asText());
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(saved)));
            String text = Files.readString(saved);
            assertFalse(text.contains(inline) || text.contains(fromFile), text);
            assertTrue(text.contains("\"dhchap_key_file\" : \"" + keyFile + "\""), text);
            TargetProcess.Run load = TargetProcess.cli(60, "target", "--config", saved.toString(), "--show-config");
            assertEquals(1, load.exit(), load.out());
            assertTrue(load.err().contains("hosts[0].dhchap_key: inline key not saved: move it to a key file"), load.err());
            // only into its directory
            refused(rpc("save_config", "{\"path\": \"" + volumes().resolve("x.json") + "\"}"), "params.path");
            refused(rpc("save_config", "{\"path\": \"" + dir.resolve("state/state.json") + "\"}"), "params.path");
            refused(rpc("save_config", "{\"path\": \"../state.json\"}"), "params.path");
            // a link planted at its name is replaced, not written through
            Path victim = Files.writeString(dir.resolve("victim"), "precious");
            Files.createSymbolicLink(saveDir.resolve("planted.json"), victim);
            assertTrue(rpc("save_config", "{\"path\": \"planted.json\"}").has("result"));
            assertEquals("precious", Files.readString(victim));
            assertFalse(Files.isSymbolicLink(saveDir.resolve("planted.json")));
            // the temporary file is never a fixed name another user can plant
            try (var files = Files.list(saveDir)) {
                assertEquals(List.of("planted.json", "s.json"), files.map(p -> p.getFileName().toString()).sorted().toList());
            }
            // and the save directory is never servable
            refused(rpc("add_namespace", addFile(saved.toString(), null)), "params.path");
            assertEquals(0, t.stop());
        }
    }

    /**
     * Item 4: set_qos on a host keeps only the rate limits; the host's keys stay the
     * configuration's, so rotating its key file and reloading takes effect. A state file that
     * holds a key (written by the old set_qos) is scrubbed at the start, naming the host.
     */
    @Test
    void setQosOnAHostDoesNotFreezeItsKeys() throws Exception {
        SecureRandom rnd = new SecureRandom();
        DhchapKey k1 = DhchapKey.create(DhchapKey.randomSecret(32, rnd), null, HOST);
        DhchapKey k2 = DhchapKey.create(DhchapKey.randomSecret(32, rnd), null, HOST);
        Path keyFile = Files.writeString(dir.resolve("host.key"), k1.format());
        Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("rw-------"));
        Path config = config("", ", \"hosts\": [{\"nqn\": \"" + HOST + "\", \"dhchap_key_file\": \"" + keyFile + "\"}]");
        Path state = dir.resolve("state/state.json");
        try (TargetProcess t = start(config)) {
            assertTrue(rpc("set_qos", "{\"host\": \"" + HOST + "\", \"rw_ios_per_sec\": 100000}").has("result"));
            assertFalse(Files.readString(state).contains("DHHC-1"), Files.readString(state));
            assertTrue(connects(t, k1));
            Files.writeString(keyFile, k2.format());
            new ProcessBuilder("kill", "-HUP", Long.toString(t.process.pid())).start().waitFor();
            t.await("the reload", () -> t.out().contains("nvmeof target reloaded"));
            assertTrue(connects(t, k2), "the rotated key authenticates");
            assertFalse(connects(t, k1), "the old key no longer does");
            assertEquals(100000, rpc("get_config", "{}").at("/result/hosts/0/qos/rw_ios_per_sec").asInt());
            assertEquals(0, t.stop());
        }
        // a state file from before: the host's key inline beside its QoS; and a host the configuration
        // file gives no key, whose key (from a set_host_keys file since lost) only the state held
        String other = "nqn.2026-11.io.nvmeof:other-host";
        DhchapKey k3 = DhchapKey.create(DhchapKey.randomSecret(32, rnd), null, other);
        Files.writeString(state, """
                {"version": 1, "hosts": {"%s": {"nqn": "%s", "dhchap_key": "%s", "qos": {"rw_ios_per_sec": 500}},
                                         "%s": {"nqn": "%s", "dhchap_key": "%s"}}}
                """.formatted(HOST, HOST, k1.format(), other, other, k3.format()));
        try (TargetProcess t = start(config)) {
            assertTrue(t.out().contains("host(s) [" + HOST + ", " + other + "]"), t.out());
            String kept = Files.readString(state);
            assertFalse(kept.contains("DHHC-1"), kept);
            assertTrue(connects(t, k2), "the key file's key");
            assertFalse(connects(t, k1));
            // the other host's authentication stays on: its key moved to a private file of the state directory
            assertTrue(connects(t, other, k3), "its key, kept in a key file");
            assertFalse(connects(t, other, null), "without a key it is refused");
            assertEquals(500, rpc("get_config", "{}").at("/result/hosts/0/qos/rw_ios_per_sec").asInt());
            assertEquals(0, t.stop());
        }
    }

    private static boolean connects(TargetProcess t, DhchapKey key) {
        return connects(t, HOST, key);
    }

    private static boolean connects(TargetProcess t, String host, DhchapKey key) {
        ConnectOptions o = ConnectOptions.defaults().ioQueues(1).identity(HostIdentity.of(host, null))
                .connectTimeout(Duration.ofSeconds(10)).controllerLossTimeout(Duration.ZERO);
        if (key != null) {
            o.dhchapSecret(key);
        }
        try (Controller c = Controller.connect(NvmeofUri.parse(t.uri(A)), o)) {
            return c.activeNamespaces().size() == 1;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Item 5: the state directory's files are never servable, even where allowed_paths names the
     * state directory itself (the old shipped default); a directory of its own under it is.
     */
    @Test
    void theStateDirectoryIsNeverServable() throws Exception {
        Path stateDir = Files.createDirectories(dir.resolve("state"));
        Path config = config("", "");
        String text = Files.readString(config).replace("\"allowed_paths\": [\"" + volumes() + "\"]",
                "\"allowed_paths\": [\"" + volumes() + "\", \"" + stateDir + "\"]");
        try (TargetProcess t = start(Files.writeString(config, text))) {
            assertTrue(rpc("create_subsystem", "{\"nqn\": \"" + A + "-2\"}").has("result")); // state.json is there now
            for (String f : List.of("state.json", "reservations.json", "granted-devices", "new.img")) {
                refused(rpc("add_namespace", addFile(stateDir.resolve(f).toString(), "1M")), "params.path");
            }
            Files.createDirectories(stateDir.resolve("saved"));
            refused(rpc("add_namespace", addFile(stateDir.resolve("saved/x.img").toString(), "1M")), "params.path");
            Files.createDirectories(stateDir.resolve("volumes"));
            assertTrue(rpc("add_namespace", addFile(stateDir.resolve("volumes/v.img").toString(), "1M")).has("result"));
            assertEquals(0, t.stop());
        }
        // a save directory under an allowed path is refused at the start
        Files.writeString(config, text.replace("\"allowed_paths\"", "\"save_config_dir\": \"" + volumes().resolve("saves")
                + "\", \"allowed_paths\""));
        TargetProcess.Run r = TargetProcess.cli(60, "target", "--config", config.toString(), "--rpc-socket",
                socket().toString(), "--state-dir", stateDir.toString());
        assertEquals(1, r.exit());
        assertTrue(r.err().contains("management.save_config_dir"), r.err());
    }

    /**
     * Items 6 and 7: a RAM size past the budget, a huge file and a FIFO named as key files are
     * refused naming the field, before anything is allocated or read; the target serves on.
     */
    @Test
    void sizesAndKeyFilesThatWouldHaltOrWedgeTheTargetAreRefused() throws Exception {
        try (TargetProcess t = start(config("", ""))) {
            refused(rpc("add_namespace", "{\"nqn\": \"" + A + "\", \"backend\": \"ram\", \"size\": \"1T\"}"), "params.size");
            refused(rpc("resize_namespace", "{\"nqn\": \"" + A + "\", \"nsid\": 1, \"size\": \"8G\"}"), "params.size");
            Path big = dir.resolve("big.key");
            try (RandomAccessFile f = new RandomAccessFile(big.toFile(), "rw")) {
                f.setLength(1L << 30);
            }
            Files.setPosixFilePermissions(big, PosixFilePermissions.fromString("rw-------"));
            refused(rpc("set_host_keys", "{\"host\": \"" + HOST + "\", \"dhchap_key_file\": \"" + big + "\"}"),
                    "params.dhchap_key_file");
            Path fifo = dir.resolve("fifo.key");
            assertEquals(0, new ProcessBuilder("mkfifo", "-m", "600", fifo.toString()).start().waitFor());
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try {
                Future<JsonNode> call = pool.submit(() -> rpc("set_host_keys", "{\"host\": \"" + HOST
                        + "\", \"dhchap_key_file\": \"" + fifo + "\"}"));
                refused(call.get(30, TimeUnit.SECONDS), "params.dhchap_key_file");
            } finally {
                pool.shutdownNow();
            }
            // still whole: another call, a reload and a host
            assertTrue(rpc("get_stats", "{}").has("result"));
            new ProcessBuilder("kill", "-HUP", Long.toString(t.process.pid())).start().waitFor();
            t.await("the reload", () -> t.out().contains("nvmeof target reloaded"));
            try (Controller c = Controller.connect(NvmeofUri.parse(t.uri(A)), ConnectOptions.defaults().ioQueues(1))) {
                assertEquals(1 << 20, c.namespace(1).size());
            }
            assertTrue(t.process.isAlive());
            assertEquals(0, t.stop());
        }
    }

    private static boolean canSwitchUser() {
        try {
            return new ProcessBuilder("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "true").start()
                    .waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    /** A python3 process as user nobody that runs {@code script} (socket path in argv[1]). */
    private Process asNobody(String script) throws IOException {
        return asUser(65534, script);
    }

    /** A python3 process as user {@code uid} that runs {@code script} (socket path in argv[1]). */
    private Process asUser(int uid, String script) throws IOException {
        Path py = Files.writeString(dir.resolve("client" + System.nanoTime() + ".py"), script);
        Files.setPosixFilePermissions(py, PosixFilePermissions.fromString("rw-r--r--"));
        return new ProcessBuilder("setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups", "/usr/bin/python3", py.toString(),
                socket().toString()).redirectErrorStream(true).start();
    }

    /** {@code count} connections from {@code uid} that sit idle, sending a byte a second for 40 s. */
    private Process idleCallers(int uid, int count) throws IOException {
        Process p = asUser(uid, """
                import socket, sys, time
                s = []
                for i in range(%d):
                    c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); s.append(c)
                print("connected", flush=True)
                end = time.time() + 40
                while time.time() < end:
                    for c in s:
                        try: c.send(b" ")
                        except OSError: pass
                    time.sleep(1)
                """.formatted(count));
        assertEquals("connected", new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream())).readLine());
        return p;
    }

    /** A caller that asks until it is served; a refusal may close the socket before its request is sent. */
    private static final String GET_STATS_UNTIL_SERVED = """
            import socket, sys, time, json
            for attempt in range(%d):
                try:
                    c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1])
                    c.sendall(b'{"jsonrpc": "2.0", "id": 1, "method": "get_stats"}\\n')
                    line = c.makefile().readline()
                    r = json.loads(line) if line else {"error": {"message": "closed"}}
                except OSError as e:
                    r = {"error": {"message": str(e)}}
                if "result" in r:
                    print("served"); break
                print(r["error"]["message"], flush=True)
                time.sleep(0.5)
            """;

    private String getStatsAsNobody(int attempts) throws Exception {
        Process p = asNobody(GET_STATS_UNTIL_SERVED.formatted(attempts));
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }

    /** Lets user nobody reach the socket (its directories and the socket itself). */
    private void openSocketToOthers() throws IOException {
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(socket().getParent(), PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(socket(), PosixFilePermissions.fromString("rw-rw-rw-"));
    }

    /**
     * Items 8 and 9: idle callers, admitted or refused, cannot lock root out; a request must
     * come whole within 10 s; a caller whose rights a reload took away is refused on its open
     * connection.
     */
    @Test
    void idleCallersCannotLockOutRootAndRightsAreAskedAtEachRequest() throws Exception {
        assumeTrue(canSwitchUser(), "needs root and setpriv to call as another user");
        Path config = config(", \"allowed_users\": [\"nobody\"]", "");
        try (TargetProcess t = start(config)) {
            openSocketToOthers();
            // 20 callers the target refuses (user daemon) sit idle: an admitted caller is served at once
            Process refusedOnes = idleCallers(1, 20);
            try {
                String out = getStatsAsNobody(5); // a few tries within 2.5 s: the refused ones hold theirs for 10 s
                assertTrue(out.contains("served"), out);
            } finally {
                refusedOnes.destroy();
            }
            // 24 admitted callers sit idle, one byte a second: root is served beyond them
            Process idle = idleCallers(65534, 24);
            try {
                assertTrue(rpc("get_stats", "{}").has("result"), "root is served past 16 busy callers");
                // within the request deadline (10 s) the idle ones are gone, and their slots free for others
                long start = System.nanoTime();
                String out = getStatsAsNobody(60);
                assertTrue(out.contains("served"), out);
                assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(35), "served once the deadline passed");
            } finally {
                idle.destroy();
            }
            // item 9: rights asked at each request, on an open connection too
            Process kept = asNobody("""
                    import socket, sys, time, json, os
                    c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); f = c.makefile()
                    c.sendall(b'{"jsonrpc": "2.0", "id": 1, "method": "get_stats"}\\n')
                    print("first", "result" in json.loads(f.readline()), flush=True)
                    sys.stdin.readline()
                    c.sendall(b'{"jsonrpc": "2.0", "id": 2, "method": "create_subsystem", "params": {"nqn": "nqn.2026-11.io.nvmeof:late"}}\\n')
                    print("second", json.loads(f.readline()).get("error", {}).get("message", "served"), flush=True)
                    """);
            java.io.BufferedReader lines = new java.io.BufferedReader(new java.io.InputStreamReader(kept.getInputStream()));
            assertEquals("first True", lines.readLine());
            Files.writeString(config, Files.readString(config).replace("[\"nobody\"]", "[\"daemon\"]"));
            new ProcessBuilder("kill", "-HUP", Long.toString(t.process.pid())).start().waitFor();
            t.await("the reload", () -> t.out().contains("nvmeof target reloaded"));
            kept.getOutputStream().write('\n');
            kept.getOutputStream().flush();
            String second = lines.readLine();
            assertTrue(second.startsWith("second not authorized"), second);
            assertTrue(kept.waitFor(30, TimeUnit.SECONDS));
            assertFalse(rpc("get_subsystems", "{}").toString().contains("late"));
            assertEquals(0, t.stop());
        }
    }

    /**
     * Item 11: grant-devices, run as root, replaces a link the service's user planted at its
     * state path instead of writing through it, and ignores a state file it does not own.
     */
    @Test
    void grantDevicesNeverWritesThroughALink() throws Exception {
        Path victim = Files.writeString(dir.resolve("root-owned"), "precious\n");
        Path state = dir.resolve("granted-devices");
        Files.createSymbolicLink(state, victim);
        Path config = config("", "");
        TargetProcess.Run r = TargetProcess.cli(60, "grant-devices", "--user", "nobody", "--state", state.toString(),
                "--config", config.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals("precious\n", Files.readString(victim));
        assertFalse(Files.isSymbolicLink(state));
        assertEquals("", Files.readString(state));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(state)));
    }

    /** Item 20: basic authentication over plain HTTP on an address that is not loopback draws a warning. */
    @Test
    void aMetricsPasswordOverPlainHttpOffLoopbackIsWarnedOf() throws Exception {
        Path pw = Files.writeString(dir.resolve("metrics.pw"), "s3cret");
        Files.setPosixFilePermissions(pw, PosixFilePermissions.fromString("rw-------"));
        Path config = config("", ", \"metrics\": {\"listen\": \"tcp://0.0.0.0:0\", \"user\": \"prom\", \"password_file\": \""
                + pw + "\"}");
        try (TargetProcess t = start(config)) {
            assertTrue(t.out().contains("WARNING metrics: basic authentication over plain HTTP on 0.0.0.0"), t.out());
        }
    }
}
