package io.nvmeof.daemon.config;

import io.nvmeof.target.HostSecurity;
import io.nvmeof.target.Target;
import io.nvmeof.daemon.metrics.MetricsServer;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * The target's configuration, in the nouns of Linux nvmet: ports, subsystems, namespaces,
 * allowed hosts, and what each host must prove (DH-HMAC-CHAP keys); and where the
 * Prometheus metrics are served ({@code metrics}, null: nowhere). Values are validated; {@link ConfigLoader} builds it from JSON.
 */
public record TargetConfig(List<PortConfig> ports, List<SubsystemConfig> subsystems, Limits limits,
                           List<HostSecurity> hosts, MetricsServer.Endpoint metrics) {

    public TargetConfig {
        hosts = List.copyOf(hosts);
    }

    /** Without a metrics endpoint. */
    public TargetConfig(List<PortConfig> ports, List<SubsystemConfig> subsystems, Limits limits,
                        List<HostSecurity> hosts) {
        this(ports, subsystems, limits, hosts, null);
    }

    /** The same with the metrics endpoint at {@code address}, plain HTTP (null: none). */
    public TargetConfig withMetrics(InetSocketAddress address) {
        return new TargetConfig(ports, subsystems, limits, hosts, address == null ? null
                : metrics != null ? new MetricsServer.Endpoint(address, metrics.user(), metrics.password(),
                        metrics.keystore(), metrics.keystorePassword()) : MetricsServer.Endpoint.plain(address));
    }

    public TargetConfig(List<PortConfig> ports, List<SubsystemConfig> subsystems, Limits limits) {
        this(ports, subsystems, limits, List.of());
    }

    public TargetConfig(List<PortConfig> ports, List<SubsystemConfig> subsystems) {
        this(ports, subsystems, Limits.DEFAULTS);
    }

    /**
     * What the target lets all hosts together, and each host, take ({@code "limits"} in our
     * JSON); 0 everywhere means the default of {@link Target.Options}.
     */
    public record Limits(long maxBufferMemory, long maxQueueWriteData, long connectTimeoutMillis, long dataTimeoutMillis,
                         int maxControllersPerHost, int maxConnections, int maxPendingPerAddress) {
        public static final Limits DEFAULTS = new Limits(0, 0, 0, 0, 0, 0, 0);

        public Limits(long maxBufferMemory, long maxQueueWriteData, long connectTimeoutMillis, long dataTimeoutMillis,
                      int maxControllersPerHost, int maxConnections) {
            this(maxBufferMemory, maxQueueWriteData, connectTimeoutMillis, dataTimeoutMillis, maxControllersPerHost,
                    maxConnections, 0);
        }

        /** Sets these limits in {@code o}: those given, the defaults for the rest. */
        public Target.Options applyTo(Target.Options o) {
            Target.Options d = new Target.Options();
            o.maxBufferMemory = maxBufferMemory > 0 ? maxBufferMemory : d.maxBufferMemory;
            o.maxQueueWriteData = maxQueueWriteData > 0 ? maxQueueWriteData : d.maxQueueWriteData;
            o.connectDeadlineMillis = connectTimeoutMillis > 0 ? connectTimeoutMillis : d.connectDeadlineMillis;
            o.dataTimeoutMillis = dataTimeoutMillis > 0 ? dataTimeoutMillis : d.dataTimeoutMillis;
            o.maxControllersPerHost = maxControllersPerHost > 0 ? maxControllersPerHost : d.maxControllersPerHost;
            o.maxConnections = maxConnections > 0 ? maxConnections : d.maxConnections;
            o.maxPendingPerAddress = maxPendingPerAddress > 0 ? maxPendingPerAddress : d.maxPendingPerAddress;
            return o;
        }

        public Limits withMaxBufferMemory(long bytes) {
            return new Limits(bytes, maxQueueWriteData, connectTimeoutMillis, dataTimeoutMillis, maxControllersPerHost,
                    maxConnections, maxPendingPerAddress);
        }
    }

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
     * file's or device's own); {@code blockSize} 512 or 4096 (0: the device's own);
     * {@code visibleTo} the hosts that see it (null: every host the subsystem lets in).
     */
    public record NamespaceConfig(int nsid, String backend, String path, long size, int blockSize, boolean readOnly,
                                  UUID uuid, boolean directIo, List<String> visibleTo) {
        public NamespaceConfig {
            visibleTo = visibleTo == null ? null : List.copyOf(visibleTo);
        }

        public NamespaceConfig(int nsid, String backend, String path, long size, int blockSize, boolean readOnly, UUID uuid,
                               boolean directIo) {
            this(nsid, backend, path, size, blockSize, readOnly, uuid, directIo, null);
        }

        /** A namespace {@code nsid} of the storage {@code spec} describes. */
        public static NamespaceConfig of(int nsid, io.nvmeof.target.backend.BackendSpec spec) {
            return new NamespaceConfig(nsid, spec.kind(), spec.path(), spec.size(), spec.blockSize(), spec.readOnly(), null,
                    spec.directIo());
        }

        /** Its storage. */
        public io.nvmeof.target.backend.BackendSpec spec() {
            return new io.nvmeof.target.backend.BackendSpec(backend, path, size, blockSize, readOnly, directIo);
        }

        /** The hosts that see it, as a set, or null for every host the subsystem lets in. */
        public java.util.Set<String> visibility() {
            return visibleTo == null ? null : java.util.Set.copyOf(visibleTo);
        }

        /** Whether two configs describe the same storage (a reload keeps such a namespace open). */
        public boolean sameStorage(NamespaceConfig o) {
            return backend.equals(o.backend) && Objects.equals(path, o.path) && size == o.size
                    && blockSize == o.blockSize && readOnly == o.readOnly && Objects.equals(uuid, o.uuid)
                    && directIo == o.directIo;
        }
    }
}
