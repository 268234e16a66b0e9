package io.nvmeof.daemon.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.Qos;
import io.nvmeof.target.Target;
import org.junit.jupiter.api.Test;

/** QoS limits in the configuration: parsed with their minimums, written back, applied and changed by reload. */
class QosConfigTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:qos";
    static final String HOST = "nqn.2026-11.io.nvmeof:tenant";

    static String config(String nsQos, String hostQos) {
        return """
                {"ports": [{"portid": 1, "traddr": "127.0.0.1", "trsvcid": 0, "subsystems": ["%s"]}],
                 "subsystems": [{"nqn": "%s", "namespaces": [{"nsid": 1, "backend": "ram", "size": "1M"%s}]}],
                 "hosts": [{"nqn": "%s"%s}]}
                """.formatted(NQN, NQN, nsQos, HOST, hostQos);
    }

    @Test
    void parsedWrittenAppliedAndChanged() throws Exception {
        TargetConfig c = ConfigLoader.parse(config(", \"qos\": {\"rw_ios_per_sec\": 5000, \"w_mbytes_per_sec\": 20}",
                ", \"qos\": {\"rw_mbytes_per_sec\": 100}"));
        assertEquals(new Qos.Limits(5000, 0, 0, 20L << 20), c.subsystems().get(0).namespaces().get(0).qos());
        assertEquals(new Qos.Limits(0, 100L << 20, 0, 0), c.hostQos().get(HOST));
        TargetConfig again = ConfigLoader.parse(ConfigWriter.write(c, ConfigWriter.Secrets.WRITTEN));
        assertEquals(c.hostQos(), again.hostQos(), "written back as read");
        assertEquals(c.subsystems().get(0).namespaces().get(0).qos(), again.subsystems().get(0).namespaces().get(0).qos());
        try (Target target = new Target()) {
            ConfigApplier applier = new ConfigApplier(target);
            applier.apply(c);
            assertEquals(5000, target.subsystem(NQN).namespace(1).qos().limits().rwIosPerSecond());
            assertEquals(100L << 20, target.hostQos(HOST).limits().rwBytesPerSecond());
            ConfigApplier.Changes ch = applier.apply(ConfigLoader.parse(config(", \"qos\": {\"rw_ios_per_sec\": 1000}", "")));
            assertTrue(ch.toString().contains("QoS now") && ch.toString().contains("QoS removed"), ch.toString());
            assertEquals(new Qos.Limits(1000, 0, 0, 0), target.subsystem(NQN).namespace(1).qos().limits());
            assertTrue(target.hostQos(HOST) == null || target.hostQos(HOST).limits().none());
        }
    }

    @Test
    void limitsBelowTheMinimumsAreRefusedNamingTheField() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigLoader.parse(config(", \"qos\": {\"rw_ios_per_sec\": 50}", "")));
        assertTrue(e.getMessage().contains("namespaces[0].qos.rw_ios_per_sec") && e.getMessage().contains("at least 100"),
                e.getMessage());
        e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(config("", ", \"qos\": {\"iops\": 5}")));
        assertTrue(e.getMessage().contains("hosts[0].qos"), e.getMessage());
    }
}
