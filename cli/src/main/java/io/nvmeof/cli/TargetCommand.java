package io.nvmeof.cli;

import io.nvmeof.daemon.Daemon;
import io.nvmeof.daemon.StateStore;
import io.nvmeof.daemon.config.Codecs;
import io.nvmeof.daemon.config.ConfigLoader;
import io.nvmeof.daemon.config.ConfigWriter;
import io.nvmeof.daemon.config.Field;
import io.nvmeof.daemon.config.Schemas;
import io.nvmeof.daemon.config.TargetConfig.NamespaceConfig;
import io.nvmeof.daemon.config.TargetConfig.PortConfig;
import io.nvmeof.daemon.config.TargetConfig.SubsystemConfig;
import io.nvmeof.daemon.config.TargetConfig;
import io.nvmeof.daemon.metrics.MetricsServer;
import io.nvmeof.daemon.rpc.ManagementApi;
import io.nvmeof.fabric.Sizes;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.target.Fatal;
import io.nvmeof.target.ProductVersion;
import io.nvmeof.target.Setting;
import io.nvmeof.target.Settings;
import io.nvmeof.target.Target;
import io.nvmeof.target.TargetTransport;
import io.nvmeof.target.TargetTransports;
import io.nvmeof.target.backend.BackendSpec;
import io.nvmeof.target.backend.RbdCluster;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** {@code nvmeof target}: serve subsystems until SIGINT/SIGTERM; SIGHUP reloads {@code --config}. */
@Command(name = "target", mixinStandardHelpOptions = true, modelTransformer = TargetCommand.GeneratedOptions.class,
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

    @Option(names = "--mdns", description = "Announce every port's discovery controller over mDNS/DNS-SD"
            + " (_nvme-disc._tcp, TP8009), as a port's mdns field does in --config.")
    boolean mdns;

    @Option(names = "--subsystem", paramLabel = "NQN", description = "Subsystem NQN.")
    String nqn;

    @Option(names = "--namespace", paramLabel = "SPEC",
            description = "ram:SIZE, null:SIZE, file:PATH[,size=SIZE][,bs=512|4096][,ro][,direct] or block:DEVICE[,ro][,direct];"
                    + " NSIDs count from 1. Repeatable.")
    List<String> namespaces = new ArrayList<>();

    @Option(names = "--allow-host", paramLabel = "NQN", description = "Allow only these host NQNs (default: any). Repeatable.")
    List<String> allowHosts = new ArrayList<>();

    @Option(names = "--serial", description = "Serial number (default: derived from the NQN).")
    String serial;

    @Option(names = "--model", description = "Model number (default: ${DEFAULT-VALUE}).")
    String model = "nvmeof-java";

    @Option(names = "--metrics", paramLabel = "tcp://ADDR:PORT",
            description = "Serve Prometheus metrics (text format, GET /metrics) there, e.g. tcp://127.0.0.1:9748 (port 0"
                    + " picks a free one): per namespace commands, bytes, errors and latency histograms, per controller"
                    + " connections and commands in flight, buffer use, JVM and process. Overrides \"metrics\" of --config.")
    String metrics;

    @Option(names = "--rpc-socket", paramLabel = "PATH", description = "Serve the management API (JSON-RPC 2.0) on this"
            + " Unix socket (default: management.socket of --config, else rpc.sock in systemd's RuntimeDirectory, else none).")
    Path rpcSocket;

    @Option(names = "--state-dir", paramLabel = "DIR", description = "Keep the management API's changes in DIR/state.json"
            + " across restarts (default: systemd's StateDirectory, else in memory only).")
    Path stateDir;

    @Option(names = "--show-config", description = "Print the effective configuration (the file or flags, every setting"
            + " with its value; keys not shown) as JSON, and exit.")
    boolean showConfig;

    /** Adds the generated flags wherever picocli builds the command (the CLI, its man page, its completion). */
    static final class GeneratedOptions implements CommandLine.IModelTransformer {
        @Override
        public CommandLine.Model.CommandSpec transform(CommandLine.Model.CommandSpec spec) {
            addGeneratedOptions(spec);
            return spec;
        }
    }

    /**
     * Adds a flag for each row of the settings table ({@link Settings}) and each port option of
     * the transports to {@code spec}, the {@code target} command's.
     */
    static void addGeneratedOptions(CommandLine.Model.CommandSpec spec) {
        for (Setting<?> s : Settings.ALL) {
            CommandLine.Model.OptionSpec.Builder b = CommandLine.Model.OptionSpec.builder(names(s))
                    .type(String.class).paramLabel(label(s))
                    .description(s.help() + " Default: " + s.defaultText() + "." + (s.reloads() ? "" : " Not changed by a reload.")
                            + " Overrides settings." + s.key() + " of --config.");
            if (s == Settings.BUSY_POLL) {
                b.arity("0..1").fallbackValue("always");
            }
            spec.addOption(b.build());
        }
        Field<?> allowed = allowedPaths();
        spec.addOption(CommandLine.Model.OptionSpec.builder(allowed.flagName()).type(List.class)
                .auxiliaryTypes(String.class).arity("1")
                .paramLabel("DIR").description("A directory under which the management API may add file and block"
                        + " namespaces (" + allowed.help() + "). Repeatable; adds to management." + allowed.key()
                        + " of --config. Default: none.").build());
        for (String t : TargetTransports.names()) {
            for (TargetTransport.PortOption o : TargetTransports.type(t).portOptions()) {
                spec.addOption(CommandLine.Model.OptionSpec.builder("--" + o.name().replace('_', '-'))
                        .type(String.class).paramLabel(o.values())
                        .description(o.help() + " For the " + t + ":// ports of --listen and --discovery.").build());
            }
        }
    }

    private static String[] names(Setting<?> s) {
        return s == Settings.EVENT_LOOP_THREADS ? new String[] {s.flag(), "--threads"} : new String[] {s.flag()};
    }

    private static String label(Setting<?> s) {
        if (s.typeText().startsWith("integer")) {
            return "N";
        }
        if (s.typeText().startsWith("size")) {
            return "SIZE";
        }
        if (s.typeText().startsWith("milliseconds")) {
            return "MS";
        }
        return s.typeText().replace(", ", "|").replace(" or ", "|");
    }

    /** The value a generated flag was given, or null. */
    private String flag(String name) {
        CommandLine.ParseResult r = spec.commandLine().getParseResult();
        return r != null && r.hasMatchedOption(name) ? r.matchedOptionValue(name, (String) null) : null;
    }

    /** {@code o} with the settings given by flags. */
    private Target.Options withSettingFlags(Target.Options o) {
        for (Setting<?> s : Settings.ALL) {
            o = withFlag(o, s);
        }
        return o;
    }

    private <T> Target.Options withFlag(Target.Options o, Setting<T> s) {
        String v = flag(s.flag());
        if (v == null) {
            return o;
        }
        try {
            return o.with(s, s.parse(v));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(s.flag() + " " + e.getMessage());
        }
    }

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

    /**
     * The flags as a configuration: one subsystem on every --listen port, plus discovery-only
     * ports; or discovery-only ports alone (a discovery service, such as a central discovery
     * controller).
     */
    TargetConfig fromFlags() {
        if (nqn == null && listen.isEmpty() && namespaces.isEmpty() && !discovery.isEmpty()) {
            List<PortConfig> ports = new ArrayList<>();
            for (String d : discovery) {
                ports.add(port(ports.size() + 1, parseListen(d, "--discovery"), List.of()));
            }
            return new TargetConfig(ports, List.of(), Target.Options.defaults(), List.of(), null,
                    TargetConfig.Management.NONE, Map.of(), Map.of(), List.of());
        }
        if (nqn == null || listen.isEmpty() || namespaces.isEmpty()) {
            throw new IllegalArgumentException("give --config FILE, or --listen, --subsystem and --namespace, or --discovery"
                    + " alone (a discovery service)");
        }
        Nqn.require(nqn);
        List<NamespaceConfig> ns = new ArrayList<>();
        // an RBD namespace's cluster (conf=, id=) is declared once per configuration file and client
        Map<RbdCluster.Key, TargetConfig.RbdClusterConfig> clusters =
                new LinkedHashMap<>();
        for (String s : namespaces) {
            BackendSpec spec = BackendSpec.parse(s);
            if (spec.cluster() != null) {
                TargetConfig.RbdClusterConfig c = clusters.computeIfAbsent(spec.cluster(), k -> new TargetConfig.RbdClusterConfig(
                        "cluster" + (clusters.size() + 1), k.conf() == null ? null : Path.of(k.conf()),
                        k.id() == null ? "admin" : k.id(), List.of()));
                ns.add(NamespaceConfig.rbd(ns.size() + 1, c.name(), spec));
            } else {
                ns.add(NamespaceConfig.of(ns.size() + 1, spec));
            }
        }
        SubsystemConfig sub = new SubsystemConfig(nqn, serial != null ? serial : SubsystemConfig.defaultSerial(nqn),
                model, ProductVersion.FIRMWARE_REVISION, 0, allowHosts.isEmpty(), allowHosts, ns);
        List<PortConfig> ports = new ArrayList<>();
        for (String l : listen) {
            URI u = parseListen(l, "--listen");
            ports.add(port(ports.size() + 1, u, List.of(nqn)));
        }
        for (String d : discovery) {
            URI u = parseListen(d, "--discovery");
            ports.add(port(ports.size() + 1, u, List.of()));
        }
        return new TargetConfig(ports, List.of(sub), Target.Options.defaults(), List.of(), null,
                TargetConfig.Management.NONE, Map.of(), Map.of(), List.copyOf(clusters.values()));
    }

    /** A port of the URI's transport, with the port options its transport takes given by flags. */
    private PortConfig port(int id, URI u, List<String> subsystems) {
        Map<String, String> options = new TreeMap<>();
        for (TargetTransport.PortOption o : TargetTransports.type(u.getScheme()).portOptions()) {
            String v = flag("--" + o.name().replace('_', '-'));
            if (v != null) {
                options.put(o.name(), v);
            }
        }
        return new PortConfig(id, u.getScheme(), options, u.getHost(), u.getPort(), subsystems, new TreeMap<>(), List.of(),
                mdns);
    }

    /** The port option flags given. */
    private List<String> portOptionFlags() {
        List<String> l = new ArrayList<>();
        for (String t : TargetTransports.names()) {
            for (TargetTransport.PortOption o : TargetTransports.type(t).portOptions()) {
                String f = "--" + o.name().replace('_', '-');
                if (flag(f) != null) {
                    l.add(f);
                }
            }
        }
        return l;
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        if (config != null && (nqn != null || !listen.isEmpty() || !namespaces.isEmpty() || !discovery.isEmpty()
                || mdns || !portOptionFlags().isEmpty())) {
            throw new IllegalArgumentException("--config replaces --listen, --discovery, --subsystem, --namespace, --mdns"
                    + " and the port options (" + String.join(", ", portOptionFlags()) + "): give them in its ports");
        }
        if (showConfig) {
            out.print(ConfigWriter.write(configuration(), ConfigWriter.Secrets.HIDDEN));
            out.flush();
            return 0;
        }
        // an Error (out of memory, say) anywhere halts the process with 70, and systemd restarts it
        Fatal.haltOnFatalErrors();
        TargetConfig first = configuration();
        Path socket = rpcSocket != null ? rpcSocket : first.management().socket() != null ? first.management().socket()
                : System.getenv("RUNTIME_DIRECTORY") != null
                ? Path.of(System.getenv("RUNTIME_DIRECTORY").split(":")[0], "rpc.sock") : null;
        Path state = stateDir != null ? stateDir : System.getenv("STATE_DIRECTORY") != null
                ? Path.of(System.getenv("STATE_DIRECTORY").split(":")[0]) : null;
        StateStore store = state == null ? null : new StateStore(state.resolve("state.json"));
        try (Daemon daemon = Daemon.start(this::configuration, out, store,
                socket == null ? null : ManagementApi.on(socket, out, store))) {
            daemon.serve(config != null);
        }
        out.println("nvmeof target stopped");
        out.flush();
        return 0;
    }

    /** {@code c} with the settings, the metrics address and the allowed paths given by flags over its own. */
    private TargetConfig withFlags(TargetConfig c) {
        c = c.withSettings(withSettingFlags(c.settings()));
        c = withAllowedPaths(c);
        return metrics == null ? c : c.withMetrics(MetricsServer.parse(metrics, "--metrics"));
    }

    /** The management API's allowed paths row, which the flag {@code --allowed-path} adds to. */
    private static Field<?> allowedPaths() {
        return Schemas.MANAGEMENT.field("allowed_paths");
    }

    /** {@code c} with the directories of every {@code --allowed-path} added to its management's allowed paths. */
    private TargetConfig withAllowedPaths(TargetConfig c) {
        CommandLine.ParseResult r = spec.commandLine().getParseResult();
        String flag = allowedPaths().flagName();
        if (r == null || !r.hasMatchedOption(flag)) {
            return c;
        }
        List<Path> paths = new ArrayList<>(c.management().allowedPaths());
        for (String dir : r.matchedOption(flag).<String>stringValues()) {
            Path p = Codecs.DIRECTORY.read(com.fasterxml.jackson.databind.node.TextNode.valueOf(dir), flag, null);
            if (!paths.contains(p)) {
                paths.add(p);
            }
        }
        TargetConfig.Management m = c.management();
        return c.withManagement(new TargetConfig.Management(m.socket(), m.allowedUsers(), m.allowedGroups(), paths,
                m.saveConfigDir()));
    }
}
