package io.nvmeof.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;

/**
 * Separate machines on one: network namespaces this test makes and removes, so that a gateway,
 * its cluster and its hosts are on networks of their own and a partition is real (a link cut,
 * nothing closed). Every address lives inside these namespaces; the test's own namespace gets
 * none and routes nothing.
 *
 * <pre>
 *   ceph namespace: bridge br0 10.77.0.1/24  (the cluster network; Ceph's monitor and OSD)
 *   hosts namespace: bridge br0 10.78.0.1/24 (the host network; hosts run here)
 *   gateway i: c0 10.77.0.(11+i) on the cluster bridge, h0 10.78.0.(11+i) on the host bridge
 * </pre>
 *
 * A gateway cut from the hosts or from the cluster has its bridge port set down on that side:
 * its sockets stay open and its packets go nowhere, until {@link #heal}. Namespaces are named
 * {@code nvmflab<PID>-<name>}; ones left by a process that is gone (a killed run) are removed
 * when the next lab is made.
 */
final class NetnsLab implements AutoCloseable {
    static final String CEPH_ADDRESS = "10.77.0.1";
    private static final Pattern OURS = Pattern.compile("^(nvmflab(\\d+)-\\S+)", Pattern.MULTILINE);

    /** Which of a gateway's two links. */
    enum Link {
        HOSTS("h"), CEPH("c");

        final String tag;

        Link(String tag) {
            this.tag = tag;
        }
    }

    private final String prefix = "nvmflab" + ProcessHandle.current().pid() + "-";
    private final List<String> gateways;
    private final List<String> made = new ArrayList<>();

    private NetnsLab(List<String> gateways) {
        this.gateways = gateways;
    }

    /** A lab with the cluster's and the hosts' namespaces and one per gateway; skips the test where namespaces cannot be made. */
    static NetnsLab create(String... gateways) throws IOException, InterruptedException {
        Assumptions.assumeTrue(ip(false, "netns", "add", "nvmflab-probe-" + ProcessHandle.current().pid()) == 0,
                "skipped: network namespaces cannot be made here (needs root)");
        ip(true, "netns", "del", "nvmflab-probe-" + ProcessHandle.current().pid());
        removeLeftovers();
        NetnsLab lab = new NetnsLab(List.of(gateways));
        try {
            lab.build();
        } catch (IOException | RuntimeException e) {
            lab.close();
            throw e;
        }
        return lab;
    }

    private void build() throws IOException, InterruptedException {
        bridge("ceph", CEPH_ADDRESS);
        bridge("hosts", "10.78.0.1");
        for (int i = 0; i < gateways.size(); i++) {
            String g = gateways.get(i);
            add(g);
            veth(g, "c0", "ceph", g + "-c", "10.77.0." + (11 + i));
            veth(g, "h0", "hosts", g + "-h", hostAddress(g));
        }
    }

    /** The namespace named {@code name} ({@code ceph}, {@code hosts} or a gateway's name). */
    String ns(String name) {
        return prefix + name;
    }

    /** {@code cmd} run in namespace {@code name}: {@code ip netns exec NS cmd...}. */
    List<String> in(String name, String... cmd) {
        List<String> all = new ArrayList<>(List.of("ip", "netns", "exec", ns(name)));
        all.addAll(List.of(cmd));
        return all;
    }

    /** Gateway {@code g}'s address on the host network. */
    String hostAddress(String g) {
        return "10.78.0." + (11 + gateways.indexOf(g));
    }

    /** Cuts gateway {@code g}'s link to the hosts or to the cluster: its bridge port goes down, nothing is closed. */
    void cut(String g, Link link) throws IOException, InterruptedException {
        must("-n", side(link), "link", "set", "dev", g + "-" + link.tag, "down");
    }

    /** Mends what {@link #cut} cut. */
    void heal(String g, Link link) throws IOException, InterruptedException {
        must("-n", side(link), "link", "set", "dev", g + "-" + link.tag, "up");
    }

    private String side(Link link) {
        return ns(link == Link.HOSTS ? "hosts" : "ceph");
    }

    private void bridge(String name, String address) throws IOException, InterruptedException {
        add(name);
        mustIn(name, "link", "add", "br0", "type", "bridge");
        mustIn(name, "addr", "add", address + "/24", "dev", "br0");
        mustIn(name, "link", "set", "br0", "up");
    }

    private void add(String name) throws IOException, InterruptedException {
        must("netns", "add", ns(name));
        made.add(ns(name));
        mustIn(name, "link", "set", "lo", "up");
    }

    /** A veth pair: {@code inner} in gateway {@code g}'s namespace with {@code address}, {@code port} on {@code bridgeNs}'s bridge. */
    private void veth(String g, String inner, String bridgeNs, String port, String address)
            throws IOException, InterruptedException {
        must("link", "add", inner, "netns", ns(g), "type", "veth", "peer", "name", port, "netns", ns(bridgeNs));
        mustIn(bridgeNs, "link", "set", port, "master", "br0", "up");
        mustIn(g, "addr", "add", address + "/24", "dev", inner);
        mustIn(g, "link", "set", inner, "up");
    }

    private void mustIn(String name, String... args) throws IOException, InterruptedException {
        List<String> all = new ArrayList<>(List.of("-n", ns(name)));
        all.addAll(List.of(args));
        must(all.toArray(String[]::new));
    }

    private static void must(String... args) throws IOException, InterruptedException {
        if (ip(true, args) != 0) {
            throw new IOException("ip " + String.join(" ", args) + " failed");
        }
    }

    private static int ip(boolean show, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("ip"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("ip " + String.join(" ", args) + " did not finish");
        }
        if (show && p.exitValue() != 0) {
            System.err.println("ip " + String.join(" ", args) + ": " + out.strip());
        }
        return p.exitValue();
    }

    /** Namespaces of labs whose process is gone. */
    private static void removeLeftovers() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("ip", "netns", "list").redirectErrorStream(true).start();
        String list = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(20, TimeUnit.SECONDS);
        Matcher m = OURS.matcher(list);
        while (m.find()) {
            if (ProcessHandle.of(Long.parseLong(m.group(2))).isEmpty()) {
                ip(true, "netns", "del", m.group(1));
            }
        }
    }

    /** Removes the namespaces (their links go with them); whatever ran in them must have been ended first. */
    @Override
    public void close() throws IOException, InterruptedException {
        for (int i = made.size() - 1; i >= 0; i--) {
            ip(true, "netns", "del", made.get(i));
        }
        made.clear();
    }
}
