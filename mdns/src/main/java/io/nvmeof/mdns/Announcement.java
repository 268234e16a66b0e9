package io.nvmeof.mdns;

import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * A discovery controller as DNS-SD announces it (TP8009, "Discovery of Discovery Controllers
 * using DNS-SD"): service {@code _nvme-disc._tcp} (NVMe/TCP) or {@code _nvme-disc._udp}
 * (NVMe/RDMA over RoCEv2), an instance name, the address and port of its SRV and A records, and
 * two TXT keys: {@code nqn}, the discovery subsystem's NQN, and {@code p}, the transport
 * ({@code tcp}, or {@code roce} for RDMA). Keys are read without regard to case and a value that
 * holds a second {@code =} is ignored, as nvme-stas reads them.
 *
 * @param instance the DNS-SD instance name
 * @param trtype   {@code tcp} or {@code rdma}
 * @param address  where the discovery controller listens (an IP address)
 * @param port     its TCP port (or RDMA CM port)
 * @param nqn      the discovery subsystem's NQN
 */
public record Announcement(String instance, String trtype, String address, int port, String nqn) {
    /** DNS-SD service type of a discovery controller over NVMe/TCP. */
    public static final String SERVICE_TCP = "_nvme-disc._tcp.local.";
    /** DNS-SD service type of a discovery controller over NVMe/RDMA (RoCEv2 runs over UDP). */
    public static final String SERVICE_UDP = "_nvme-disc._udp.local.";
    /** TXT key: the discovery subsystem's NQN. */
    public static final String TXT_NQN = "nqn";
    /** TXT key: the transport protocol. */
    public static final String TXT_PROTOCOL = "p";

    /** The service type for {@code trtype}. */
    public static String serviceType(String trtype) {
        return "rdma".equals(trtype) ? SERVICE_UDP : SERVICE_TCP;
    }

    /** The TXT record for this announcement. */
    public Map<String, String> txt() {
        Map<String, String> t = new TreeMap<>();
        t.put(TXT_NQN, nqn);
        t.put(TXT_PROTOCOL, "rdma".equals(trtype) ? "roce" : "tcp");
        return t;
    }

    /**
     * The transport a TXT {@code p} value names ({@code tcp}; {@code roce}, {@code iwarp} or
     * {@code rdma} are NVMe/RDMA), or null for one we do not speak.
     */
    public static String trtypeOf(String p) {
        if (p == null) {
            return null;
        }
        return switch (p.toLowerCase(Locale.ROOT)) {
            case "tcp" -> "tcp";
            case "roce", "iwarp", "rdma" -> "rdma";
            default -> null;
        };
    }

    /**
     * Reads TXT key/value pairs as nvme-stas does: keys without regard to case, a value with
     * a second {@code =} dropped.
     */
    public static Map<String, String> readTxt(Map<String, String> raw) {
        Map<String, String> t = new TreeMap<>();
        raw.forEach((k, v) -> {
            if (k != null && v != null && !v.contains("=")) {
                t.put(k.toLowerCase(Locale.ROOT), v);
            }
        });
        return t;
    }

    /** The discovery service as the CLI and {@code Nvmeof.discover} take it. */
    public String uri() {
        String host = address.contains(":") ? "[" + address + "]" : address;
        return "nvme+" + trtype + "://" + host + ":" + port;
    }
}
