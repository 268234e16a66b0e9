package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway group on separate machines ({@link GatewayGroupLab}: Ceph, two gateways and the host
 * each in a network namespace of their own, a partition a link cut) with our initiator as the
 * host: one host process writes through both gateways (our multipath) with every write stamped
 * in order ({@code StampWriter}); after each event the writes pause and every block is read back.
 * A block holding an older stamp than the last acknowledged write to it is a write that a gateway
 * which had lost its role landed after the other gateway's. Every event: 0 failed writes at the
 * host, 0 stale blocks, 0 corrupt ones.
 */
class GatewayPartitionTest {
    static final String NQN = "nqn.2026-12.io.nvmeof:gw-netns";
    /** The host's keep-alive: how soon it calls a silent path dead. */
    static final int KEEP_ALIVE_MS = 1000;

    @Test
    void noWriteOfAGatewayThatLostItsRoleLandsAfterTheOtherGatewaysWrites(@TempDir Path dir) throws Exception {
        GatewayGroupLab.run(dir, NQN, (lab, uri) -> HostWriter.start(lab, uri));
    }

    /** The host: {@code StampWriter} in the hosts' namespace, driven by its stdin. */
    static final class HostWriter implements GatewayGroupLab.Host {
        private static final Pattern FIELD = Pattern.compile("(\\w+)=(\\d+)");
        private final Process process;
        private final Writer stdin;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final StringBuilder stderr = new StringBuilder();

        private HostWriter(Process process) {
            this.process = process;
            this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            reader(new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)), true);
            reader(new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8)), false);
        }

        private void reader(BufferedReader in, boolean answers) {
            Thread t = new Thread(() -> {
                try {
                    for (String line; (line = in.readLine()) != null; ) {
                        if (answers) {
                            lines.add(line);
                        } else {
                            synchronized (stderr) {
                                stderr.append(line).append('\n');
                            }
                        }
                    }
                } catch (IOException e) {
                    // the process ended
                }
            });
            t.setDaemon(true);
            t.start();
        }

        static HostWriter start(NetnsLab lab, String uri) throws Exception {
            List<String> cmd = lab.in("hosts", Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Dio.netty.leakDetection.level=paranoid", "-Djava.net.preferIPv4Stack=true", "-Xmx256m", "-cp",
                    TargetProcess.JAR.toString(), "io.nvmeof.tools.harness.StampWriter", uri, "8",
                    Integer.toString(KEEP_ALIVE_MS));
            HostWriter w = new HostWriter(new ProcessBuilder(cmd).start());
            String first = w.next(Duration.ofSeconds(60));
            assertTrue(first != null && first.startsWith("WRITING"), "the writer did not start: " + first + "\n" + w.stderr());
            return w;
        }

        private String next(Duration within) throws InterruptedException {
            return lines.poll(within.toMillis(), TimeUnit.MILLISECONDS);
        }

        String stderr() {
            synchronized (stderr) {
                return stderr.toString();
            }
        }

        /** Sends {@code command}; its answer line. */
        String ask(String command, Duration within) throws Exception {
            stdin.write(command + "\n");
            stdin.flush();
            String answer = next(within);
            assertTrue(answer != null, "the writer did not answer '" + command + "' within " + within + ":\n" + stderr());
            return answer;
        }

        static long field(String line, String name) {
            Matcher m = FIELD.matcher(line);
            while (m.find()) {
                if (m.group(1).equals(name)) {
                    return Long.parseLong(m.group(2));
                }
            }
            throw new AssertionError("no " + name + " in: " + line);
        }

        /**
         * Pauses the writes (waiting out those in flight), reads every block back and holds the
         * result to 0 failed writes, 0 stale and 0 corrupt blocks; then writes again.
         */
        @Override
        public void checkpoint(String after, List<String> timings) throws Exception {
            String paused = ask("pause", Duration.ofSeconds(150));
            assertTrue(paused.startsWith("PAUSED writes="), after + ": " + paused + "\n" + stderr());
            String verified = ask("verify", Duration.ofSeconds(60));
            timings.add(after + ": " + paused + "; " + verified);
            assertEquals(0, field(paused, "errors"), after + ": the host saw a write fail: " + paused + "\n" + stderr());
            assertEquals(0, field(verified, "stale"), after + ": " + verified + "\n" + stderr());
            assertEquals(0, field(verified, "corrupt"), after + ": " + verified + "\n" + stderr());
            assertEquals("RESUMED", ask("resume", Duration.ofSeconds(10)));
        }

        @Override
        public void finish() throws Exception {
            stdin.write("quit\n");
            stdin.flush();
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the writer did not quit");
            assertEquals(0, process.exitValue(), stderr());
            assertTrue(!stderr().contains("LEAK:"), "the host leaked buffers:\n" + stderr());
        }

        @Override
        public void close() throws Exception {
            if (process.isAlive()) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
