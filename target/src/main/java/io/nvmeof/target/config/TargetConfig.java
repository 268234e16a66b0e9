package io.nvmeof.target.config;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * The target's configuration, in the nouns of Linux nvmet: ports, subsystems, namespaces,
 * allowed hosts. Values are validated; {@link ConfigLoader} builds it from JSON.
 */
public record TargetConfig(List<PortConfig> ports, List<SubsystemConfig> subsystems) {

    /**
     * A port: where hosts connect, and which subsystems they reach there (none: discovery only).
     * {@code trtype} names a registered transport (tcp, rdma); {@code options} are that
     * transport's port options (rdma: {@code provider}), as configured.
     */
    public record PortConfig(int portid, String trtype, Map<String, String> options, String traddr, int trsvcid,
                             List<String> subsystems) {
        public PortConfig {
            options = Map.copyOf(options);
        }

        public PortConfig(int portid, String trtype, String traddr, int trsvcid, List<String> subsystems) {
            this(portid, trtype, Map.of(), traddr, trsvcid, subsystems);
        }

        PortConfig withId(int id) {
            return new PortConfig(id, trtype, options, traddr, trsvcid, subsystems);
        }
    }

    public record SubsystemConfig(String nqn, String serial, String model, String firmware, int ieeeOui,
                                  boolean allowAnyHost, List<String> allowedHosts, List<NamespaceConfig> namespaces) {
    }

    /**
     * A namespace. {@code backend} is ram, null, file or block; {@code size} is bytes (0: the
     * file's or device's own); {@code blockSize} 512 or 4096 (0: the device's own).
     */
    public record NamespaceConfig(int nsid, String backend, String path, long size, int blockSize, boolean readOnly,
                                  UUID uuid, boolean directIo) {
        /** Whether two configs describe the same storage (a reload keeps such a namespace open). */
        public boolean sameStorage(NamespaceConfig o) {
            return backend.equals(o.backend) && Objects.equals(path, o.path) && size == o.size
                    && blockSize == o.blockSize && readOnly == o.readOnly && Objects.equals(uuid, o.uuid)
                    && directIo == o.directIo;
        }
    }
}
