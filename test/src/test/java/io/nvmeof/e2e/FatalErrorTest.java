package io.nvmeof.e2e;

import io.nvmeof.target.Settings;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.target.Fatal;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.FailingReads;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A {@link VirtualMachineError} on the I/O path is no NVMe status: a target process set up as
 * the daemon is ({@link Fatal#haltOnFatalErrors}) halts with status 70, so that systemd
 * restarts it, whether the backend ran on the I/O threads (a file) or on an event loop, whose
 * own loop would catch and log it (RAM). The process is a real JVM serving NVMe/TCP; the error
 * is an {@link OutOfMemoryError} its backend throws on a read.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FatalErrorTest {
    private static final Pattern PORT = Pattern.compile("PORT (\\d+)");

    @TempDir
    Path dir;

    @ParameterizedTest(name = "blocking backend: {0}")
    @ValueSource(booleans = {true, false})
    void anOutOfMemoryErrorInABackendEndsTheProcessWithANonZeroStatus(boolean blocking) throws Exception {
        Path out = dir.resolve("out");
        Path err = dir.resolve("err");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dio.netty.leakDetection.level=paranoid", "-cp", System.getProperty("java.class.path"),
                Daemon.class.getName(), Boolean.toString(blocking))
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        try {
            await("the daemon's port").atMost(TargetProcess.PATIENCE)
                    .failFast("the daemon exited: " + err, () -> !p.isAlive())
                    .until(() -> PORT.matcher(Files.readString(out)).find());
            Matcher m = PORT.matcher(Files.readString(out));
            assertTrue(m.find(), "the daemon started: " + Files.readString(err));
            int port = Integer.parseInt(m.group(1));
            String uri = "nvme+tcp://127.0.0.1:" + port + "/" + Daemon.NQN;
            try (Controller c = Nvmeof.connect(uri, ConnectOptions.defaults().ioQueues(1)
                    .controllerLossTimeout(Duration.ZERO).commandTimeout(Duration.ofSeconds(20)))) {
                // a write works: only reads fail
                c.namespace(1).write(0, ByteBuffer.allocate(4096));
                assertThrows(IOException.class, () -> c.namespace(1).read(0, ByteBuffer.allocateDirect(4096)),
                        "the read gets no answer: the target is gone");
            } catch (IOException e) {
                // the connection ended with the process
            }
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the process ended");
            assertEquals(Fatal.EXIT_STATUS, p.exitValue(), "exit status; stderr: " + Files.readString(err));
            assertTrue(Files.readString(err).contains("fatal error"), Files.readString(err));
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void theLauncherTurnsAnyOutOfMemoryErrorOfTheJvmIntoAnExit() throws IOException {
        String installed = Files.readString(Path.of("../packaging/src/bin/nvmeof"));
        assertTrue(installed.matches("(?s).*exec \\S*java\"? -XX:\\+ExitOnOutOfMemoryError .*"), installed);
        String checkout = Files.readString(Path.of("../nvmeof"));
        assertTrue(checkout.contains("exec \"$here/packaging/src/bin/nvmeof\""), "./nvmeof runs the installed launcher:\n"
                + checkout);
    }

    /** The target as a daemon sets it up, with a backend whose reads throw {@link OutOfMemoryError}. */
    public static final class Daemon {
        static final String NQN = "nqn.2026-11.io.nvmeof:fatal";

        public static void main(String[] args) throws Exception {
            Fatal.haltOnFatalErrors();
            boolean blocking = Boolean.parseBoolean(args[0]);
            Target.Options o = Target.Options.defaults();
            o = o.with(Settings.EVENT_LOOP_THREADS, 1);
            Target target = new Target(o);
            Subsystem s = new Subsystem(NQN, "FATAL1", "fatal", "1.0");
            s.addNamespace(new Namespace(NQN, 1, new FailingReads(16 << 20, blocking,
                    () -> new OutOfMemoryError("injected by the test")), false, null));
            target.addSubsystem(s);
            InetSocketAddress a = target.listenTcp(new InetSocketAddress("127.0.0.1", 0));
            System.out.println("PORT " + a.getPort());
            System.out.flush();
            Thread.currentThread().join(); // serves until the fatal error halts the JVM
        }
    }
}
