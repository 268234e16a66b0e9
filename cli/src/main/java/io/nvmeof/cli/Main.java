package io.nvmeof.cli;

import io.nvmeof.fabric.Failures;
import io.nvmeof.target.ProductVersion;
import java.io.PrintWriter;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code nvmeof}: NVMe over Fabrics target, initiator tools and benchmark. */
@Command(name = "nvmeof", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "User-space NVMe over Fabrics: serve namespaces, copy data, benchmark remote disks.",
        subcommands = {TargetCommand.class, DiscoverCommand.class, IdentifyCommands.IdCtrl.class,
                IdentifyCommands.IdNs.class, IdentifyCommands.ListNamespaces.class, ListSubsysCommand.class, ReadCommand.class,
                WriteCommand.class, CopyCommand.class, ReservationCommands.Register.class, ReservationCommands.Acquire.class,
                ReservationCommands.Release.class, ReservationCommands.Report.class,
                BenchCommand.class, PlotCommand.class, TopCommand.class, DemoCommand.class, KeyCommands.Gen.class, KeyCommands.Check.class,
                KeyCommands.GenTls.class, KeyCommands.CheckTls.class, GrantDevicesCommand.class, RpcCommands.Rpc.class,
                RpcCommands.Ns.class, RpcCommands.SubsystemCmd.class, RpcCommands.Ana.class, RpcCommands.Gw.class, RpcCommands.QosCmd.class,
                RpcCommands.ReservationsCmd.class, NbdCommand.class, Completions.Print.class,
                CommandLine.HelpCommand.class},
        footer = {"", "Bash completion: source <(nvmeof completion), or see 'nvmeof completion --help' to keep it.",
                "Man pages: man nvmeof-bench and the others come with the .deb and the tarball (share/man/man1); in a"
                        + " source tree 'mvn -q -DskipTests -pl packaging -am package' writes them to packaging/build/man:"
                        + " man -l packaging/build/man/nvmeof-bench.1.gz."})
public final class Main implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    public static void main(String[] args) {
        // One line per log record, to stderr: "12:00:01 INFO  Target: listening on ...".
        if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
            System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tT %4$-7s %3$s: %5$s%6$s%n");
        }
        System.exit(execute(args));
    }

    /** Runs the command line and returns the exit code (for tests and embedding). */
    public static int execute(String... args) {
        return commandLine().execute(args);
    }

    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main());
        for (CommandLine sub : cl.getSubcommands().values()) {
            Object c = sub.getCommand();
            ConnectionOptions o = c instanceof BenchCommand ? null : c instanceof ConnectedCommand cc ? cc.connection
                    : c instanceof DiscoverCommand d ? d.connection : null;
            if (o != null && sub.getCommandSpec().findOption("--timeout") == null) {
                o.addDeprecatedTimeout(sub.getCommandSpec());
            }
        }
        cl.setParameterExceptionHandler((ex, a) -> {
            PrintWriter err = ex.getCommandLine().getErr();
            err.println("nvmeof: " + ex.getMessage() + " (see '" + ex.getCommandLine().getCommandSpec().qualifiedName()
                    + " --help')");
            err.flush();
            return 2;
        });
        cl.setExecutionExceptionHandler((ex, c, parseResult) -> {
            if (ex instanceof BenchCommand.Interrupted) {
                return 130; // its report is out; a shell's Ctrl-C status
            }
            PrintWriter err = c.getErr();
            err.println("nvmeof: " + describe(ex));
            err.flush();
            if (System.getenv("NVMEOF_DEBUG") != null) {
                ex.printStackTrace(err);
            }
            return 1;
        });
        return cl;
    }

    /** One line that says what went wrong, without a stack trace. */
    static String describe(Throwable t) {
        return Failures.describe(t);
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"nvmeof " + ProductVersion.VERSION + " (Java " + Runtime.version() + ")"};
        }
    }
}
