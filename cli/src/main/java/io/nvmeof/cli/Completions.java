package io.nvmeof.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.fabric.EventLoops;
import io.nvmeof.initiator.Multipath;
import io.nvmeof.tools.Bench;
import io.nvmeof.tools.BlockVerify;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The values bash completion offers for options that take one of a few words, each list taken
 * from where the word is parsed; and {@code nvmeof completion}, which prints the script.
 */
final class Completions {
    private Completions() {
    }

    /** bench --rw: fio's names of the patterns. */
    static final class Patterns implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(Bench.Pattern.values()).map(p -> p.fioName).iterator();
        }
    }

    static final class Verifies implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(BlockVerify.Kind.values()).map(k -> k.fioName).iterator();
        }
    }

    static final class IoPolicies implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(Multipath.Policy.values()).map(Multipath.Policy::label).iterator();
        }
    }

    static final class IoEngines implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(EventLoops.Engine.values()).map(e -> e.toString().toLowerCase(Locale.ROOT)).iterator();
        }
    }

    /** The words {@link io.nvmeof.fabric.BusyPoll#parse} knows (a number of microseconds too). */
    static final class BusyPollModes implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return io.nvmeof.fabric.BusyPoll.MODES.iterator();
        }
    }

    /** The transports the host speaks (discover -t). */
    static final class Transports implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return io.nvmeof.initiator.NvmeofUri.transports().iterator();
        }
    }

    static final class OutputFormats implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return OutputFormat.FORMATS.iterator();
        }
    }

    /** The subsystem NQNs a target configuration declares (its "subsystems" list). */
    static List<String> subsystemsOf(Path config) throws IOException {
        JsonNode root = new ObjectMapper().readTree(config.toFile());
        List<String> out = new ArrayList<>();
        for (JsonNode s : root.path("subsystems")) {
            String nqn = s.path("nqn").asText("");
            if (!nqn.isEmpty() && nqn.chars().allMatch(c -> c > ' ' && c < 127 && c != '\'' && c != '"' && c != '\\')) {
                out.add(nqn);
            }
        }
        return out;
    }

    /** Every {@code --subsystem NQN} option under {@code cl} (the management commands') offers {@code nqns}. */
    private static void offerSubsystems(CommandLine cl, List<String> nqns) {
        CommandLine.Model.CommandSpec spec = cl.getCommandSpec();
        CommandLine.Model.OptionSpec o = spec.findOption("--subsystem");
        if (o != null && "NQN".equals(o.paramLabel()) && !(cl.getCommand() instanceof TargetCommand)) {
            spec.remove(o);
            spec.addOption(CommandLine.Model.OptionSpec.builder(o).completionCandidates(nqns).build());
        }
        for (CommandLine sub : cl.getSubcommands().values()) {
            offerSubsystems(sub, nqns);
        }
    }

    @Command(name = "completion", mixinStandardHelpOptions = true,
            description = {"Prints the bash completion script for nvmeof. To use it now: source <(nvmeof completion);"
                    + " for every shell: nvmeof completion > ~/.local/share/bash-completion/completions/nvmeof (the"
                    + " .deb and the tarball install it already). It completes commands, options and the values of"
                    + " options that take one of a few words (--rw, --verify, --iopolicy, --io-engine, --busy-poll, -t,"
                    + " -o) and, with --config, the subsystems of that configuration for --subsystem."})
    static final class Print implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--config", paramLabel = "FILE", description = "A target configuration whose subsystems"
                + " --subsystem offers.")
        Path config;

        @Override
        public Integer call() throws Exception {
            CommandLine root = Main.commandLine();
            if (config != null) {
                offerSubsystems(root, subsystemsOf(config));
            }
            String script = AutoComplete.bash("nvmeof", root);
            PrintWriter out = spec.commandLine().getOut();
            out.print(script);
            out.flush();
            return 0;
        }
    }
}
