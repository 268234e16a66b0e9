package io.nvmeof.cli;

import io.nvmeof.daemon.StateStore;
import io.nvmeof.daemon.config.TargetConfig.NamespaceConfig;
import io.nvmeof.daemon.config.TargetConfig.SubsystemConfig;
import io.nvmeof.daemon.config.TargetConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;
import picocli.CommandLine;

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
        TreeSet<String> before = granted(state, out);
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
        // the state's directory is the service's: a link or a file planted there is replaced, never written through
        StateStore.writePrivately(state, wanted.isEmpty() ? "" : String.join("\n", wanted) + "\n");
        out.flush();
        return 0;
    }

    /**
     * The devices granted before, as {@code state} keeps them: only if it is a regular file (no
     * link followed) owned by this user, which is root as the unit runs it. The service's user
     * can write the directory it lies in, so anything else there is ignored with a warning.
     */
    static TreeSet<String> granted(Path state, PrintWriter out) throws IOException {
        TreeSet<String> before = new TreeSet<>();
        PosixFileAttributes a;
        try {
            a = Files.readAttributes(state, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return before;
        }
        Object owner = Files.getAttribute(state, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        Object self = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        if (!a.isRegularFile() || !owner.equals(self) || a.size() > (1 << 20)) {
            out.println("ignoring " + state + ": not a regular file of this user's (uid " + self + ") of at most 1 MiB; it"
                    + " will be replaced");
            return before;
        }
        try (SeekableByteChannel ch = Files.newByteChannel(state, StandardOpenOption.READ,
                LinkOption.NOFOLLOW_LINKS)) {
            ByteBuffer b = ByteBuffer.allocate((int) a.size());
            while (b.hasRemaining() && ch.read(b) > 0) {
                // read it all
            }
            new String(b.array(), 0, b.position(), StandardCharsets.UTF_8).lines().filter(l -> !l.isEmpty())
                    .forEach(before::add);
        }
        return before;
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
