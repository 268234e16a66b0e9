package io.nvmeof.daemon;

import io.nvmeof.fabric.Failures;
import io.nvmeof.mdns.Announcement;
import io.nvmeof.mdns.MdnsAnnouncer;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.target.Port;
import io.nvmeof.target.Target;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Keeps the mDNS/DNS-SD announcements (TP8009) of the ports whose configuration says {@code mdns}
 * in step with what listens: each second, the ports to announce are compared with what is
 * announced, and announcements come and go with ports, reloads and the management API; all are
 * withdrawn (a goodbye each) at shutdown. A port on a specific address is announced there; one on
 * every address, on each up, multicast-capable IPv4 interface. On a thread of its own.
 */
final class MdnsAnnouncements extends BackgroundWork {
    private final Target target;
    private final Supplier<Set<Integer>> portsToAnnounce;
    private final MdnsAnnouncer announcer = new MdnsAnnouncer();
    private final Set<String> failed = new HashSet<>();
    /** This machine's name for the instance names, looked up once, on this work's thread (a lookup may wait on DNS). */
    private String host;

    MdnsAnnouncements(Target target, Supplier<Set<Integer>> portsToAnnounce, PrintWriter out) {
        super("mdns-announce", out);
        this.target = target;
        this.portsToAnnounce = portsToAnnounce;
        every(1000, this::sync);
    }

    /** What should be announced now. */
    private Set<Announcement> wanted() throws IOException {
        Set<Integer> ids = portsToAnnounce.get();
        if (host == null) {
            String name = localHostName();
            host = name.isEmpty() ? "localhost" : name;
        }
        Set<Announcement> want = new HashSet<>();
        for (Port p : target.ports()) {
            if (!ids.contains(p.id()) || p.bound() == null) {
                continue;
            }
            String instance = "nvmeof " + host + " port " + p.id();
            if (!p.wildcard()) {
                want.add(new Announcement(instance, p.trtype(), p.bound().getAddress().getHostAddress(), p.bound().getPort(),
                        Nqn.DISCOVERY));
                continue;
            }
            for (NetworkInterface n : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                if (n.isUp() && n.supportsMulticast()) {
                    for (InetAddress a : Collections.list(n.getInetAddresses())) {
                        if (a instanceof Inet4Address) {
                            want.add(new Announcement(instance, p.trtype(), a.getHostAddress(), p.bound().getPort(),
                                    Nqn.DISCOVERY));
                        }
                    }
                }
            }
        }
        return want;
    }

    private void sync() {
        try {
            Set<Announcement> want = wanted();
            Set<Announcement> have = announcer.announced();
            for (Announcement a : have) {
                if (!want.contains(a)) {
                    announcer.withdraw(a);
                    say("nvmeof target: mDNS announcement withdrawn: " + a.uri());
                }
            }
            for (Announcement a : want) {
                if (have.contains(a)) {
                    continue;
                }
                try {
                    announcer.announce(a);
                    failed.remove(a.uri());
                    say("nvmeof target: announced over mDNS as " + Announcement.serviceType(a.trtype()) + " '"
                            + a.instance() + "': " + a.uri());
                } catch (IOException | RuntimeException e) {
                    if (failed.add(a.uri())) {
                        say("nvmeof target: cannot announce " + a.uri() + " over mDNS: " + Failures.describe(e));
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            warn("mDNS announcements: " + Failures.describe(e));
        }
    }

    /** Withdraws every announcement (goodbye packets). */
    @Override
    void finish() {
        try {
            announcer.close();
        } catch (IOException | RuntimeException e) {
            warn("mDNS: " + Failures.describe(e));
        }
    }

    /** {@link #finish}, for at most 15 s. */
    @Override
    public void close() {
        close(15);
    }
}
