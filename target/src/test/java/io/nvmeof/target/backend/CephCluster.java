package io.nvmeof.target.backend;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A throwaway one-node Ceph cluster for tests ({@code test/ceph/ceph-cluster.sh}: a monitor on
 * 127.0.0.1 or an address in a network namespace, one OSD (memstore in RAM, or bluestore on a file), pool {@code rbd}), its files in a
 * directory of the test's. Where Ceph's packages are missing the test is skipped, saying so;
 * {@code .ci/run} installs them.
 */
public final class CephCluster implements AutoCloseable {
    /** The repository's root, from a module's directory. */
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private final Path dir;
    private final Path conf;
    /** What runs every command of the cluster's: nothing, or {@code ip netns exec NS} for a cluster in a namespace. */
    private final List<String> prefix;

    private CephCluster(Path dir, List<String> prefix) {
        this.dir = dir;
        this.conf = dir.resolve("ceph.conf");
        this.prefix = prefix;
    }

    /** Whether this machine has what a cluster needs. */
    public static boolean available() {
        return Files.isExecutable(Path.of("/usr/bin/ceph-mon")) && Files.isExecutable(Path.of("/usr/bin/ceph-osd"))
                && Files.isExecutable(Path.of("/usr/bin/rbd")) && Rbd.available();
    }

    /** Starts one with a memstore OSD in {@code dir} (which must not exist or be empty); skips the test where it cannot be. */
    public static CephCluster start(Path dir) throws IOException, InterruptedException {
        return start(dir, "memstore");
    }

    /**
     * Starts one in {@code dir} whose OSD keeps its objects in {@code store}: {@code memstore}
     * (RAM, gone when it stops) or {@code bluestore} (a file, kept over a kill and a restart).
     */
    public static CephCluster start(Path dir, String store) throws IOException, InterruptedException {
        return start(dir, store, null, null);
    }

    /**
     * Starts one in network namespace {@code netns} (made by the test), its monitor and OSD on
     * {@code address} there; every command of this object's then runs in that namespace. With
     * {@code netns} null: on loopback, in the test's own namespace.
     */
    public static CephCluster start(Path dir, String store, String netns, String address)
            throws IOException, InterruptedException {
        Assumptions.assumeTrue(available(), "skipped: Ceph's packages (ceph-mon ceph-osd ceph-common librbd1) are not"
                + " installed; .ci/run installs them");
        CephCluster c = new CephCluster(dir, netns == null ? List.of() : List.of("ip", "netns", "exec", netns));
        ProcessBuilder pb = new ProcessBuilder(c.command("bash", ROOT.resolve("test/ceph/ceph-cluster.sh").toString(),
                "start", dir.toString()));
        pb.environment().put("CEPH_OSD_STORE", store);
        if (address != null) {
            pb.environment().put("CEPH_ADDR", address);
        }
        Run r = run(180, pb);
        if (r.exit != 0) {
            c.close();
            throw new IOException("the Ceph cluster did not start (exit " + r.exit + "):\n" + r.output);
        }
        return c;
    }

    /** {@code cmd}, run where the cluster is (in its namespace, if it has one). */
    private String[] command(String... cmd) {
        List<String> all = new ArrayList<>(prefix);
        all.addAll(List.of(cmd));
        return all.toArray(String[]::new);
    }

    /** Its configuration file, which names its monitor and keyring. */
    public Path conf() {
        return conf;
    }

    /** Runs {@code rbd ARGS...} against it; its output, or an exception with it. */
    public String rbd(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(List.of("rbd", "--conf", conf.toString()));
        cmd.addAll(List.of(args));
        Run r = run(120, cmd.toArray(String[]::new));
        if (r.exit != 0) {
            throw new IOException(String.join(" ", cmd) + " failed (exit " + r.exit + "): " + r.output);
        }
        return r.output;
    }

    /**
     * Freezes its OSD (SIGSTOP): the cluster stops answering I/O, as when it is out of reach, and
     * its data stay (a memstore OSD that stopped would lose them). {@link #resumeOsd} thaws it.
     */
    public void pauseOsd() throws IOException, InterruptedException {
        signalOsd("-STOP");
    }

    /** Thaws the OSD {@link #pauseOsd} froze. */
    public void resumeOsd() throws IOException, InterruptedException {
        signalOsd("-CONT");
    }

    /** Kills its OSD (SIGKILL), as a crash would; {@link #startOsd} starts it again. */
    public void killOsd() throws IOException, InterruptedException {
        script("kill-osd");
    }

    /** Starts its OSD again after {@link #killOsd}, and waits until the monitor has it up. */
    public void startOsd() throws IOException, InterruptedException {
        script("start-osd");
    }

    private void script(String command) throws IOException, InterruptedException {
        Run r = run(120, command("bash", ROOT.resolve("test/ceph/ceph-cluster.sh").toString(), command, dir.toString()));
        if (r.exit != 0) {
            throw new IOException("ceph-cluster.sh " + command + " failed (exit " + r.exit + "):\n" + r.output);
        }
    }

    /** Runs {@code ceph ARGS...} against it; its output, or an exception with it. */
    public String ceph(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(List.of("ceph", "--conf", conf.toString(), "--connect-timeout", "20"));
        cmd.addAll(List.of(args));
        Run r = run(60, cmd.toArray(String[]::new));
        if (r.exit != 0) {
            throw new IOException(String.join(" ", cmd) + " failed (exit " + r.exit + "): " + r.output);
        }
        return r.output;
    }

    private void signalOsd(String signal) throws IOException, InterruptedException {
        String pid = Files.readString(dir.resolve("osd.0.pid")).trim();
        Run r = run(10, "kill", signal, pid);
        if (r.exit != 0) {
            throw new IOException("kill " + signal + " " + pid + ": " + r.output);
        }
    }

    /** Stops its daemons and (the test's) leaves its directory. */
    @Override
    public void close() throws IOException, InterruptedException {
        run(60, command("bash", ROOT.resolve("test/ceph/ceph-cluster.sh").toString(), "stop", dir.toString()));
    }

    /**
     * A cluster for a test class ({@code @RegisterExtension static final CephCluster.PerClass}):
     * started in a temporary directory before its first test, stopped and removed after its last.
     */
    public static final class PerClass implements BeforeAllCallback, AfterAllCallback {
        private final String store;
        private Path dir;
        private CephCluster cluster;

        /** With a memstore OSD. */
        public PerClass() {
            this("memstore");
        }

        /** With an OSD on {@code store}, as {@link CephCluster#start(Path, String)} takes it. */
        public PerClass(String store) {
            this.store = store;
        }

        /** The running cluster. */
        public CephCluster get() {
            return cluster;
        }

        /** A directory of the test class's, beside the cluster's own. */
        public Path dir() {
            return dir;
        }

        @Override
        public void beforeAll(ExtensionContext context) throws Exception {
            dir = Files.createTempDirectory("ceph-test");
            cluster = start(dir.resolve("ceph"), store);
        }

        @Override
        public void afterAll(ExtensionContext context) throws Exception {
            try {
                if (cluster != null) {
                    cluster.close();
                }
            } finally {
                if (dir != null) {
                    try (var files = Files.walk(dir)) {
                        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                    }
                }
            }
        }
    }

    private record Run(int exit, String output) {
    }

    private static Run run(int seconds, String... cmd) throws IOException, InterruptedException {
        return run(seconds, new ProcessBuilder(cmd));
    }

    private static Run run(int seconds, ProcessBuilder pb) throws IOException, InterruptedException {
        List<String> cmd = pb.command();
        Process p = pb.redirectErrorStream(true).start();
        byte[][] out = new byte[1][];
        Thread reader = new Thread(() -> {
            try {
                out[0] = p.getInputStream().readAllBytes();
            } catch (IOException e) {
                out[0] = new byte[0];
            }
        });
        reader.start();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            reader.join(5000);
            return new Run(-1, "timed out after " + seconds + " s: " + String.join(" ", cmd));
        }
        reader.join(5000);
        return new Run(p.exitValue(), out[0] == null ? "" : new String(out[0], StandardCharsets.UTF_8));
    }
}
