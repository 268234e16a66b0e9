package io.nvmeof.target;

import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The target transports this process knows, by {@code trtype}: those listed as services on
 * the class path ({@link TargetTransport.Type}), and any registered by hand (a test's fake
 * transport). Adding a transport is adding one such class; the core looks them up here.
 */
public final class TargetTransports {
    private static final Map<String, TargetTransport.Type> TYPES = new ConcurrentHashMap<>();

    static {
        for (TargetTransport.Type t : ServiceLoader.load(TargetTransport.Type.class, TargetTransports.class.getClassLoader())) {
            TYPES.putIfAbsent(t.name(), t);
        }
    }

    private TargetTransports() {
    }

    /** Registers {@code type} (replacing one of the same name). */
    public static void register(TargetTransport.Type type) {
        TYPES.put(type.name(), type);
    }

    /** The transport of {@code trtype}; throws naming the known ones when there is none. */
    public static TargetTransport.Type type(String trtype) {
        TargetTransport.Type t = trtype == null ? null : TYPES.get(trtype);
        if (t == null) {
            throw new IllegalArgumentException("trtype '" + trtype + "' is not supported (" + String.join(", ", names())
                    + ")");
        }
        return t;
    }

    /** The known {@code trtype}s, sorted. */
    public static Set<String> names() {
        return new TreeSet<>(TYPES.keySet());
    }
}
