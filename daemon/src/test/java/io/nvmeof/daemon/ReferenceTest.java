package io.nvmeof.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.daemon.config.ConfigLoader;
import io.nvmeof.daemon.config.ConfigWriter;
import io.nvmeof.daemon.config.Field;
import io.nvmeof.daemon.config.ObjectSchema;
import io.nvmeof.daemon.config.Schemas;
import io.nvmeof.daemon.config.TargetConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The reference pages are the generated ones; the schema's rows are complete and read back what they write. */
class ReferenceTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    /** docs/reference/ holds what {@link Reference} makes (write it with -Dnvmeof.writeDocs=true). */
    @Test
    void theReferencePagesAreTheGeneratedOnes() throws IOException {
        Path dir = ROOT.resolve("docs/reference");
        List<String> stale = new ArrayList<>();
        for (Map.Entry<String, String> page : Reference.pages().entrySet()) {
            Path file = dir.resolve(page.getKey());
            String now = Files.exists(file) ? Files.readString(file) : "";
            if (!now.equals(page.getValue())) {
                if (Boolean.getBoolean("nvmeof.writeDocs")) {
                    Files.createDirectories(dir);
                    Files.writeString(file, page.getValue());
                } else {
                    stale.add(page.getKey());
                }
            }
        }
        assertEquals(List.of(), stale, "docs/reference/ differs from what the tables make; run this test with"
                + " -Dnvmeof.writeDocs=true to write it");
        // the README's map links every page, and the guide page that tells about each links it
        for (String name : List.of("configuration.md", "settings.md", "management.md")) {
            assertTrue(Files.readString(ROOT.resolve("README.md")).contains("(docs/reference/" + name + ")"),
                    "README.md links docs/reference/" + name);
        }
        for (String[] link : new String[][] {{"docs/guide/target.md", "configuration.md"},
            {"docs/guide/target.md", "settings.md"}, {"docs/guide/management.md", "management.md"}}) {
            assertTrue(Files.readString(ROOT.resolve(link[0])).contains("(../reference/" + link[1] + ")"),
                    link[0] + " links docs/reference/" + link[1]);
        }
    }

    /**
     * Every row has a key, help and a default that its codec writes and reads back as itself (but a
     * default that stands for "not given", which is noted and never written).
     */
    @Test
    void everyRowIsWholeAndItsDefaultReadsBack() {
        for (ObjectSchema<?> s : Schemas.ALL) {
            for (Field<?> f : s.fields()) {
                assertTrue(f.key().matches("[a-z][a-z0-9_]*"), s.name() + "." + f.key());
                assertTrue(!f.help().isBlank() && !f.codec().type().isBlank(), s.name() + "." + f.key());
                Object d = f.isRequired() || f.defaultNote() != null ? null : f.dflt().apply(k -> null);
                if (d != null) {
                    assertEquals(d, readBack(f, d), s.name() + "." + f.key());
                }
            }
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object readBack(Field f, Object v) {
        return f.codec().read(f.codec().write(v), "x", io.nvmeof.daemon.config.Codec.Reading.NONE);
    }

    /** A configuration with every field of every schema object set off its default reads back as written. */
    @Test
    void everyFieldSurvivesAWriteAndARead() {
        String json = """
                {"ports": [{"portid": 1, "trtype": "rdma", "traddr": "127.0.0.2", "trsvcid": 4421, "rdma_provider": "soft",
                   "subsystems": ["nqn.2026-11.io.t:a"], "ana_groups": [{"grpid": 2, "ana": {"state": "non-optimized"}}],
                   "referrals": [{"name": "other", "trtype": "tcp", "traddr": "127.0.0.9", "trsvcid": 8010, "portid": 3}],
                   "mdns": true}],
                 "subsystems": [{"nqn": "nqn.2026-11.io.t:a", "serial": "s1", "model": "m1", "firmware": "f1",
                   "ieee_oui": "0x0025b5", "allow_any_host": false, "allowed_hosts": ["nqn.2026-11.io.t:h"],
                   "cntlid_min": 10, "cntlid_max": 20,
                   "namespaces": [{"nsid": 7, "backend": "ram", "size": "8M", "block_size": 512, "read_only": true,
                     "uuid": "6f1c5d0e-7a43-4b8e-9d61-0a1b2c3d4e10", "visible_to": ["nqn.2026-11.io.t:h"],
                     "ana_grpid": 3, "allow_shrink": true, "enable": false,
                     "qos": {"rw_ios_per_sec": 1000, "rw_mbytes_per_sec": 10, "r_mbytes_per_sec": 5, "w_mbytes_per_sec": 6}},
                    {"nsid": 8, "backend": "file", "path": "/srv/x.img", "direct_io": true},
                    {"nsid": 9, "backend": "rbd", "cluster": "main", "pool": "p1", "image": "i1"}]}],
                 "rbd_clusters": [{"name": "main", "conf": "/etc/ceph/x.conf", "id": "gw", "creatable_pools": ["p1"]}],
                 "management": {"socket": "/run/x.sock", "allowed_users": ["alice"], "allowed_groups": ["ops"],
                   "allowed_paths": ["/srv"], "save_config_dir": "/var/lib/x/saved"}}
                """;
        TargetConfig c = ConfigLoader.parse(json);
        TargetConfig again = ConfigLoader.parse(ConfigWriter.write(c, ConfigWriter.Secrets.WRITTEN));
        assertEquals(c.ports(), again.ports());
        assertEquals(c.subsystems(), again.subsystems());
        assertEquals(c.management(), again.management());
        assertEquals(c.rbdClusters(), again.rbdClusters());
        // and every field of those objects was off its default, so each row was exercised
        Map<String, Object> atDefault = new TreeMap<>();
        check(Schemas.PORT, c.ports().get(0), atDefault);
        check(Schemas.SUBSYSTEM, c.subsystems().get(0), atDefault, "gateways");
        check(Schemas.NAMESPACE, c.subsystems().get(0).namespaces().get(0), atDefault, "path", "direct_io", "cluster",
                "pool", "image");
        check(Schemas.NAMESPACE, c.subsystems().get(0).namespaces().get(2), atDefault, Schemas.NAMESPACE.fields().stream()
                .map(Field::key).filter(k -> !List.of("cluster", "pool", "image").contains(k)).toArray(String[]::new));
        check(Schemas.RBD_CLUSTER, c.rbdClusters().get(0), atDefault);
        check(Schemas.MANAGEMENT, c.management(), atDefault);
        assertEquals(Map.of(), atDefault, "fields this test leaves at their defaults");
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static <R extends Record> void check(ObjectSchema<R> s, R r, Map<String, Object> atDefault, String... skip) {
        for (Field<?> f : s.fields()) {
            if (f.isRequired() || f.defaultNote() != null || List.of(skip).contains(f.key())) {
                continue;
            }
            Object v = s.get(r, f);
            if (java.util.Objects.equals(v, f.dflt().apply(k -> null))) {
                atDefault.put(s.name() + "." + f.key(), v);
            }
        }
    }
}
