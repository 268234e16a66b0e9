package io.nvmeof.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.daemon.config.Schemas;
import io.nvmeof.fabric.Sizes;
import io.nvmeof.target.backend.BackendSpec;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

/** The management API's client: {@code nvmeof rpc METHOD [JSON]}, and friendly commands over it. */
final class RpcCommands {
    static final Path DEFAULT_SOCKET = Path.of("/run/nvmeof/rpc.sock");
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private RpcCommands() {
    }

    /** The socket flag of every client command. */
    static class SocketOption {
        @Option(names = "--socket", paramLabel = "PATH", description = "The target's management socket (default:"
                + " ${DEFAULT-VALUE}, where the nvmeof-target service has it).")
        Path socket = DEFAULT_SOCKET;
    }

    /**
     * Calls {@code method} with {@code params} on the target at {@code socket}; prints the result
     * as JSON and returns 0, or prints the error (and the field at fault) and returns 1.
     */
    static int call(Path socket, String method, ObjectNode params, PrintWriter out, PrintWriter err) throws IOException {
        ObjectNode req = JSON.createObjectNode();
        req.put("jsonrpc", "2.0");
        req.put("method", method);
        req.set("params", params);
        req.put("id", 1);
        JsonNode resp;
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            try {
                ch.connect(UnixDomainSocketAddress.of(socket));
            } catch (IOException e) {
                throw new IOException("cannot reach the target's management API at " + socket + ": " + e.getMessage()
                        + " (is the target running with it? nvmeof target --rpc-socket, or the service's RuntimeDirectory)", e);
            }
            ByteBuffer b = ByteBuffer.wrap((new ObjectMapper().writeValueAsString(req) + "\n").getBytes(StandardCharsets.UTF_8));
            IOException unsent = null;
            try {
                while (b.hasRemaining()) {
                    ch.write(b);
                }
            } catch (IOException e) {
                // the target may have answered (a refusal) and closed before reading the request:
                // its answer is still there to read
                unsent = e;
            }
            BufferedReader r = new BufferedReader(new InputStreamReader(Channels.newInputStream(ch), StandardCharsets.UTF_8));
            String line = r.readLine();
            if (line == null) {
                throw unsent != null ? unsent : new IOException("the target closed the management connection without an answer");
            }
            resp = JSON.readTree(line);
        }
        if (resp.has("error")) {
            JsonNode e = resp.get("error");
            err.println("nvmeof: " + method + ": " + e.path("message").asText() + " (error " + e.path("code").asInt() + ")");
            err.flush();
            return 1;
        }
        out.println(JSON.writeValueAsString(resp.get("result")));
        out.flush();
        return 0;
    }

    @Command(name = "rpc", mixinStandardHelpOptions = true,
            description = {"Call a method of a running target's management API (JSON-RPC 2.0 over its Unix socket).",
                "'nvmeof rpc rpc_get_methods' lists the methods. Keys are named by file, never given here."})
    static final class Rpc extends SocketOption implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(index = "0", paramLabel = "METHOD")
        String method;

        @Parameters(index = "1", arity = "0..1", paramLabel = "JSON", description = "The parameters, a JSON object (default: {}).")
        String params;

        @Override
        public Integer call() throws Exception {
            JsonNode p = params == null ? JSON.createObjectNode() : JSON.readTree(params);
            if (!p.isObject()) {
                throw new IllegalArgumentException("JSON must be an object, e.g. '{\"nqn\": \"nqn.2026-01.io.example:disk\"}'");
            }
            return RpcCommands.call(socket, method, (ObjectNode) p, spec.commandLine().getOut(), spec.commandLine().getErr());
        }
    }

    @Command(name = "ns", mixinStandardHelpOptions = true, description = "Add or remove a namespace of a running target.",
            subcommands = {NsAdd.class, NsRemove.class, NsResize.class})
    static final class Ns {
    }

    @Command(name = "add", mixinStandardHelpOptions = true, modelTransformer = NsAdd.Flags.class,
            description = "Add a namespace (add_namespace); it persists. The flags besides SPEC are the namespace's"
                    + " fields in the configuration (docs/reference/configuration.md); without --nsid it takes one past"
                    + " the largest.")
    static final class NsAdd extends SocketOption implements Callable<Integer> {
        /** What SPEC gives: the rest of the namespace's rows are flags. */
        static final Set<String> IN_SPEC = Set.of("backend", "path", "size", "block_size", "read_only", "direct_io");

        static final class Flags implements CommandLine.IModelTransformer {
            @Override
            public CommandLine.Model.CommandSpec transform(CommandLine.Model.CommandSpec spec) {
                SchemaOptions.add(spec, Schemas.NAMESPACE, IN_SPEC);
                return spec;
            }
        }

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--subsystem", required = true, paramLabel = "NQN")
        String nqn;

        @Parameters(index = "0", paramLabel = "SPEC", description = "ram:SIZE, null:SIZE, file:PATH[,size=SIZE][,bs=512|4096][,ro][,direct]"
                + " or block:DEVICE[,ro][,direct], as for nvmeof target --namespace.")
        String namespace;

        @Override
        public Integer call() throws Exception {
            BackendSpec b = BackendSpec.parse(namespace);
            ObjectNode p = JSON.createObjectNode();
            p.put("nqn", nqn);
            SchemaOptions.put(spec, Schemas.NAMESPACE, IN_SPEC, p);
            p.put("backend", b.kind());
            if (b.path() != null) {
                p.put("path", Path.of(b.path()).toAbsolutePath().toString());
            }
            if (b.size() != 0) {
                p.put("size", b.size());
            }
            if (b.blockSize() != 0) {
                p.put("block_size", b.blockSize());
            }
            p.put("read_only", b.readOnly());
            if (b.directIo()) {
                p.put("direct_io", true);
            }
            return RpcCommands.call(socket, "add_namespace", p, spec.commandLine().getOut(), spec.commandLine().getErr());
        }
    }

    @Command(name = "resize", mixinStandardHelpOptions = true, description = "Change a namespace's size in place under"
            + " running I/O (resize_namespace); it persists. Without --size a file or device namespace takes its storage's"
            + " size now (after the file or device grew).")
    static final class NsResize extends NamespaceCommand implements Callable<Integer> {
        @Option(names = "--size", paramLabel = "SIZE", description = "The new size (bytes, or 64k, 256M, 1G...).")
        String size;

        @Option(names = "--shrink", description = "Allow a smaller size: the data past the new end is lost.")
        boolean shrink;

        @Override
        public Integer call() throws Exception {
            ObjectNode p = params();
            if (size != null) {
                p.put("size", Sizes.parse(size, "--size"));
            }
            if (shrink) {
                p.put("shrink", true);
            }
            return RpcCommands.call(socket, "resize_namespace", p, spec.commandLine().getOut(), spec.commandLine().getErr());
        }
    }

    @Command(name = "remove", mixinStandardHelpOptions = true, description = "Remove a namespace (remove_namespace); it persists.")
    static final class NsRemove extends NamespaceCommand implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            return RpcCommands.call(socket, "remove_namespace", params(), spec.commandLine().getOut(), spec.commandLine().getErr());
        }
    }

    @Command(name = "subsystem", mixinStandardHelpOptions = true, description = "Add or remove a subsystem of a running target.",
            subcommands = {SubsystemAdd.class, SubsystemRemove.class})
    static final class SubsystemCmd {
    }

    @Command(name = "add", mixinStandardHelpOptions = true, modelTransformer = SubsystemAdd.Flags.class,
            description = "Add a subsystem (create_subsystem); it persists. The flags are the subsystem's fields in the"
                    + " configuration (docs/reference/configuration.md); without --allow-host, any host may connect.")
    static final class SubsystemAdd extends SocketOption implements Callable<Integer> {
        /** Not flags: the NQN is the parameter, namespaces come by ns add. */
        static final Set<String> NOT_FLAGS = Set.of("nqn", "namespaces");

        static final class Flags implements CommandLine.IModelTransformer {
            @Override
            public CommandLine.Model.CommandSpec transform(CommandLine.Model.CommandSpec spec) {
                SchemaOptions.add(spec, Schemas.SUBSYSTEM, NOT_FLAGS);
                return spec;
            }
        }

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(index = "0", paramLabel = "NQN")
        String nqn;

        @Override
        public Integer call() throws Exception {
            ObjectNode p = JSON.createObjectNode();
            p.put("nqn", nqn);
            SchemaOptions.put(spec, Schemas.SUBSYSTEM, NOT_FLAGS, p);
            return RpcCommands.call(socket, "create_subsystem", p, spec.commandLine().getOut(), spec.commandLine().getErr());
        }
    }

    @Command(name = "remove", mixinStandardHelpOptions = true, description = "Remove a subsystem (delete_subsystem); it persists.")
    static final class SubsystemRemove extends SocketOption implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(index = "0", paramLabel = "NQN")
        String nqn;

        @Override
        public Integer call() throws Exception {
            ObjectNode p = JSON.createObjectNode();
            p.put("nqn", nqn);
            return RpcCommands.call(socket, "delete_subsystem", p, spec.commandLine().getOut(), spec.commandLine().getErr());
        }
    }

    @Command(name = "qos", mixinStandardHelpOptions = true,
            description = "Rate limits of a running target's namespaces and hosts.", subcommands = {QosSet.class})
    static final class QosCmd {
    }

    @Command(name = "set", mixinStandardHelpOptions = true, modelTransformer = QosSet.Flags.class,
            description = "Set a namespace's (--subsystem, --nsid) or a host's (--host: all its controllers here) limits"
                    + " (set_qos), as Ceph's gateways name them; 0: none. At once; it persists.")
    static final class QosSet extends SocketOption implements Callable<Integer> {
        static final class Flags implements CommandLine.IModelTransformer {
            @Override
            public CommandLine.Model.CommandSpec transform(CommandLine.Model.CommandSpec spec) {
                SchemaOptions.add(spec, Schemas.QOS, Set.of());
                return spec;
            }
        }

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--subsystem", paramLabel = "NQN")
        String nqn;

        @Option(names = "--nsid", paramLabel = "N")
        Long nsid;

        @Option(names = "--host", paramLabel = "HOSTNQN")
        String host;

        @Override
        public Integer call() throws Exception {
            ObjectNode p = JSON.createObjectNode();
            if (host != null) {
                p.put("host", host);
            }
            if (nqn != null) {
                p.put("nqn", nqn);
            }
            if (nsid != null) {
                p.put("nsid", nsid);
            }
            SchemaOptions.put(spec, Schemas.QOS, Set.of(), p);
            return RpcCommands.call(socket, "set_qos", p, spec.commandLine().getOut(), spec.commandLine().getErr());
        }
    }

    @Command(name = "ana", mixinStandardHelpOptions = true,
            description = "ANA group states of a running target, per port (nvmet's ports/N/ana_groups/G/ana_state).",
            subcommands = {AnaSet.class, AnaShow.class})
    static final class Ana {
    }

    @Command(name = "set", mixinStandardHelpOptions = true, modelTransformer = AnaSet.Flags.class,
            description = "Set an ANA group's state through a port (set_ana_state); hosts connected there get the ANA"
                    + " change notice. It persists. Gateways do not coordinate (set each one's ports yourself), except for the"
                    + " groups a gateway group manages, which this refuses.")
    static final class AnaSet extends SocketOption implements Callable<Integer> {
        /** The group's flag from its row; its state, the row's too, is the one argument. */
        static final class Flags implements CommandLine.IModelTransformer {
            @Override
            public CommandLine.Model.CommandSpec transform(CommandLine.Model.CommandSpec spec) {
                SchemaOptions.add(spec, Schemas.ANA_GROUP, Set.of("state"));
                var state = Schemas.ANA_GROUP.field("state");
                spec.addPositional(CommandLine.Model.PositionalParamSpec.builder().index("0").paramLabel("STATE")
                        .type(String.class).description(Character.toUpperCase(state.help().charAt(0))
                                + state.help().substring(1) + ": " + state.codec().type().replace("`", "") + ".").build());
                return spec;
            }
        }

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--port", required = true, paramLabel = "PORTID", description = "The port (its portid).")
        int port;

        @Override
        public Integer call() throws Exception {
            ObjectNode p = JSON.createObjectNode();
            p.put("portid", port);
            SchemaOptions.put(spec, Schemas.ANA_GROUP, Set.of("state"), p);
            p.put("state", spec.positionalParameters().get(0).<String>getValue());
            return RpcCommands.call(socket, "set_ana_state", p, spec.commandLine().getOut(), spec.commandLine().getErr());
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "Each port's ANA groups, their states and namespaces (get_ana_states).")
    static final class AnaShow extends SocketOption implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            return RpcCommands.call(socket, "get_ana_states", JSON.createObjectNode(), spec.commandLine().getOut(),
                    spec.commandLine().getErr());
        }
    }

    @Command(name = "gw", mixinStandardHelpOptions = true,
            description = "A running gateway's gateway group: gateways over one RBD image that agree through Ceph who"
                    + " owns each ANA group.", subcommands = {GwShow.class})
    static final class Gw {
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "The group's members, who owns which ANA"
            + " group, the leases, the lease changes and fencings, and the latest events (get_gateway_group).")
    static final class GwShow extends SocketOption implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            return RpcCommands.call(socket, "get_gateway_group", JSON.createObjectNode(), spec.commandLine().getOut(),
                    spec.commandLine().getErr());
        }
    }

    @Command(name = "reservations", mixinStandardHelpOptions = true, description = {"A running target's view of a"
            + " namespace's reservation, and the operator's way out of stale registrations.",
        "Hosts change reservations with resv-register, resv-acquire, resv-release; these commands act as the target's"
            + " operator, with no key."}, subcommands = {ResvShow.class, ResvClear.class})
    static final class ReservationsCmd {
    }

    /** A command on one namespace of a running target: its subsystem and NSID. */
    abstract static class NamespaceCommand extends SocketOption {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--subsystem", required = true, paramLabel = "NQN")
        String nqn;

        @Option(names = "--nsid", required = true, paramLabel = "N")
        long nsid;

        /** The parameters that name the namespace: {@code nqn}, {@code nsid}. */
        ObjectNode params() {
            ObjectNode p = JSON.createObjectNode();
            p.put("nqn", nqn);
            p.put("nsid", nsid);
            return p;
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "A namespace's reservation (get_reservations):"
            + " generation, type, holder, PTPL, and each registration with the host NQN that made it, its host ID and key.")
    static final class ResvShow extends NamespaceCommand implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            return RpcCommands.call(socket, "get_reservations", params(), spec.commandLine().getOut(), spec.commandLine().getErr());
        }
    }

    @Command(name = "clear", mixinStandardHelpOptions = true, description = "Remove a namespace's registrations"
            + " (clear_registrations): a host's (--host), one host ID's (--host-id), or all; as if each had unregistered"
            + " (a reservation its holder loses is released), and its hosts are told. A host ID registered by one host"
            + " NQN is refused to every other at Connect until then. Kept as the reservation's PTPL keeps it.")
    static final class ResvClear extends NamespaceCommand implements Callable<Integer> {
        @Option(names = "--host", paramLabel = "HOSTNQN", description = "Only this host NQN's registrations.")
        String host;

        @Option(names = "--host-id", paramLabel = "UUID", description = "Only the registration of this host ID.")
        String hostId;

        @Override
        public Integer call() throws Exception {
            ObjectNode p = params();
            if (host != null) {
                p.put("host", host);
            }
            if (hostId != null) {
                p.put("host_id", hostId);
            }
            return RpcCommands.call(socket, "clear_registrations", p, spec.commandLine().getOut(), spec.commandLine().getErr());
        }
    }
}
