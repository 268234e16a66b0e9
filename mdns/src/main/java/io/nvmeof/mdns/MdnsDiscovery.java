package io.nvmeof.mdns;

import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Discovery;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.protocol.Nqn;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.jmdns.JmDNS;
import javax.jmdns.ServiceInfo;

/**
 * The host side of zero-touch discovery (TP8009): finds the discovery controllers announced over
 * mDNS/DNS-SD on the links of this machine, and reads each one's discovery log. This is what
 * {@code nvmeof discover --mdns} prints; it is its own module, so that the initiator takes no
 * mDNS dependency (an application adds {@code nvmeof-mdns} for it).
 */
public final class MdnsDiscovery {
    private MdnsDiscovery() {
    }

    /** A discovery controller found, with its log (or why it could not be read). */
    public record Found(Announcement announcement, Discovery.Log log, String error) {
    }

    /** The most announcements one browse keeps: a link full of them (a hostile one) makes no endless list. */
    public static final int MOST = 256;

    /**
     * The discovery controllers announced on every up, multicast-capable IPv4 interface (the
     * loopback one too, where it takes multicast), listening for {@code wait}; each once, in the
     * order found, at most {@link #MOST}; an announcement whose NQN or port is not valid is not one.
     */
    public static List<Announcement> browse(Duration wait) throws IOException {
        return browse(wait, localAddresses());
    }

    /** {@link #browse(Duration)} on the given local addresses only. */
    public static List<Announcement> browse(Duration wait, List<InetAddress> on) throws IOException {
        if (on.isEmpty()) {
            return List.of();
        }
        List<String> types = List.of(Announcement.SERVICE_TCP, Announcement.SERVICE_UDP);
        ExecutorService pool = Executors.newFixedThreadPool(on.size() * types.size(), r -> {
            Thread t = new Thread(r, "mdns-browse");
            t.setDaemon(true);
            return t;
        });
        try {
            // every address and service type at once: the whole browse takes {@code wait}
            List<Future<List<Announcement>>> each = new ArrayList<>();
            for (InetAddress a : on) {
                for (String type : types) {
                    each.add(pool.submit(() -> browseOn(a, type, wait)));
                }
            }
            Set<Announcement> all = new LinkedHashSet<>();
            for (Future<List<Announcement>> f : each) {
                try {
                    for (Announcement found : f.get()) {
                        if (all.size() < MOST) {
                            all.add(found);
                        }
                    }
                } catch (java.util.concurrent.ExecutionException e) {
                    // an interface that cannot take a responder (gone, no multicast) finds nothing
                }
            }
            return List.copyOf(all);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while browsing mDNS", e);
        } finally {
            pool.shutdownNow();
        }
    }

    private static List<Announcement> browseOn(InetAddress a, String type, Duration wait) throws IOException {
        List<Announcement> out = new ArrayList<>();
        try (JmDNS j = JmDNS.create(a, "nvmeof-browse-" + ProcessHandle.current().pid())) {
            for (ServiceInfo s : j.list(type, wait.toMillis())) {
                Map<String, String> raw = new LinkedHashMap<>();
                for (String k : Collections.list(s.getPropertyNames())) {
                    raw.put(k, s.getPropertyString(k));
                }
                Map<String, String> txt = Announcement.readTxt(raw);
                String trtype = Announcement.trtypeOf(txt.get(Announcement.TXT_PROTOCOL));
                String nqn = txt.get(Announcement.TXT_NQN);
                if (trtype == null || nqn == null || Nqn.problem(nqn) != null || s.getPort() <= 0 || s.getPort() > 0xffff) {
                    continue; // not an NVMe discovery controller's announcement: anyone on the link may send one
                }
                for (Inet4Address addr : s.getInet4Addresses()) {
                    out.add(new Announcement(s.getName(), trtype, addr.getHostAddress(), s.getPort(), nqn));
                }
            }
        }
        return out;
    }

    /** Browses for {@code wait}, then reads the discovery log of each controller found. */
    public static List<Found> discover(Duration wait, ConnectOptions options) throws IOException {
        List<Found> out = new ArrayList<>();
        for (Announcement a : browse(wait)) {
            try {
                Discovery.Log log;
                if (a.nqn().equals(Nqn.DISCOVERY)) {
                    log = Nvmeof.discover(a.uri(), options);
                } else { // a unique discovery NQN (TP8013)
                    try (Controller c = Nvmeof.connect(a.uri() + "/" + a.nqn(), options)) {
                        log = Discovery.read(c);
                    }
                }
                out.add(new Found(a, log, null));
            } catch (IOException | RuntimeException e) {
                out.add(new Found(a, null, e.getMessage() == null ? e.toString() : e.getMessage()));
            }
        }
        return out;
    }

    /** Up, multicast-capable interfaces' IPv4 addresses. */
    static List<InetAddress> localAddresses() throws SocketException {
        List<InetAddress> out = new ArrayList<>();
        for (NetworkInterface n : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (!n.isUp() || !n.supportsMulticast()) {
                continue;
            }
            for (InetAddress a : Collections.list(n.getInetAddresses())) {
                if (a instanceof Inet4Address) {
                    out.add(a);
                }
            }
        }
        return out;
    }
}
