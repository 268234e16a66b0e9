package io.nvmeof.cli;

import io.nvmeof.fabric.Sizes;
import io.nvmeof.fabric.BusyPoll;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.target.Fatal;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Port;
import io.nvmeof.target.ProductVersion;
import io.nvmeof.target.Subsystem;
import io.nvmeof.daemon.Systemd;
import io.nvmeof.target.Target;
import io.nvmeof.target.TargetTransports;
import io.nvmeof.target.backend.BackendSpec;
import io.nvmeof.daemon.config.ConfigApplier;
import io.nvmeof.daemon.config.ConfigLoader;
import io.nvmeof.daemon.config.TargetConfig;
import io.nvmeof.daemon.config.TargetConfig.NamespaceConfig;
import io.nvmeof.daemon.config.TargetConfig.PortConfig;
import io.nvmeof.daemon.config.TargetConfig.SubsystemConfig;
import io.nvmeof.daemon.metrics.MetricsServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code nvmeof target}: serve subsystems until SIGINT/SIGTERM; SIGHUP reloads {@code --config}. */
@Command(name = "target", mixinStandardHelpOptions = true,
        description = {"Serve NVMe-oF subsystems over NVMe/TCP and NVMe/RDMA until interrupted (SIGINT or SIGTERM).",
            "Either a JSON config (--config, our format or nvmetcli's; SIGHUP reloads it) or flags for one subsystem."})
final class TargetCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = {"-c", "--config"}, paramLabel = "FILE", description = "JSON configuration (ports, subsystems, namespaces, allowed hosts).")
    Path config;

    @Option(names = "--listen", paramLabel = "tcp|rdma://ADDR:PORT",
            description = "Address to serve the subsystem on, e.g. tcp://127.0.0.1:4420 or rdma://192.168.1.5:4420"
                    + " (port 0 picks a free one). Repeatable; TCP and RDMA ports side by side.")
    List<String> listen = new ArrayList<>();

    @Option(names = "--discovery", paramLabel = "tcp|rdma://ADDR:PORT",
            description = "A discovery-only port, e.g. tcp://0.0.0.0:8009. Repeatable. Every port serves discovery too.")
    List<String> discovery = new ArrayList<>();

    @Option(names = "--rdma-provider", paramLabel = "verbs|disni|soft",
            description = "Verbs provider of the rdma:// ports: verbs (rdma-core, the default), disni (IBM DiSNI) or"
                    + " soft (RDMA semantics in software over TCP, to our own initiator only).")
    String rdmaProvider;

    @Option(names = "--subsystem", paramLabel = "NQN", description = "Subsystem NQN.")
    String nqn;

    @Option(names = "--namespace", paramLabel = "SPEC",
            description = "ram:SIZE, null:SIZE, file:PATH[,size=SIZE][,bs=512|4096][,ro][,direct] or block:DEVICE[,ro];"
                    + " NSIDs count from 1. Repeatable.")
    List<String> namespaces = new ArrayList<>();

    @Option(names = "--allow-host", paramLabel = "NQN", description = "Allow only these host NQNs (default: any). Repeatable.")
    List<String> allowHosts = new ArrayList<>();

    @Option(names = "--serial", description = "Serial number (default: derived from the NQN).")
    String serial;

    @Option(names = "--model", description = "Model number (default: ${DEFAULT-VALUE}).")
    String model = "nvmeof-java";

    @Option(names = "--max-buffer-memory", paramLabel = "SIZE",
            description = "Memory for command data buffers over all hosts, e.g. 512M or 4G (default: half of the"
                    + " JVM's direct memory). Commands wait for a buffer when it is in use; none fails. Overrides"
                    + " limits.max_buffer_memory of --config.")
    String maxBufferMemory;

    @Option(names = "--metrics", paramLabel = "tcp://ADDR:PORT",
            description = "Serve Prometheus metrics (text format, GET /metrics) there, e.g. tcp://127.0.0.1:9748 (port 0"
                    + " picks a free one): per namespace commands, bytes, errors and latency histograms, per controller"
                    + " connections and commands in flight, buffer use, JVM and process. Overrides \"metrics\" of --config.")
    String metrics;

    @Option(names = "--threads", paramLabel = "N", description = "Event loop threads (default: one per core).")
    int threads;

    @Option(names = "--busy-poll", arity = "0..1", paramLabel = "MICROS", fallbackValue = "always",
            description = "Event loops poll instead of sleeping. Alone: never sleep, as SPDK's reactors: the lowest"
                    + " latency, a whole core per event loop; give the target its own cores (--threads, taskset or"
                    + " CPUAffinity=). With MICROS: keep polling that long after each event, then sleep (as Linux's"
                    + " net.core.busy_poll): most of the gain while I/O flows, no cost when idle.")
    String busyPoll;

    static URI parseListen(String s, String flag) {
        try {
            URI u = new URI(s);
            if (("tcp".equals(u.getScheme()) || "rdma".equals(u.getScheme())) && u.getHost() != null && u.getPort() >= 0) {
                return u;
            }
        } catch (Exception e) {
            // fall through
        }
        throw new IllegalArgumentException(flag + " '" + s + "' is not tcp://ADDR:PORT or rdma://ADDR:PORT");
    }

    /** The configuration the flags name: the file of --config, or the flags themselves; with the limit flags. */
    TargetConfig configuration() throws IOException {
        return withFlags(config != null ? ConfigLoader.load(config) : fromFlags());
    }

    /** The flags as a configuration: one subsystem on every --listen port, plus discovery-only ports. */
    TargetConfig fromFlags() {
        if (nqn == null || listen.isEmpty() || namespaces.isEmpty()) {
            throw new IllegalArgumentException("give --config FILE, or --listen, --subsystem and --namespace");
        }
        Nqn.require(nqn);
        List<NamespaceConfig> ns = new ArrayList<>();
        for (String s : namespaces) {
            ns.add(NamespaceConfig.of(ns.size() + 1, BackendSpec.parse(s)));
        }
        SubsystemConfig sub = new SubsystemConfig(nqn, serial != null ? serial : String.format("%016x",
                nqn.hashCode() & 0xffffffffL).substring(0, 16), model, ProductVersion.FIRMWARE_REVISION, 0, allowHosts.isEmpty(), allowHosts, ns);
        List<PortConfig> ports = new ArrayList<>();
        for (String l : listen) {
            URI u = parseListen(l, "--listen");
            ports.add(port(ports.size() + 1, u, List.of(nqn)));
        }
        for (String d : discovery) {
            URI u = parseListen(d, "--discovery");
            ports.add(port(ports.size() + 1, u, List.of()));
        }
        return new TargetConfig(ports, List.of(sub));
    }

    /** A port of the URI's transport; {@code --rdma-provider} is the provider option of the ports that take one. */
    private PortConfig port(int id, URI u, List<String> subsystems) {
        Map<String, String> options = new TreeMap<>();
        if (rdmaProvider != null && TargetTransports.type(u.getScheme()).options(Map.of()).containsKey("provider")) {
            options.put("provider", rdmaProvider);
        }
        return new PortConfig(id, u.getScheme(), options, u.getHost(), u.getPort(), subsystems);
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        // an Error (out of memory, say) anywhere halts the process with 70, and systemd restarts it
        Fatal.haltOnFatalErrors();
        if (config != null && (nqn != null || !listen.isEmpty() || !namespaces.isEmpty() || !discovery.isEmpty()
                || rdmaProvider != null)) {
            throw new IllegalArgumentException("--config replaces --listen, --discovery, --subsystem, --namespace and"
                    + " --rdma-provider (ports[].rdma_provider)");
        }
        TargetConfig initial = configuration();
        CountDownLatch stopped = new CountDownLatch(1);
        if (threads < 0) {
            throw new IllegalArgumentException("--threads must be at least 1: " + threads);
        }
        Target.Options options = new Target.Options();
        options.eventLoopThreads = threads;
        options.busyPoll = busyPoll == null ? BusyPoll.OFF : BusyPoll.parse(busyPoll);
        try (Target target = new Target(options); Systemd systemd = Systemd.fromEnvironment()) {
            ConfigApplier applier = new ConfigApplier(target);
            applier.apply(initial);
            for (Port p : target.ports()) {
                out.println("nvmeof target listening on " + p.trtype() + "://" + p.bound().getHostString() + ":"
                        + p.bound().getPort()
                        + " port " + p.id() + (p.subsystems().isEmpty() ? " (discovery)" : " subsystems "
                        + String.join(",", p.subsystems())) + (p.options().isEmpty() ? "" : " " + p.options()));
            }
            for (Subsystem s : target.subsystems()) {
                for (Namespace ns : s.namespaces().values()) {
                    out.println("  " + s.nqn() + " namespace " + Integer.toUnsignedString(ns.nsid()) + ": "
                            + ns.backend().describe() + ", " + ns.backend().size() + " bytes, " + ns.blockSize()
                            + "-byte blocks" + (ns.readOnly() ? ", read-only" : ""));
                }
            }
            out.println("  command data buffers: at most " + target.bufferBudget().limit() / (1 << 20) + " MiB in use");
            metricsAt(target, initial.metrics(), out);
            out.flush();
            if (config != null) {
                Signals.onReload(() -> reload(applier, target, systemd, out));
            }
            // every port listens: a Type=notify unit is started now; its watchdog is fed by the event loops
            systemd.startWatchdog(target::eventLoops);
            systemd.ready(status(target));
            // SIGINT and SIGTERM end the wait; the target then closes in order and the
            // process exits 0, which is what systemd expects of a clean stop.
            Signals.onTermination(stopped::countDown);
            stopped.await();
            systemd.stopping();
            out.println("nvmeof target stopping");
            out.flush();
            metricsAt(target, null, out);
        }
        out.println("nvmeof target stopped");
        out.flush();
        return 0;
    }

    /** {@code c} with the limits and the metrics address given by flags over its own. */
    private TargetConfig withFlags(TargetConfig c) {
        if (maxBufferMemory != null) {
            c = new TargetConfig(c.ports(), c.subsystems(),
                    c.limits().withMaxBufferMemory(Sizes.parse(maxBufferMemory, "--max-buffer-memory")), c.hosts(),
                    c.metrics());
        }
        return metrics == null ? c : c.withMetrics(MetricsServer.parse(metrics, "--metrics"));
    }

    /** The metrics endpoint being served, and the address it was asked for (guarded by this). */
    private MetricsServer metricsServer;
    private MetricsServer.Endpoint metricsAsked;

    /**
     * Serves metrics at {@code address} (null: nowhere), moving the endpoint if it was elsewhere:
     * the new one first, so that a failure leaves the old one serving.
     */
    private synchronized void metricsAt(Target target, MetricsServer.Endpoint address, PrintWriter out) throws IOException {
        if (Objects.equals(address, metricsAsked) && (address == null) == (metricsServer == null)) {
            return;
        }
        MetricsServer next = null;
        if (address != null) {
            try {
                next = MetricsServer.start(target, address);
            } catch (IOException e) {
                throw new IOException("metrics endpoint " + address + ": " + Main.describe(e), e);
            }
        }
        if (metricsServer != null) {
            metricsServer.close();
        }
        metricsServer = next;
        metricsAsked = address;
        if (next != null) {
            out.println("  metrics on " + address.scheme() + "://" + next.address().getAddress().getHostAddress() + ":"
                    + next.address().getPort() + "/metrics" + (address.user() != null ? " (basic authentication)" : ""));
        }
    }

    /** The one-line status systemctl shows. */
    private static String status(Target target) {
        int namespaces = 0;
        for (Subsystem s : target.subsystems()) {
            namespaces += s.namespaces().size();
        }
        return "serving " + target.subsystems().size() + " subsystem(s), " + namespaces + " namespace(s) on "
                + target.ports().size() + " port(s)";
    }

    private void reload(ConfigApplier applier, Target target, Systemd systemd, PrintWriter out) {
        systemd.reloading();
        try {
            TargetConfig next = withFlags(ConfigLoader.load(config));
            ConfigApplier.Changes c = applier.apply(next);
            out.println("nvmeof target reloaded " + config + ": " + c);
            try {
                metricsAt(target, next.metrics(), out);
            } catch (IOException e) {
                out.println("nvmeof target kept its metrics endpoint: " + Main.describe(e));
            }
        } catch (Exception e) {
            out.println("nvmeof target kept its configuration; reloading " + config + " failed: " + Main.describe(e));
        }
        out.flush();
        systemd.ready(status(target));
    }
}
