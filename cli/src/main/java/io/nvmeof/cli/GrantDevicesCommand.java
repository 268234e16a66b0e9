package io.nvmeof.cli;

import io.nvmeof.daemon.config.TargetConfig;
import io.nvmeof.daemon.config.TargetConfig.NamespaceConfig;
import io.nvmeof.daemon.config.TargetConfig.SubsystemConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * Gives the service's user read-write access to exactly the block devices its configuration
 * serves (a POSIX ACL entry, {@code setfacl -m u:USER:rw}), and takes it back from those it
 * served before and no longer does: the service needs neither the {@code disk} group nor
 * access to every block device. Run as root before the target starts and before each reload
 * (the unit's {@code ExecStartPre=+} and {@code ExecReload=+}), with the target's own flags.
 */
@Command(name = "grant-devices", mixinStandardHelpOptions = true,
        description = {"Give USER read-write access (an ACL entry) to the block devices the target's configuration"
                + " serves, and take it back from devices served before and no longer; for the service unit, as root."
                + " Takes the flags of nvmeof target (--config FILE, or --namespace block:DEV ...) after its own."})
final class GrantDevicesCommand implements Callable<Integer> {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--user", required = true, paramLabel = "USER", description = "The service's user.")
    String user;

    @Option(names = "--state", paramLabel = "FILE", description = "Where the devices granted are kept, to take the"
            + " grant back later (default: ${DEFAULT-VALUE}).")
    Path state = Path.of("/var/lib/nvmeof/granted-devices");

    @Unmatched
    List<String> targetArgs = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        TargetCommand target = new TargetCommand();
        new CommandLine(target).parseArgs(targetArgs.toArray(new String[0]));
        TreeSet<String> wanted = new TreeSet<>();
        for (String path : blockDevices(target.configuration())) {
            wanted.add(Path.of(path).toRealPath().toString());
        }
        TreeSet<String> before = new TreeSet<>();
        if (Files.exists(state)) {
            before.addAll(Files.readAllLines(state, StandardCharsets.UTF_8));
            before.remove("");
        }
        for (String dev : wanted) {
            setfacl("-m", "u:" + user + ":rw", dev);
            out.println("granted " + user + " rw on " + dev);
        }
        for (String dev : before) {
            if (!wanted.contains(dev) && Files.exists(Path.of(dev))) {
                setfacl("-x", "u:" + user, dev);
                out.println("took back " + user + "'s access to " + dev);
            }
        }
        Files.createDirectories(state.toAbsolutePath().getParent());
        Files.write(state, wanted, StandardCharsets.UTF_8);
        out.flush();
        return 0;
    }

    /** The paths of the block namespaces of {@code c}. */
    static List<String> blockDevices(TargetConfig c) {
        List<String> l = new ArrayList<>();
        for (SubsystemConfig s : c.subsystems()) {
            for (NamespaceConfig n : s.namespaces()) {
                if (n.backend().equals("block")) {
                    l.add(n.path());
                }
            }
        }
        return l;
    }

    private static void setfacl(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add("setfacl");
        cmd.addAll(List.of(args));
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IOException("cannot run setfacl (install the acl package): " + e.getMessage(), e);
        }
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + output);
        }
    }
}
