package io.nvmeof.mdns;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;
import javax.jmdns.JmDNS;
import javax.jmdns.ServiceInfo;
import javax.jmdns.impl.ServiceInfoImpl;

/**
 * Announces discovery controllers over mDNS/DNS-SD (TP8009): one responder per local address it
 * announces on, each announcement registered there (and answered, re-announced and withdrawn
 * with a goodbye by JmDNS as RFC 6762 says). Thread-safe.
 */
public final class MdnsAnnouncer implements Closeable {
    private final Map<InetAddress, JmDNS> responders = new HashMap<>();
    private final Map<Announcement, ServiceInfo> announced = new HashMap<>();

    /** How long an announcement may take: probing (RFC 6762, 8.1) and the first announcement. */
    static final long ANNOUNCE_TIMEOUT_MILLIS = 15_000;

    /**
     * Announces {@code a} on the local address {@code a.address()}, and returns once the name is
     * probed and the records sent (hosts may not see it before), or throws if that did not
     * happen in time.
     */
    public synchronized void announce(Announcement a) throws IOException {
        if (announced.containsKey(a)) {
            return;
        }
        InetAddress on = InetAddress.getByName(a.address());
        JmDNS responder = responders.get(on);
        if (responder == null) {
            responder = JmDNS.create(on, "nvmeof-" + on.getHostAddress().replace(':', '-').replace('.', '-'));
            responders.put(on, responder);
        }
        ServiceInfo info = ServiceInfo.create(Announcement.serviceType(a.trtype()), a.instance(), a.port(), 0, 0, a.txt());
        responder.registerService(info);
        announced.put(a, info);
        if (info instanceof ServiceInfoImpl impl && !impl.waitForAnnounced(ANNOUNCE_TIMEOUT_MILLIS)) {
            withdraw(a); // not counted as announced: the next try starts it anew
            throw new IOException("mDNS: " + a.instance() + " was not announced within " + ANNOUNCE_TIMEOUT_MILLIS + " ms");
        }
    }

    /** Withdraws {@code a} (a goodbye packet); closes its responder when it announces nothing more. */
    public synchronized void withdraw(Announcement a) throws IOException {
        ServiceInfo info = announced.remove(a);
        if (info == null) {
            return;
        }
        InetAddress on = InetAddress.getByName(a.address());
        JmDNS responder = responders.get(on);
        if (responder != null) {
            responder.unregisterService(info);
            if (announced.keySet().stream().noneMatch(x -> x.address().equals(a.address()))) {
                responders.remove(on).close();
            }
        }
    }

    /** What is announced now. */
    public synchronized java.util.Set<Announcement> announced() {
        return java.util.Set.copyOf(announced.keySet());
    }

    /** Withdraws everything and closes the responders. */
    @Override
    public synchronized void close() throws IOException {
        IOException first = null;
        for (JmDNS r : responders.values()) {
            try {
                r.unregisterAllServices();
                r.close();
            } catch (IOException e) {
                first = first == null ? e : first;
            }
        }
        responders.clear();
        announced.clear();
        if (first != null) {
            throw first;
        }
    }
}
