package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Zero-touch discovery over mDNS/DNS-SD (TP8009) between separate machines on one: a target in
 * one network namespace announces its two ports ({@code --mdns}); in the hosts' namespace, our
 * {@code nvmeof discover --mdns}, python3-zeroconf and Avahi's {@code avahi-browse} (a private
 * avahi-daemon there) each find both with their TXT records, and ours reads the logs; an
 * {@code avahi-publish}ed discovery controller (how SPDK's {@code nvmf_publish_mdns_prr}
 * publishes, through Avahi) is found by ours from the target's namespace; a target that stops
 * withdraws its announcements. A peer tool that is not installed is skipped with a message.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class MdnsDiscoveryTest {
    static final String NQN = "nqn.2026-12.io.nvmeof:mdns-vol";
    static final Path SCRIPTS = Path.of("..", "test", "mdns").toAbsolutePath().normalize();
    static final String PYTHON = "/usr/bin/python3";

    record Out(int exit, String out, String err) {
    }

    static Out run(List<String> cmd, Map<String, String> env, long seconds) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().putAll(env);
        Path o = Files.createTempFile("mdns", ".out");
        Path e = Files.createTempFile("mdns", ".err");
        Process p = pb.redirectOutput(o.toFile()).redirectError(e.toFile()).start();
        try {
            if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor();
            }
            return new Out(p.exitValue(), Files.readString(o), Files.readString(e));
        } finally {
            Files.deleteIfExists(o);
            Files.deleteIfExists(e);
        }
    }

    /** {@code nvmeof ARGS} in the lab's namespace {@code where}. */
    static Out nvmeof(NetnsLab lab, String where, String... args) throws IOException, InterruptedException {
        return run(lab.in(where, TargetProcess.java(args).toArray(String[]::new)), Map.of(), 90);
    }

    static boolean zeroconf() throws IOException, InterruptedException {
        return Files.isExecutable(Path.of(PYTHON)) && run(List.of(PYTHON, "-c", "import zeroconf"), Map.of(), 30).exit() == 0;
    }

    /** How many lines of {@code file} start with {@code prefix}. */
    static long lines(Path file, String prefix) throws IOException {
        return Files.readAllLines(file).stream().filter(l -> l.startsWith(prefix)).count();
    }

    static boolean avahi() {
        return List.of("/usr/sbin/avahi-daemon", "/usr/bin/avahi-browse", "/usr/bin/avahi-publish", "/usr/bin/dbus-daemon")
                .stream().allMatch(f -> Files.isExecutable(Path.of(f)));
    }

    @Test
    void announcedPortsAreFoundByAvahiZeroconfAndOursAndWithdrawnAtTheEnd(@TempDir Path dir) throws Exception {
        try (NetnsLab lab = NetnsLab.create("t1")) {
            String addr = lab.hostAddress("t1");
            TargetProcess t = TargetProcess.startIn(List.of("ip", "netns", "exec", lab.ns("t1")), List.of(), Map.of(),
                    Fabric.TCP, dir, "--listen", "tcp://" + addr + ":4420", "--subsystem", NQN, "--namespace", "null:64M",
                    "--discovery", "tcp://" + addr + ":8009", "--mdns");
            Path avahiDir = dir.resolve("avahi");
            boolean avahiStarted = false;
            try {
                t.await("both ports announced", () -> t.out().split("announced over mDNS", -1).length == 3);
                // ours, from the hosts' namespace: both services, and the logs read through them
                Out ours = nvmeof(lab, "hosts", "discover", "--mdns", "--mdns-wait", "3", "-o", "json");
                assertEquals(0, ours.exit(), ours.out() + ours.err() + t.out());
                TreeSet<String> uris = new TreeSet<>();
                for (JsonNode n : new ObjectMapper().readTree(ours.out())) {
                    uris.add(n.path("uri").asText());
                    assertEquals("nqn.2014-08.org.nvmexpress.discovery", n.path("nqn").asText());
                    assertTrue(n.path("log").path("records").toString().contains(NQN), n.toString());
                }
                assertEquals(new TreeSet<>(List.of("nvme+tcp://" + addr + ":4420", "nvme+tcp://" + addr + ":8009")), uris);
                // python3-zeroconf
                if (zeroconf()) {
                    Out z = run(lab.in("hosts", PYTHON, SCRIPTS.resolve("zeroconf-browse.py").toString(), "3"), Map.of(), 60);
                    assertEquals(0, z.exit(), z.err());
                    for (int port : new int[] {4420, 8009}) {
                        assertTrue(z.out().contains("_nvme-disc._tcp.local.|") && z.out().contains("|" + addr + "|" + port
                                + "|nqn=nqn.2014-08.org.nvmexpress.discovery,p=tcp"), z.out());
                    }
                } else {
                    System.out.println("MdnsDiscoveryTest: python3-zeroconf SKIPPED: not installed (apt-get install python3-zeroconf)");
                }
                // Avahi: a private avahi-daemon in the hosts' namespace
                if (avahi()) {
                    Out started = run(List.of("bash", SCRIPTS.resolve("avahi-in-netns.sh").toString(), "start", lab.ns("hosts"),
                            avahiDir.toString()), Map.of(), 60);
                    assertEquals(0, started.exit(), started.err());
                    avahiStarted = true;
                    Map<String, String> bus = Map.of("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=" + avahiDir.resolve("bus"));
                    Out browse = run(lab.in("hosts", "avahi-browse", "-rpt", "_nvme-disc._tcp"), bus, 60);
                    assertEquals(0, browse.exit(), browse.err());
                    for (int port : new int[] {4420, 8009}) {
                        assertTrue(browse.out().lines().anyMatch(l -> l.startsWith("=;") && l.contains(";" + addr + ";" + port + ";")
                                && l.contains("\"p=tcp\"") && l.contains("\"nqn=nqn.2014-08.org.nvmexpress.discovery\"")),
                                browse.out());
                    }
                    // a discovery controller published through Avahi, as SPDK publishes, found by ours across the link
                    List<String> publish = lab.in("hosts", "avahi-publish", "-s", "peer0", "_nvme-disc._tcp", "8009", "p=tcp",
                            "nqn=nqn.2014-08.org.nvmexpress.discovery");
                    ProcessBuilder pb = new ProcessBuilder(publish).redirectErrorStream(true)
                            .redirectOutput(dir.resolve("publish.log").toFile());
                    pb.environment().putAll(bus);
                    Process pub = pb.start();
                    try {
                        org.awaitility.Awaitility.await("avahi-publish").atMost(java.time.Duration.ofSeconds(30)).until(
                                () -> Files.readString(dir.resolve("publish.log")).contains("Established"));
                        Out fromTarget = nvmeof(lab, "t1", "discover", "--mdns", "--mdns-wait", "3");
                        assertTrue(fromTarget.out().contains("mDNS service 'peer0' at nvme+tcp://" + lab.hostsAddress() + ":8009"),
                                fromTarget.out() + fromTarget.err());
                    } finally {
                        pub.destroy();
                        pub.waitFor(10, TimeUnit.SECONDS);
                    }
                } else {
                    System.out.println("MdnsDiscoveryTest: Avahi SKIPPED: avahi-daemon, avahi-utils or dbus not installed");
                }
                // stopped in order: every announcement withdrawn with a goodbye, which a browser already
                // watching sees at once (without one, its records would stay their TTL: minutes)
                Process watcher = null;
                Path watched = dir.resolve("watch.log");
                if (zeroconf()) {
                    watcher = new ProcessBuilder(lab.in("hosts", PYTHON, SCRIPTS.resolve("zeroconf-browse.py").toString(),
                            "--watch", "60")).redirectErrorStream(true).redirectOutput(watched.toFile()).start();
                    org.awaitility.Awaitility.await("zeroconf sees both").atMost(java.time.Duration.ofSeconds(30)).until(
                            () -> lines(watched, "add ") >= 2);
                }
                assertEquals(0, t.stop());
                try {
                    if (watcher != null) {
                        org.awaitility.Awaitility.await("goodbyes seen").atMost(java.time.Duration.ofSeconds(15)).until(
                                () -> lines(watched, "remove ") >= 2);
                    } else {
                        System.out.println("MdnsDiscoveryTest: the goodbye's check SKIPPED: python3-zeroconf not installed");
                    }
                } finally {
                    if (watcher != null) {
                        watcher.destroy();
                        watcher.waitFor(10, TimeUnit.SECONDS);
                    }
                }
                Out after = nvmeof(lab, "hosts", "discover", "--mdns", "--mdns-wait", "3", "-o", "json");
                assertEquals(1, after.exit(), after.out() + after.err());
                assertEquals("[]", after.out().replaceAll("\\s", ""), after.err());
                t.assertNoLeaks();
            } finally {
                t.close();
                if (avahiStarted) {
                    run(List.of("bash", SCRIPTS.resolve("avahi-in-netns.sh").toString(), "stop", avahiDir.toString()), Map.of(), 30);
                }
            }
        }
    }
}
