package io.nvmeof.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;

/**
 * Separate machines on one: the network namespaces of {@code test/net/netns-lab.sh} (a cluster
 * network, a host network, each gateway on both), made for a test and removed after it, so that
 * a gateway can be cut from its hosts or from its cluster for real (a link, nothing closed). Every
 * address lives inside these namespaces. Namespaces are named {@code nvmflab<PID>-<name>}; ones left
 * by a process that is gone (a killed run) are removed when the next lab is made.
 */
final class NetnsLab implements AutoCloseable {
    private static final Path SCRIPT = Path.of("..", "test", "net", "netns-lab.sh").toAbsolutePath().normalize();
    private static final Pattern OURS = Pattern.compile("^nvmflab(\\d+)-", Pattern.MULTILINE);

    /** Which of a gateway's two links. */
    enum Link {
        HOSTS("hosts"), CEPH("ceph");

        final String word;

        Link(String word) {
            this.word = word;
        }
    }

    private final String prefix = "nvmflab" + ProcessHandle.current().pid();
    private final Map<String, String> namespaces = new HashMap<>();
    private final Map<String, String> hostAddresses = new HashMap<>();
    private String cephAddress;
    private String hostsAddress;

    private NetnsLab() {
    }

    /** A lab with the cluster's and the hosts' namespaces and one per gateway; skips the test where namespaces cannot be made. */
    static NetnsLab create(String... gateways) throws IOException, InterruptedException {
        String probe = "nvmflab-probe-" + ProcessHandle.current().pid();
        Assumptions.assumeTrue(run("ip", "netns", "add", probe).exit == 0,
                "skipped: network namespaces cannot be made here (needs root)");
        run("ip", "netns", "del", probe);
        removeLeftovers();
        NetnsLab lab = new NetnsLab();
        List<String> cmd = new ArrayList<>(List.of("bash", SCRIPT.toString(), "create", lab.prefix));
        cmd.addAll(List.of(gateways));
        Run r = run(cmd.toArray(String[]::new));
        if (r.exit != 0) {
            lab.close();
            throw new IOException("netns-lab.sh create failed: " + r.output);
        }
        for (String line : r.output.split("\n")) {
            String[] f = line.trim().split(" ");
            switch (f[0]) {
                case "ceph" -> {
                    lab.namespaces.put("ceph", f[1]);
                    lab.cephAddress = f[2];
                }
                case "hosts" -> {
                    lab.namespaces.put("hosts", f[1]);
                    lab.hostsAddress = f[2];
                }
                case "gateway" -> {
                    lab.namespaces.put(f[1], f[2]);
                    lab.hostAddresses.put(f[1], f[4]);
                }
                default -> {
                }
            }
        }
        return lab;
    }

    /** The namespace named {@code name} ({@code ceph}, {@code hosts} or a gateway's name). */
    String ns(String name) {
        return namespaces.get(name);
    }

    /** {@code cmd} run in namespace {@code name}: {@code ip netns exec NS cmd...}. */
    List<String> in(String name, String... cmd) {
        List<String> all = new ArrayList<>(List.of("ip", "netns", "exec", ns(name)));
        all.addAll(List.of(cmd));
        return all;
    }

    /** The hosts' own address on the host network (the hosts' namespace's bridge). */
    String hostsAddress() {
        return hostsAddress;
    }

    /** The cluster's address, where Ceph's monitor listens. */
    String cephAddress() {
        return cephAddress;
    }

    /** Gateway {@code g}'s address on the host network. */
    String hostAddress(String g) {
        return hostAddresses.get(g);
    }

    /** Cuts gateway {@code g}'s link to the hosts or to the cluster: its bridge port goes down, nothing is closed. */
    void cut(String g, Link link) throws IOException, InterruptedException {
        script("cut", g, link.word);
    }

    /** Mends what {@link #cut} cut. */
    void heal(String g, Link link) throws IOException, InterruptedException {
        script("heal", g, link.word);
    }

    private void script(String command, String g, String link) throws IOException, InterruptedException {
        Run r = run("bash", SCRIPT.toString(), command, prefix, g, link);
        if (r.exit != 0) {
            throw new IOException("netns-lab.sh " + command + " " + g + " " + link + " failed: " + r.output);
        }
    }

    private record Run(int exit, String output) {
    }

    private static Run run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", cmd) + " did not finish");
        }
        return new Run(p.exitValue(), out);
    }

    /** Namespaces of labs whose process is gone. */
    private static void removeLeftovers() throws IOException, InterruptedException {
        Matcher m = OURS.matcher(run("ip", "netns", "list").output);
        Set<String> gone = new TreeSet<>();
        while (m.find()) {
            if (ProcessHandle.of(Long.parseLong(m.group(1))).isEmpty()) {
                gone.add("nvmflab" + m.group(1));
            }
        }
        for (String prefix : gone) {
            run("bash", SCRIPT.toString(), "destroy", prefix);
        }
    }

    /** Removes the namespaces (their links go with them); whatever ran in them must have been ended first. */
    @Override
    public void close() throws IOException, InterruptedException {
        run("bash", SCRIPT.toString(), "destroy", prefix);
    }
}
