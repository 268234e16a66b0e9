package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The real {@code nvmeof} jar as a separate JVM: the target process for end-to-end tests,
 * and the CLI run as a user would run it.
 */
final class TargetProcess implements AutoCloseable {
    static final Path JAR = Path.of(System.getProperty("nvmeof.jar", "../cli/build/nvmeof.jar")).toAbsolutePath();
    private static final Pattern LISTENING = Pattern.compile("listening on (?:tcp|rdma)://([^:\\s]+):(\\d+)");

    final Fabric fabric;
    final Process process;
    final Path stdout;
    final Path stderr;
    final int port;

    private TargetProcess(Fabric fabric, Process process, Path stdout, Path stderr, int port) {
        this.fabric = fabric;
        this.process = process;
        this.stdout = stdout;
        this.stderr = stderr;
        this.port = port;
    }

    static List<String> java(String... args) {
        return javaWith(List.of(), args);
    }

    /** The CLI with JVM flags of the test's own ({@code -Xmx1g}, say) in front of the jar. */
    static List<String> javaWith(List<String> jvmFlags, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Dio.netty.leakDetection.level=paranoid");
        cmd.add("-Djava.net.preferIPv4Stack=true");
        cmd.add("-Xmx512m");
        cmd.addAll(sharedArchive());
        cmd.addAll(jvmFlags);
        cmd.add("-jar");
        cmd.add(JAR.toString());
        cmd.addAll(List.of(args));
        return cmd;
    }

    private static List<String> archiveFlags;

    /**
     * Class-data sharing, as the launcher gives it to users: the tests start the jar a few
     * hundred times, and each start maps the classes a training run ({@code demo}) loaded
     * instead of parsing them again (about 0.2 s less a start here). One archive per jar, made
     * at the first start; none, and no flag, if it cannot be made.
     */
    private static synchronized List<String> sharedArchive() {
        if (archiveFlags == null) {
            archiveFlags = List.of();
            try {
                Path dir = Files.createDirectories(JAR.getParent().resolve("test-cds"));
                Path archive = dir.resolve("nvmeof-" + Files.size(JAR) + "-" + Files.getLastModifiedTime(JAR).toMillis() + ".jsa");
                if (!Files.isRegularFile(archive)) {
                    Path partial = Files.createTempFile(dir, "training", ".jsa");
                    Files.delete(partial);
                    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                            "-XX:ArchiveClassesAtExit=" + partial, "-Djava.net.preferIPv4Stack=true", "-jar", JAR.toString(),
                            "demo", "--runtime", "1").redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
                    if (p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0 && Files.isRegularFile(partial)) {
                        Files.move(partial, archive, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                    } else {
                        p.destroyForcibly();
                        Files.deleteIfExists(partial);
                    }
                }
                if (Files.isRegularFile(archive)) {
                    archiveFlags = List.of("-XX:SharedArchiveFile=" + archive);
                }
            } catch (IOException e) {
                System.out.println("test JVMs start without class-data sharing: " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return archiveFlags;
    }

    /**
     * How long a test waits for a target process's next sign of life (its start, a reload, a
     * notification) before calling it lost: long enough for a JVM to start on a machine that is
     * busy with other work, and never waited out by a target that is working, since every wait
     * ends at the event and at once if the process exits.
     */
    static final Duration PATIENCE = Duration.ofSeconds(90);

    /** Waits until {@code condition} holds, for at most {@link #PATIENCE}; fails at once if the target exits. */
    void await(String what, Callable<Boolean> condition) {
        Awaitility.await(what).atMost(PATIENCE).pollInterval(Duration.ofMillis(50))
                .failFast("the target exited: " + what, () -> !process.isAlive()).until(condition);
    }

    /** Starts {@code nvmeof target ARGS} (with the flags of {@code fabric}) and waits until it prints its port. */
    static TargetProcess start(Fabric fabric, Path dir, String... args) throws IOException, InterruptedException {
        return startWith(List.of(), fabric, dir, args);
    }

    /**
     * The target as its service runs it: {@code --config config}, the management API on {@code
     * dir/run/rpc.sock} (see {@link #managementSocket}), its changes kept in {@code dir/state};
     * returns once the API serves.
     */
    static TargetProcess startManaged(Path dir, Path config) throws Exception {
        TargetProcess t = start(Fabric.TCP, dir, "--config", config.toString(), "--rpc-socket",
                managementSocket(dir).toString(), "--state-dir", dir.resolve("state").toString());
        t.await("the management API", () -> t.out().contains("management API on"));
        return t;
    }

    /** Where {@link #startManaged} serves the management API. */
    static Path managementSocket(Path dir) {
        return dir.resolve("run/rpc.sock");
    }

    /** {@link #start} with JVM flags in front of the jar. */
    static TargetProcess startWith(List<String> jvmFlags, Fabric fabric, Path dir, String... args)
            throws IOException, InterruptedException {
        return startWith(jvmFlags, Map.of(), fabric, dir, args);
    }

    /** {@link #start} with JVM flags and environment variables. */
    static TargetProcess startWith(List<String> jvmFlags, Map<String, String> env, Fabric fabric, Path dir, String... args)
            throws IOException, InterruptedException {
        return startIn(List.of(), jvmFlags, env, fabric, dir, args);
    }

    /**
     * {@link #start} with JVM flags and environment variables, the command run by {@code launcher}
     * ({@code ip netns exec NS}: in a network namespace; it must exec the command, so that the
     * process this object signals is the target's).
     */
    static TargetProcess startIn(List<String> launcher, List<String> jvmFlags, Map<String, String> env, Fabric fabric,
            Path dir, String... args) throws IOException, InterruptedException {
        assertTrue(Files.isRegularFile(JAR), "the CLI jar must be built first: " + JAR);
        List<String> cmd = new ArrayList<>(launcher);
        cmd.addAll(javaWith(jvmFlags, "target"));
        cmd.addAll(List.of(args));
        if (String.join(" ", args).contains(fabric.trtype + "://")) {
            cmd.addAll(fabric.targetFlags());
        }
        Path out = Files.createTempFile(dir, "target", ".out");
        Path err = Files.createTempFile(dir, "target", ".err");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        AtomicReference<Matcher> listening = new AtomicReference<>();
        try {
            // ends at the line that names the port, or at once if the process exits first
            Awaitility.await("the target's port").atMost(PATIENCE).pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(50)).until(() -> {
                        Matcher m = LISTENING.matcher(Files.readString(out));
                        if (m.find()) {
                            listening.set(m);
                            return true;
                        }
                        return !p.isAlive();
                    });
        } catch (ConditionTimeoutException e) {
            p.destroyForcibly();
            throw new IOException("target did not start within " + PATIENCE.toSeconds() + " s: " + Files.readString(err));
        }
        if (listening.get() == null) {
            throw new IOException("target exited with " + p.waitFor() + ": " + Files.readString(err));
        }
        return new TargetProcess(fabric, p, out, err, Integer.parseInt(listening.get().group(2)));
    }

    String uri(String nqn) {
        return fabric.uri(port, nqn);
    }

    /** The URI of namespace {@code nsid} of {@code nqn}. */
    String uri(String nqn, int nsid) {
        String u = uri(nqn);
        return u + (u.contains("?") ? "&" : "?") + "nsid=" + nsid;
    }

    /** SIGTERM, then the exit code (the target shuts down in order and exits 0). */
    int stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor();
            return -1;
        }
        return process.exitValue();
    }

    /** Sends {@code signal} ({@code KILL}, {@code STOP}, {@code CONT}) to the target process. */
    void signal(String signal) throws IOException, InterruptedException {
        Process k = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).redirectErrorStream(true).start();
        if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) {
            throw new IOException("kill -" + signal + " " + process.pid() + " failed");
        }
        if (signal.equals("KILL")) {
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** Whether the target process still runs. */
    boolean isAlive() {
        return process.isAlive();
    }

    String out() throws IOException {
        return Files.readString(stdout);
    }

    String err() throws IOException {
        return Files.readString(stderr);
    }

    /** Netty's paranoid leak detector in the target process reported nothing. */
    void assertNoLeaks() throws IOException {
        String e = err();
        assertFalse(e.contains("LEAK:"), "target reported leaked buffers:\n" + e);
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Runs the CLI to completion; returns exit code, stdout and stderr. */
    record Run(int exit, String out, String err) {
        String firstErrLine() {
            return err.lines().findFirst().orElse("");
        }
    }

    static Run cli(long timeoutSeconds, String... args) throws IOException, InterruptedException {
        return cliWith(List.of(), timeoutSeconds, measuredFromTheStart(args));
    }

    /**
     * A bench in a test checks what it does and reports, not how fast: unless the test names a
     * ramp, it measures from its first I/O ({@code --ramp_time=0}) instead of warming up for up
     * to 10 s first. {@link #cliWith} runs the command as given (BenchFeaturesTest checks the
     * default warm-up that way).
     */
    static String[] measuredFromTheStart(String... args) {
        if (args.length == 0 || !args[0].equals("bench")
                || Arrays.stream(args).anyMatch(a -> a.startsWith("--ramp_time") || a.startsWith("--ramp-time"))) {
            return args;
        }
        String[] a = Arrays.copyOf(args, args.length + 1);
        a[args.length] = "--ramp_time=0";
        return a;
    }

    /** {@link #cli} with JVM flags in front of the jar. */
    static Run cliWith(List<String> jvmFlags, long timeoutSeconds, String... args) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(javaWith(jvmFlags, args)).start();
        StringBuilder out = new StringBuilder();
        StringBuilder err = new StringBuilder();
        Thread a = drain(p.getInputStream(), out);
        Thread b = drain(p.getErrorStream(), err);
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor();
            throw new AssertionError("nvmeof " + String.join(" ", args) + " did not finish in " + timeoutSeconds + " s");
        }
        a.join();
        b.join();
        return new Run(p.exitValue(), out.toString(), err.toString());
    }

    private static Thread drain(InputStream in, StringBuilder into) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    synchronized (into) {
                        into.append(line).append('\n');
                    }
                }
            } catch (IOException ignored) {
                // process ended
            }
        });
        t.start();
        return t;
    }
}
