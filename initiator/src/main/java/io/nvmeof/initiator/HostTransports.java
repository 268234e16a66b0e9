package io.nvmeof.initiator;

import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The host transports this process knows, by {@code trtype}: those listed as services on the
 * class path, and any registered by hand (a test's fake transport).
 */
final class HostTransports {
    private static final Map<String, HostTransport.Type> TYPES = new ConcurrentHashMap<>();

    static {
        for (HostTransport.Type t : ServiceLoader.load(HostTransport.Type.class, HostTransports.class.getClassLoader())) {
            TYPES.putIfAbsent(t.name(), t);
        }
    }

    private HostTransports() {
    }

    static void register(HostTransport.Type type) {
        TYPES.put(type.name(), type);
    }

    /** The transport of {@code trtype}, or null. */
    static HostTransport.Type find(String trtype) {
        return trtype == null ? null : TYPES.get(trtype);
    }

    /** The known {@code trtype}s, sorted. */
    static Set<String> names() {
        return new TreeSet<>(TYPES.keySet());
    }
}
