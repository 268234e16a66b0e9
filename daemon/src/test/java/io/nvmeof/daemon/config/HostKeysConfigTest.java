package io.nvmeof.daemon.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.protocol.auth.DhGroup;
import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.protocol.auth.DhchapKey;
import io.nvmeof.target.HostSecurity;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Host keys in both configuration formats, and the rule that keys stay private. */
class HostKeysConfigTest {
    static final String HOST = "nqn.2026-11.io.nvmeof:h1";
    static final String KEY = DhchapKey.create(DhchapKey.randomSecret(32, new SecureRandom()), DhchapHash.SHA256, HOST).format();
    static final String CKEY = DhchapKey.create(DhchapKey.randomSecret(48, new SecureRandom()), null, HOST).format();
    @TempDir
    Path dir;

    static String ours(String host) {
        return """
                {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 4420, "subsystems": ["nqn.2026-11.io.nvmeof:a"]}],
                 "subsystems": [{"nqn": "nqn.2026-11.io.nvmeof:a", "allowed_hosts": ["%s"]}],
                 "hosts": [%s]}
                """.formatted(HOST, host);
    }

    private Path write(String name, String text, String mode) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, text);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(mode));
        return p;
    }

    @Test
    void inlineKeysHashesAndGroupsInAPrivateFile() throws IOException {
        Path f = write("t.json", ours("""
                {"nqn": "%s", "dhchap_key": "%s", "dhchap_ctrl_key": "%s",
                 "dhchap_hashes": ["hmac(sha384)", "sha256"], "dhchap_dhgroups": ["ffdhe4096", "null"]}
                """.formatted(HOST, KEY, CKEY)), "rw-------");
        HostSecurity h = ConfigLoader.load(f).hosts().get(0);
        assertEquals(HOST, h.nqn());
        assertTrue(h.hostKey().sameAs(DhchapKey.parse(KEY)));
        assertTrue(h.controllerKey().sameAs(DhchapKey.parse(CKEY)));
        assertEquals(List.of(DhchapHash.SHA384, DhchapHash.SHA256), h.hashes());
        assertEquals(List.of(DhGroup.FFDHE4096, DhGroup.NULL), h.dhGroups());
    }

    @Test
    void aConfigOthersCanReadMayNotHoldAKey() throws IOException {
        Path f = write("t.json", ours("{\"nqn\": \"%s\", \"dhchap_key\": \"%s\"}".formatted(HOST, KEY)), "rw-r--r--");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertEquals("hosts[0].dhchap_key", e.field());
        assertTrue(e.getMessage().contains("chmod o-rw"), e.getMessage());
        // a group-readable one is fine (a service user in the file's group)
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r-----"));
        assertEquals(1, ConfigLoader.load(f).hosts().size());
    }

    @Test
    void keyFilesNextToTheConfigMustBePrivateToo() throws IOException {
        write("h1.key", KEY + "\n", "rw-------");
        Path leaky = write("ctrl.key", CKEY, "rw-rw-r--");
        Path f = write("t.json", ours("""
                {"nqn": "%s", "dhchap_key_file": "h1.key", "dhchap_ctrl_key_file": "ctrl.key"}
                """.formatted(HOST)), "rw-r--r--");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertEquals("hosts[0].dhchap_ctrl_key_file", e.field());
        Files.setPosixFilePermissions(leaky, PosixFilePermissions.fromString("rw-------"));
        HostSecurity h = ConfigLoader.load(f).hosts().get(0);
        assertTrue(h.hostKey().sameAs(DhchapKey.parse(KEY)), "a world-readable config may name key files");
        assertEquals(HostSecurity.DEFAULT_DH_GROUPS, h.dhGroups());
    }

    /** What ssh refuses for a private key: a file others (or its group) can change, a stranger's file, an open directory. */
    @Test
    void keyFilesAreCheckedAsSshChecksItsKeys() throws IOException {
        Path keyDir = Files.createDirectory(dir.resolve("keys"));
        Path key = keyDir.resolve("h1.key");
        Files.writeString(key, KEY);
        Path f = write("t.json", ours("{\"nqn\": \"%s\", \"dhchap_key_file\": \"keys/h1.key\"}".formatted(HOST)),
                "rw-r--r--");
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw--w----"));
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f), "group-writable");
        assertTrue(e.getMessage().contains("chmod g-w"), e.getMessage());
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r-----"));
        Files.setPosixFilePermissions(keyDir, PosixFilePermissions.fromString("rwxrwxrwx"));
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f), "in a directory others can write");
        assertTrue(e.getMessage().contains("chmod o-w " + keyDir.toRealPath()), e.getMessage());
        // sticky, as /tmp is: others cannot replace the file
        Files.setAttribute(keyDir, "unix:mode", 01777);
        assertEquals(1, ConfigLoader.load(f).hosts().size());
        Files.setPosixFilePermissions(keyDir, PosixFilePermissions.fromString("rwxr-x---"));
        assertEquals(1, ConfigLoader.load(f).hosts().size(), "owner-writable, group-readable: as the package installs it");
        int me = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        org.junit.jupiter.api.Assumptions.assumeTrue(me == 0, "changing a file's owner needs root");
        Files.setAttribute(key, "unix:uid", 65534);
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f), "a stranger's file");
        assertTrue(e.getMessage().contains("owned by uid 65534"), e.getMessage());
        Files.setAttribute(key, "unix:uid", 0);
        Files.setAttribute(keyDir, "unix:uid", 65534);
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f), "in a stranger's directory");
        assertTrue(e.getMessage().contains("owned by uid 65534"), e.getMessage());
    }

    @Test
    void badHostEntriesNameTheField() {
        record Bad(String host, String field) {
        }
        String broken = KEY.substring(0, 20) + (KEY.charAt(20) == 'A' ? 'B' : 'A') + KEY.substring(21);
        for (Bad b : List.of(
                new Bad("{\"nqn\": \"%s\", \"dhchap_key\": \"%s\"}".formatted(HOST, broken), "hosts[0].dhchap_key"),
                new Bad("{\"nqn\": \"%s\", \"dhchap_ctrl_key\": \"%s\"}".formatted(HOST, CKEY), "hosts[0].dhchap_ctrl_key"),
                new Bad("{\"nqn\": \"%s\", \"dhchap_key\": \"%s\", \"dhchap_hashes\": [\"md5\"]}".formatted(HOST, KEY),
                        "hosts[0].dhchap_hashes[0]"),
                new Bad("{\"nqn\": \"%s\", \"dhchap_key\": \"%s\", \"dhchap_dhgroups\": [\"ffdhe1024\"]}".formatted(HOST, KEY),
                        "hosts[0].dhchap_dhgroups[0]"),
                new Bad("{\"nqn\": \"%s\", \"dhchap_key\": \"%s\", \"dhchap_key_file\": \"x\"}".formatted(HOST, KEY),
                        "hosts[0].dhchap_key"),
                new Bad("{\"nqn\": \"%s\", \"dhchap_key_file\": \"/nonexistent/key\"}".formatted(HOST),
                        "hosts[0].dhchap_key_file"),
                new Bad("{\"nqn\": \"%s\", \"dhchap_secret\": \"%s\"}".formatted(HOST, KEY), "hosts[0].dhchap_secret"),
                new Bad("{\"nqn\": \"%s\"}, {\"nqn\": \"%s\"}".formatted(HOST, HOST), "hosts[1].nqn"))) {
            ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(ours(b.host())), b.host());
            assertEquals(b.field(), e.field(), e.getMessage());
        }
    }

    @Test
    void nvmetcliHostAttributes() {
        String json = """
                {"hosts": [{"nqn": "%s", "dhchap": {"key": "%s", "ctrl_key": "%s", "hash": "hmac(sha512)",
                                                   "dhgroup": "ffdhe3072"}},
                           {"nqn": "nqn.2026-11.io.nvmeof:h2", "dhchap": {"key": "", "ctrl_key": ""}}],
                 "ports": [{"portid": 1, "addr": {"trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1", "trsvcid": "4420"},
                            "subsystems": ["nqn.2026-11.io.nvmeof:a"]}],
                 "subsystems": [{"nqn": "nqn.2026-11.io.nvmeof:a", "attr": {"allow_any_host": "0"},
                                 "allowed_hosts": ["%s"], "namespaces": []}]}
                """.formatted(HOST, KEY, CKEY, HOST);
        TargetConfig c = ConfigLoader.parse(json);
        assertEquals(1, c.hosts().size(), "a host with an empty key needs no authentication");
        HostSecurity h = c.hosts().get(0);
        assertEquals(DhchapHash.SHA512, h.hashes().get(0), "nvmetcli's hash first");
        assertEquals(DhGroup.FFDHE3072, h.dhGroups().get(0));
        assertEquals(HostSecurity.DEFAULT_HASHES.size(), h.hashes().size(), "then any other, as nvmet falls back");
        assertTrue(h.controllerKey().sameAs(DhchapKey.parse(CKEY)));
        assertTrue(ConfigLoader.parse(ours("")).hosts().isEmpty(), "an empty hosts list");
    }

    @Test
    void aReloadSaysWhichOfAHostsRowsChangedAndNeverTheKey() throws Exception {
        write("h1.key", KEY + "\n", "rw-------");
        Path f = write("t.json", ours("{\"nqn\": \"%s\", \"dhchap_key_file\": \"h1.key\"}".formatted(HOST)), "rw-------");
        try (io.nvmeof.target.Target target = new io.nvmeof.target.Target()) {
            ConfigApplier applier = new ConfigApplier(target);
            applier.apply(ConfigLoader.load(f));
            assertTrue(ConfigLoader.load(f).keyFile(HOST, "dhchap_key").endsWith("h1.key"));
            // the same key from another file is no change
            write("h1-copy.key", KEY, "rw-------");
            write("t.json", ours("{\"nqn\": \"%s\", \"dhchap_key_file\": \"h1-copy.key\"}".formatted(HOST)), "rw-------");
            assertEquals(List.of(), applier.apply(ConfigLoader.load(f)).lines());
            // a new key and a controller key, and other hashes: one line each, naming the row
            write("t.json", ours("""
                    {"nqn": "%s", "dhchap_key": "%s", "dhchap_ctrl_key": "%s", "dhchap_hashes": ["sha384"]}
                    """.formatted(HOST, CKEY, KEY)), "rw-------");
            List<String> lines = applier.apply(ConfigLoader.load(f)).lines();
            assertEquals(List.of("host " + HOST + ": dhchap_key changed", "host " + HOST + ": dhchap_ctrl_key changed",
                    "host " + HOST + ": dhchap_hashes changed"), lines);
            assertTrue(target.hostSecurity(HOST).hostKey().sameAs(DhchapKey.parse(CKEY)), "the new key is in force");
            assertTrue(lines.stream().noneMatch(l -> l.contains("DHHC")), "no key in the change log");
            write("t.json", ours(""), "rw-------");
            assertEquals(List.of("host " + HOST + ": removed (no keys)"), applier.apply(ConfigLoader.load(f)).lines());
            assertEquals(null, target.hostSecurity(HOST));
        }
    }
}
