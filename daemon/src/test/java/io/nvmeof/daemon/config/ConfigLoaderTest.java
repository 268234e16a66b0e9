package io.nvmeof.daemon.config;

import io.nvmeof.fabric.BusyPoll;
import io.nvmeof.target.Settings;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.Target;
import io.nvmeof.daemon.config.TargetConfig.NamespaceConfig;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

class ConfigLoaderTest {
    static final String GOOD = """
            {
              "ports": [
                {"portid": 1, "trtype": "tcp", "traddr": "127.0.0.1", "trsvcid": 4420, "subsystems": ["nqn.2026-11.io.nvmeof:a"]},
                {"portid": 2, "trtype": "tcp", "traddr": "127.0.0.1", "trsvcid": 8009, "subsystems": []}
              ],
              "subsystems": [
                {"nqn": "nqn.2026-11.io.nvmeof:a", "serial": "SN1", "model": "M", "firmware": "1.0", "ieee_oui": "0x0025b5",
                 "allowed_hosts": ["nqn.2026-11.io.nvmeof:h1"],
                 "namespaces": [
                   {"nsid": 1, "backend": "ram", "size": "64M"},
                   {"nsid": 7, "backend": "file", "path": "/srv/a.img", "size": 1073741824, "block_size": 512, "read_only": true,
                    "uuid": "0b4d2b34-3c55-4d7e-a1a7-6f9c1b1d0a11"},
                   {"nsid": 9, "backend": "null", "size": "1T"}
                 ]}
              ]
            }
            """;

    /**
     * A subsystem without a serial gets the one derived from its NQN, the same value as before the
     * derivation was shared with the command line's (hosts see it): 16 hex digits of the NQN's
     * 32-bit hash, zero-padded.
     */
    @Test
    void theDefaultSerialIsDerivedFromTheNqnAsBefore() throws Exception {
        assertEquals("000000003519e49a", TargetConfig.SubsystemConfig.defaultSerial("nqn.2014-08.org.nvmexpress:test"));
        assertEquals("00000000d77da6b3", TargetConfig.SubsystemConfig.defaultSerial("nqn.2026-11.io.nvmeof:rbd"));
        TargetConfig c = ConfigLoader.parse("""
                {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["nqn.2014-08.org.nvmexpress:test"]}],
                 "subsystems": [{"nqn": "nqn.2014-08.org.nvmexpress:test", "namespaces": [{"nsid": 1, "backend": "null", "size": "1M"}]}]}
                """);
        assertEquals("000000003519e49a", c.subsystems().get(0).serial());
    }

    @Test
    void readsOurFormat() {
        TargetConfig c = ConfigLoader.parse(GOOD);
        assertEquals(2, c.ports().size());
        assertEquals(8009, c.ports().get(1).trsvcid());
        assertTrue(c.ports().get(1).subsystems().isEmpty());
        TargetConfig.SubsystemConfig s = c.subsystems().get(0);
        assertFalse(s.allowAnyHost(), "a host list means only those hosts");
        assertEquals(0x0025b5, s.ieeeOui());
        NamespaceConfig f = s.namespaces().get(1);
        assertEquals(7, f.nsid());
        assertEquals("file", f.backend());
        assertEquals(512, f.blockSize());
        assertTrue(f.readOnly());
        assertEquals(UUID.fromString("0b4d2b34-3c55-4d7e-a1a7-6f9c1b1d0a11"), f.uuid());
        assertEquals(1L << 40, s.namespaces().get(2).size());
    }

    @Test
    void readsSettingsAndLeavesTheRestAtTheirDefaults() {
        assertEquals(Target.Options.defaults(), ConfigLoader.parse(GOOD).settings());
        TargetConfig c = ConfigLoader.parse(GOOD.replaceFirst("\\{", "{\"settings\": {\"max_buffer_memory\": \"2G\","
                + " \"data_timeout_ms\": 5000, \"max_queue_size\": 256, \"busy_poll\": \"50\"},"
                + " \"limits\": {\"max_controllers_per_host\": 4},"));
        Target.Options o = c.settings();
        assertEquals(2L << 30, o.get(Settings.MAX_BUFFER_MEMORY));
        assertEquals(5000L, o.get(Settings.DATA_TIMEOUT_MS));
        assertEquals(256, o.get(Settings.MAX_QUEUE_SIZE));
        assertEquals(BusyPoll.window(50), o.get(Settings.BUSY_POLL));
        assertEquals(4, o.get(Settings.MAX_CONTROLLERS_PER_HOST), "limits, the object's older name, reads alike");
        assertEquals(List.of(Settings.BUSY_POLL, Settings.MAX_QUEUE_SIZE, Settings.MAX_BUFFER_MEMORY,
                Settings.MAX_CONTROLLERS_PER_HOST, Settings.DATA_TIMEOUT_MS), Target.Options.defaults().differences(o));
    }

    @Test
    void aBadSettingIsNamedWithWhatItTakes() {
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(GOOD.replaceFirst("\\{",
                "{\"settings\": {\"max_queue_size\": 4},")));
        assertEquals("settings.max_queue_size", e.field());
        assertTrue(e.getMessage().contains("must be 16..1024, not 4"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(GOOD.replaceFirst("\\{",
                "{\"settings\": {\"max_h2c_data\": \"lots\"},")));
        assertEquals("settings.max_h2c_data", e.field());
        e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(GOOD.replaceFirst("\\{",
                "{\"settings\": {\"queue_depth\": 4},")));
        assertEquals("settings.queue_depth", e.field());
        assertTrue(e.getMessage().contains("is not a setting"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(GOOD.replaceFirst("\\{",
                "{\"settings\": {\"io_engine\": \"dpdk\"},")));
        assertTrue(e.getMessage().contains("must be epoll, io_uring or nio"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(GOOD.replaceFirst("\\{",
                "{\"settings\": {\"max_connections\": 9}, \"limits\": {\"max_connections\": 10},")));
        assertEquals("limits.max_connections", e.field());
    }

    /** What the writer writes, the loader reads back as the same configuration. */
    @Test
    void aWrittenConfigurationReadsBackTheSame() {
        TargetConfig c = ConfigLoader.parse(GOOD.replaceFirst("\\{", "{\"settings\": {\"max_buffer_memory\": \"2G\","
                + " \"busy_poll\": \"always\", \"rdma_busy_poll\": true},"));
        String text = ConfigWriter.write(c, ConfigWriter.Secrets.WRITTEN);
        TargetConfig back = ConfigLoader.parse(text);
        assertEquals(c.settings(), back.settings());
        assertEquals(c.ports(), back.ports());
        assertEquals(c.subsystems(), back.subsystems());
        assertEquals(text, ConfigWriter.write(back, ConfigWriter.Secrets.WRITTEN));
    }

    @Test
    void readsTheMetricsAddress() {
        assertNull(ConfigLoader.parse(GOOD).metrics());
        TargetConfig c = ConfigLoader.parse(GOOD.replaceFirst("\\{", "{\"metrics\": \"tcp://127.0.0.1:9100\","));
        assertEquals(new java.net.InetSocketAddress("127.0.0.1", 9100), c.metrics().address());
        assertNull(c.metrics().user());
        TargetConfig d = ConfigLoader.parse(GOOD.replaceFirst("\\{", "{\"metrics\": \"127.0.0.1\","));
        assertEquals(9748, d.metrics().address().getPort(), "the default port");
        TargetConfig a = ConfigLoader.parse(GOOD.replaceFirst("\\{", "{\"metrics\": {\"listen\": \"tcp://127.0.0.1:9100\","
                + " \"user\": \"prometheus\", \"password\": \"s3cret\"},"));
        assertEquals("prometheus", a.metrics().user());
        assertEquals("s3cret", a.metrics().password());
        ConfigException half = assertThrows(ConfigException.class, () -> ConfigLoader.parse(GOOD.replaceFirst("\\{",
                "{\"metrics\": {\"listen\": \"tcp://127.0.0.1:9100\", \"user\": \"prometheus\"},")));
        assertEquals("metrics.password", half.field(), half.getMessage());
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigLoader.parse(GOOD.replaceFirst("\\{", "{\"metrics\": \"http://127.0.0.1:1/x\",")));
        assertTrue(e.getMessage().startsWith("metrics"), e.getMessage());
    }

    /** What `nvmetcli save` writes for the kernel target. */
    @Test
    void readsNvmetcliSave() {
        String nvmetcli = """
                {
                  "hosts": [{"nqn": "nqn.2014-08.org.nvmexpress:uuid:5fbb6f5e-0f59-4c59-9f5e-5b6d8e0c1f2a"}],
                  "ports": [
                    {"addr": {"adrfam": "ipv4", "traddr": "0.0.0.0", "treq": "not specified", "trsvcid": "4420", "trtype": "tcp"},
                     "param": {"inline_data_size": "16384"}, "portid": 1, "referrals": [], "ana_groups": [],
                     "subsystems": ["nqn.2014-08.org.example:disk"]}
                  ],
                  "subsystems": [
                    {"allowed_hosts": ["nqn.2014-08.org.nvmexpress:uuid:5fbb6f5e-0f59-4c59-9f5e-5b6d8e0c1f2a"],
                     "attr": {"allow_any_host": "0", "cntlid_max": "999", "cntlid_min": "100", "model": "Linux",
                              "pi_enable": "0", "serial": "a1b2c3d4e5f6", "version": "1.3"},
                     "namespaces": [
                       {"device": {"nguid": "00000000-0000-0000-0000-000000000000", "path": "/dev/loop0",
                                   "uuid": "7c4b2fd1-9b0e-4a2e-8a6b-0c2f4a1e3d55"}, "enable": 1, "nsid": 1, "ana_grpid": 1},
                       {"device": {"path": "/srv/b.img", "uuid": ""}, "enable": 1, "nsid": 2},
                       {"device": {"path": "/srv/off.img"}, "enable": 0, "nsid": 3}
                     ],
                     "nqn": "nqn.2014-08.org.example:disk"}
                  ]
                }
                """;
        TargetConfig c = ConfigLoader.parse(nvmetcli);
        assertEquals("0.0.0.0", c.ports().get(0).traddr());
        assertEquals(4420, c.ports().get(0).trsvcid());
        TargetConfig.SubsystemConfig s = c.subsystems().get(0);
        assertEquals("a1b2c3d4e5f6", s.serial());
        assertEquals("Linux", s.model());
        assertFalse(s.allowAnyHost());
        assertEquals(1, s.allowedHosts().size());
        assertEquals(2, s.namespaces().size(), "the disabled namespace is left out");
        assertEquals("block", s.namespaces().get(0).backend());
        assertEquals(UUID.fromString("7c4b2fd1-9b0e-4a2e-8a6b-0c2f4a1e3d55"), s.namespaces().get(0).uuid());
        assertEquals("file", s.namespaces().get(1).backend());
        assertNull(s.namespaces().get(1).uuid());
        // what the target runs without is named, each in a warning
        List<String> warned = warnings(() -> ConfigLoader.parse(nvmetcli));
        assertEquals(100, s.cntlidMin());
        assertEquals(999, s.cntlidMax());
        for (String field : List.of("ports[0].param", "subsystems[0].attr.pi_enable",
                "subsystems[0].namespaces[0].device.nguid")) {
            assertTrue(warned.stream().anyMatch(w -> w.startsWith(field + " is ignored")), field + " in " + warned);
        }
        assertFalse(warned.stream().map(w -> w.split(" ")[0]).anyMatch(f -> f.contains("referrals") || f.contains("ana_g")),
                "empty groups are nothing to warn of, and ANA groups are taken: " + warned);
        assertEquals(1, s.namespaces().get(0).anaGroup());
    }

    /** The warnings the loader logs while {@code r} runs. */
    static List<String> warnings(Runnable r) {
        List<String> out = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.logging.Logger log = java.util.logging.Logger.getLogger(ConfigLoader.class.getName());
        java.util.logging.SimpleFormatter f = new java.util.logging.SimpleFormatter();
        java.util.logging.Handler h = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord rec) {
                out.add(f.formatMessage(rec));
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        log.addHandler(h);
        try {
            r.run();
        } finally {
            log.removeHandler(h);
        }
        return out;
    }

    /** An nvmetcli file, a namespace disabled before the one at fault: each error names the field as that file has it. */
    static final String NVMETCLI_GOOD = """
                {"ports": [{"portid": 1, "addr": {"trtype": "tcp", "traddr": "0.0.0.0", "trsvcid": "4420", "adrfam": "ipv4",
                            "tsas": "none", "treq": "not specified"}, "subsystems": ["nqn.2014-08.org.example:disk"]}],
                 "hosts": [{"nqn": "nqn.2014-08.org.example:nokey"},
                           {"nqn": "nqn.2014-08.org.example:h", "dhchap": {"key": "KEY", "hash": "hmac(sha256)",
                            "dhgroup": "ffdhe2048"}}],
                 "subsystems": [{"nqn": "nqn.2014-08.org.example:disk", "attr": {"allow_any_host": "1", "serial": "s",
                                 "cntlid_min": "1", "cntlid_max": "9", "ieee_oui": "0x0025b5"},
                   "namespaces": [{"nsid": 1, "enable": 0, "device": {"path": "/srv/off.img"}},
                                  {"nsid": 2, "enable": 1, "device": {"path": "/srv/b.img", "uuid": "7c4b2fd1-9b0e-4a2e-8a6b-0c2f4a1e3d55"},
                                   "ana_grpid": 1}]}]}
                """.replace("KEY", io.nvmeof.protocol.auth.DhchapKey.create(io.nvmeof.protocol.auth.DhchapKey.randomSecret(32,
                new java.security.SecureRandom()), io.nvmeof.protocol.auth.DhchapHash.SHA256, "nqn.2014-08.org.example:h").format());

    static Stream<Arguments> badNvmetcliFiles() {
        String good = NVMETCLI_GOOD;
        return Stream.of(
                Arguments.of("bad uuid", good.replace("7c4b2fd1", "zz"), "subsystems[0].namespaces[1].device.uuid"),
                Arguments.of("bad nsid", good.replace("\"nsid\": 2", "\"nsid\": 0"), "subsystems[0].namespaces[1].nsid"),
                Arguments.of("bad ana group", good.replace("\"ana_grpid\": 1", "\"ana_grpid\": 999"),
                        "subsystems[0].namespaces[1].ana_grpid"),
                Arguments.of("no device path", good.replace("\"path\": \"/srv/b.img\", ", ""),
                        "subsystems[0].namespaces[1].device.path"),
                Arguments.of("bad serial", good.replace("\"serial\": \"s\"", "\"serial\": 5"), "subsystems[0].attr.serial"),
                Arguments.of("cntlid_max below min", good.replace("\"cntlid_max\": \"9\"", "\"cntlid_max\": \"0\""),
                        "subsystems[0].attr.cntlid_max"),
                Arguments.of("bad trsvcid", good.replace("\"4420\"", "\"http\""), "ports[0].addr.trsvcid"),
                Arguments.of("bad traddr", good.replace("0.0.0.0", "example.com"), "ports[0].addr.traddr"),
                Arguments.of("bad tsas", good.replace("\"tsas\": \"none\"", "\"tsas\": \"ssl3\""), "ports[0].addr.tsas"),
                Arguments.of("bad key", good.replace("DHHC-1:01:", "DHHC-1:07:"), "hosts[1].dhchap.key"),
                Arguments.of("bad hash", good.replace("hmac(sha256)", "md5"), "hosts[1].dhchap.hash"),
                Arguments.of("bad group", good.replace("ffdhe2048", "ffdhe1"), "hosts[1].dhchap.dhgroup"),
                Arguments.of("no traddr", good.replace("\"traddr\": \"0.0.0.0\", ", ""), "ports[0].addr.traddr"),
                Arguments.of("a host without keys and without a name", good.replace(
                        "{\"nqn\": \"nqn.2014-08.org.example:nokey\"}", "{\"nqn\": \"\"}"), "hosts[0].nqn"),
                Arguments.of("a port names an unknown subsystem", good.replace("\"subsystems\": [\"nqn.2014-08.org.example:disk\"]",
                        "\"subsystems\": [\"nqn.2014-08.org.example:zz\"]"), "ports[0].subsystems[0]"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badNvmetcliFiles")
    void aBadNvmetcliFileNamesTheFieldAsItsFileHasIt(String what, String json, String field) {
        assertEquals(2, ConfigLoader.parse(NVMETCLI_GOOD).subsystems().get(0).namespaces().get(0).nsid(),
                "the file each starts from is good");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(json), what);
        assertEquals(field, e.field(), what + ": " + e.getMessage());
    }

    /** An nvmetcli file with an inline key that others can read is refused, naming the key as that file has it. */
    @Test
    void anNvmetcliFileWithAKeyThatOthersCanReadNamesItsField(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path f = dir.resolve("nvmetcli.json");
        java.nio.file.Files.writeString(f, NVMETCLI_GOOD);
        java.nio.file.Files.setPosixFilePermissions(f, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertEquals("hosts[1].dhchap.key", e.field(), e.getMessage());
        java.nio.file.Files.setPosixFilePermissions(f, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        assertEquals(1, ConfigLoader.load(f).hosts().size(), "private, it loads");
    }

    /** In our format too, nvmetcli's empty cntlid_min and cntlid_max stand for the defaults. */
    @Test
    void emptyControllerIdBoundsAreTheDefaults() {
        TargetConfig c = ConfigLoader.parse(GOOD.replace("\"ieee_oui\"", "\"cntlid_min\": \"\", \"cntlid_max\": \"\", \"ieee_oui\""));
        assertEquals(1, c.subsystems().get(0).cntlidMin());
        assertEquals(io.nvmeof.target.Subsystem.MAX_CNTLID, c.subsystems().get(0).cntlidMax());
    }

    /** blktests' nvmetcli template: portid 0, subsystems named outside NQN form (nvme/031). */
    @Test
    void takesBlktestsNamesAndPortZeroWithAWarning() {
        String json = """
                {"hosts": [],
                 "ports": [{"addr": {"adrfam": "ipv4", "traddr": "127.0.0.1", "trsvcid": "4420", "trtype": "tcp"},
                            "portid": 0, "subsystems": ["blktests-subsystem-0"]}],
                 "subsystems": [{"attr": {"allow_any_host": "1"}, "nqn": "blktests-subsystem-0",
                                 "namespaces": [{"device": {"path": "/srv/b.img"}, "enable": 1, "nsid": 1}]}]}
                """;
        List<String> warned = warnings(() -> {
            TargetConfig c = ConfigLoader.parse(json);
            assertEquals(0, c.ports().get(0).portid());
            assertEquals("blktests-subsystem-0", c.subsystems().get(0).nqn());
        });
        assertTrue(warned.stream().anyMatch(w -> w.startsWith("subsystems[0].nqn: NQN must look like")), warned.toString());
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(json.replace("\"portid\": 0",
                "\"portid\": 70000")));
        assertEquals("ports[0].portid", e.field(), "portid is the port's, not its addr's: " + e.getMessage());
    }

    /** A host whose key sits where nvmetcli has none would load keyless and connect unauthenticated: refused. */
    @Test
    void aHostWithAKeyWhereNoneIsTakenIsRefused() {
        String json = """
                {"hosts": [{"nqn": "nqn.2026-11.io.nvmeof:h", "attr": {"dhchap_key": "DHHC-1:00:abcd:"}}],
                 "ports": [{"addr": {"traddr": "127.0.0.1", "trsvcid": "4420", "trtype": "tcp"}, "portid": 1,
                            "subsystems": []}],
                 "subsystems": [{"attr": {"allow_any_host": "1"}, "nqn": "nqn.2026-11.io.nvmeof:s"}]}
                """;
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(json));
        assertEquals("hosts[0].attr.dhchap_key", e.field(), e.getMessage());
        ConfigException e2 = assertThrows(ConfigException.class, () -> ConfigLoader.parse(json.replace(
                "\"attr\": {\"dhchap_key\"", "\"dhchap\": {\"secret\"")));
        assertEquals("hosts[0].dhchap.secret", e2.field(), e2.getMessage());
    }

    static Stream<Arguments> badFiles() {
        return Stream.of(
                Arguments.of("not JSON", "{\"ports\": [", "(document)"),
                Arguments.of("unknown top-level field", GOOD.replace("\"ports\"", "\"portz\""), "portz"),
                Arguments.of("a field named by the empty string (found by fuzzing)", "{\"\": 1}", "\"\""),
                Arguments.of("a field name with a quote", "{\"ports\": [], \"a\\\"b\": 1}", "\"a\\\"b\""),
                Arguments.of("a control character in a name", GOOD.replace("\"nqn\": \"nqn.2026-11.io.nvmeof:a\"",
                        "\"nqn\": \"disk\\u001ba\""), "subsystems[0].nqn"),
                Arguments.of("nsid 0", GOOD.replace("\"nsid\": 1,", "\"nsid\": 0,"), "subsystems[0].namespaces[0].nsid"),
                Arguments.of("duplicate nsid", GOOD.replace("\"nsid\": 9,", "\"nsid\": 7,"), "subsystems[0].namespaces[2].nsid"),
                Arguments.of("unknown backend", GOOD.replace("\"backend\": \"null\"", "\"backend\": \"tape\""),
                        "subsystems[0].namespaces[2].backend"),
                Arguments.of("file without path", GOOD.replace("\"path\": \"/srv/a.img\", ", ""),
                        "subsystems[0].namespaces[1].path"),
                Arguments.of("bad size", GOOD.replace("\"64M\"", "\"lots\""), "subsystems[0].namespaces[0].size"),
                Arguments.of("bad block size", GOOD.replace("\"block_size\": 512", "\"block_size\": 1000"),
                        "subsystems[0].namespaces[1].block_size"),
                Arguments.of("bad uuid", GOOD.replace("0b4d2b34-3c55", "zz"), "subsystems[0].namespaces[1].uuid"),
                Arguments.of("unknown namespace field", GOOD.replace("\"read_only\": true", "\"readonly\": true"),
                        "subsystems[0].namespaces[1].readonly"),
                Arguments.of("port out of range", GOOD.replace("\"trsvcid\": 8009", "\"trsvcid\": 70000"), "ports[1].trsvcid"),
                Arguments.of("bad traddr", GOOD.replace("\"traddr\": \"127.0.0.1\", \"trsvcid\": 8009",
                        "\"traddr\": \"example.com\", \"trsvcid\": 8009"), "ports[1].traddr"),
                Arguments.of("unknown trtype", GOOD.replace("\"trtype\": \"tcp\", \"traddr\": \"127.0.0.1\", \"trsvcid\": 8009",
                        "\"trtype\": \"fc\", \"traddr\": \"127.0.0.1\", \"trsvcid\": 8009"), "ports[1].trtype"),
                Arguments.of("unknown RDMA provider", GOOD.replace("\"trtype\": \"tcp\", \"traddr\": \"127.0.0.1\", \"trsvcid\": 8009",
                        "\"trtype\": \"rdma\", \"rdma_provider\": \"magic\", \"traddr\": \"127.0.0.1\", \"trsvcid\": 8009"),
                        "ports[1].rdma_provider"),
                Arguments.of("RDMA provider on a tcp port", GOOD.replace("\"trtype\": \"tcp\", \"traddr\": \"127.0.0.1\", \"trsvcid\": 8009",
                        "\"trtype\": \"tcp\", \"rdma_provider\": \"soft\", \"traddr\": \"127.0.0.1\", \"trsvcid\": 8009"),
                        "ports[1].rdma_provider"),
                Arguments.of("duplicate portid", GOOD.replace("\"portid\": 2", "\"portid\": 1"), "ports[1].portid"),
                Arguments.of("port names unknown subsystem", GOOD.replace("\"subsystems\": []",
                        "\"subsystems\": [\"nqn.2026-11.io.nvmeof:zz\"]"), "ports[1].subsystems[0]"),
                Arguments.of("allow_any_host with a host list", GOOD.replace("\"allowed_hosts\"",
                        "\"allow_any_host\": true, \"allowed_hosts\""), "subsystems[0].allow_any_host"),
                Arguments.of("ieee_oui too wide", GOOD.replace("0x0025b5", "0x1000000"), "subsystems[0].ieee_oui"),
                Arguments.of("no ports", "{\"ports\": [], \"subsystems\": []}", "ports"),
                Arguments.of("limits not an object", GOOD.replaceFirst("\\{", "{\"limits\": 5,"), "limits"),
                Arguments.of("unknown limit", GOOD.replaceFirst("\\{", "{\"limits\": {\"max_memory\": 5},"),
                        "limits.max_memory"),
                Arguments.of("bad buffer memory", GOOD.replaceFirst("\\{", "{\"limits\": {\"max_buffer_memory\": \"much\"},"),
                        "limits.max_buffer_memory"),
                Arguments.of("negative buffer memory", GOOD.replaceFirst("\\{", "{\"limits\": {\"max_buffer_memory\": -1},"),
                        "limits.max_buffer_memory"),
                Arguments.of("data timeout too short", GOOD.replaceFirst("\\{", "{\"limits\": {\"data_timeout_ms\": 5},"),
                        "limits.data_timeout_ms"),
                Arguments.of("no controllers", GOOD.replaceFirst("\\{", "{\"limits\": {\"max_controllers_per_host\": 0},"),
                        "limits.max_controllers_per_host"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badFiles")
    void badFileNamesTheField(String what, String json, String field) {
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(json), what);
        assertEquals(field, e.field(), what + ": " + e.getMessage());
        assertTrue(e.getMessage().startsWith(field + ": "), e.getMessage());
    }

    static final String ANA = """
            {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["nqn.2026-11.io.nvmeof:a"],
                        "ana_groups": [{"grpid": 1, "ana": {"state": "non-optimized"}}, {"grpid": 5, "ana": {"state": "optimized"}}]}],
             "subsystems": [{"nqn": "nqn.2026-11.io.nvmeof:a", "namespaces": [
                {"nsid": 1, "backend": "ram", "size": "1M"},
                {"nsid": 2, "backend": "ram", "size": "1M", "ana_grpid": 5}]}]}
            """;

    @Test
    void readsAnaGroupsOfPortsAndNamespacesAndWritesThemBack() {
        TargetConfig c = ConfigLoader.parse(ANA);
        assertEquals(java.util.Map.of(1, io.nvmeof.target.AnaState.NON_OPTIMIZED, 5, io.nvmeof.target.AnaState.OPTIMIZED),
                c.ports().get(0).anaGroups());
        assertEquals(1, c.subsystems().get(0).namespaces().get(0).anaGroup());
        assertEquals(5, c.subsystems().get(0).namespaces().get(1).anaGroup());
        TargetConfig back = ConfigLoader.parse(ConfigWriter.write(c, ConfigWriter.Secrets.WRITTEN));
        assertEquals(c.ports(), back.ports());
        assertEquals(c.subsystems(), back.subsystems());
    }

    @Test
    void aBadAnaGroupOrStateIsNamed() {
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(ANA.replace("\"ana_grpid\": 5",
                "\"ana_grpid\": 129")));
        assertEquals("subsystems[0].namespaces[1].ana_grpid", e.field());
        e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(ANA.replace("\"state\": \"optimized\"",
                "\"state\": \"best\"")));
        assertEquals("ports[0].ana_groups[1].ana.state", e.field());
        assertTrue(e.getMessage().contains("non-optimized"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(ANA.replace("\"grpid\": 5", "\"grpid\": 1")));
        assertEquals("ports[0].ana_groups[1].grpid", e.field());
        e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(ANA.replace("\"grpid\": 5", "\"grpid\": 0")));
        assertEquals("ports[0].ana_groups[1].grpid", e.field());
    }

    @Test
    void readsNvmetclisAnaGroupsAndGroupIds() {
        TargetConfig c = ConfigLoader.parse("""
                {"hosts": [], "ports": [{"portid": 2, "addr": {"trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
                   "trsvcid": "4420", "treq": "not specified", "tsas": "none"},
                   "ana_groups": [{"ana": {"state": "optimized"}, "grpid": 1}, {"ana": {"state": "inaccessible"}, "grpid": 2}],
                   "referrals": [], "subsystems": ["nqn.2026-11.io.nvmeof:k"]}],
                 "subsystems": [{"nqn": "nqn.2026-11.io.nvmeof:k", "attr": {"allow_any_host": "1"}, "allowed_hosts": [],
                   "namespaces": [{"nsid": 1, "enable": 1, "ana_grpid": 2, "device": {"path": "/srv/k.img",
                   "uuid": "0b4d2b34-3c55-4d7e-a1a7-6f9c1b1d0a11"}}]}]}
                """);
        assertEquals(io.nvmeof.target.AnaState.INACCESSIBLE, c.ports().get(0).anaGroups().get(2));
        assertEquals(2, c.subsystems().get(0).namespaces().get(0).anaGroup());
    }

    /**
     * An RBD namespace names a declared cluster and its pool and image, and nothing of a file's;
     * other backends take none of the three; a cluster is declared once.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
        "undeclared cluster|\"cluster\": \"other\", \"pool\": \"rbd\", \"image\": \"v\"|subsystems[0].namespaces[0].cluster",
        "no image|\"cluster\": \"main\", \"pool\": \"rbd\"|subsystems[0].namespaces[0].image",
        "a size|\"cluster\": \"main\", \"pool\": \"rbd\", \"image\": \"v\", \"size\": \"1G\"|subsystems[0].namespaces[0].size",
        "a path|\"cluster\": \"main\", \"pool\": \"rbd\", \"image\": \"v\", \"path\": \"/x\"|subsystems[0].namespaces[0].path",
        "a bad image name|\"cluster\": \"main\", \"pool\": \"rbd\", \"image\": \"../v\"|subsystems[0].namespaces[0].image",
    })
    void aBadRbdNamespaceIsNamed(String what, String fields, String field) {
        String json = """
                {"rbd_clusters": [{"name": "main", "conf": "/etc/ceph/ceph.conf"}],
                 "ports": [{"portid": 1, "traddr": "127.0.0.1", "subsystems": ["nqn.2026-11.io.nvmeof:r"]}],
                 "subsystems": [{"nqn": "nqn.2026-11.io.nvmeof:r", "namespaces": [{"nsid": 1, "backend": "rbd", %s}]}]}
                """.formatted(fields);
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(json));
        assertEquals(field, e.field(), what + ": " + e.getMessage());
        ConfigException file = assertThrows(ConfigException.class, () -> ConfigLoader.parse(json.replace(
                "\"backend\": \"rbd\", " + fields, "\"backend\": \"ram\", \"size\": \"1M\", \"pool\": \"rbd\"")));
        assertEquals("subsystems[0].namespaces[0].pool", file.field(), file.getMessage());
        String good = json.replace(fields, "\"cluster\": \"main\", \"pool\": \"rbd\", \"image\": \"v\"");
        assertEquals("v", ConfigLoader.parse(good).subsystems().get(0).namespaces().get(0).image());
        ConfigException twice = assertThrows(ConfigException.class, () -> ConfigLoader.parse(good.replace(
                "[{\"name\": \"main\", \"conf\": \"/etc/ceph/ceph.conf\"}]",
                "[{\"name\": \"main\"}, {\"name\": \"main\", \"id\": \"x\"}]")));
        assertEquals("rbd_clusters[1].name", twice.field(), twice.getMessage());
    }
}
