package io.nvmeof.daemon;

import com.sun.management.OperatingSystemMXBean;
import io.netty.util.internal.PlatformDependent;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.RamBackend;
import java.io.IOException;
import java.lang.management.ManagementFactory;

/**
 * How much memory RAM namespaces may take: the JVM's direct-memory limit (which their segments
 * count against), less the command data buffer budget ({@code max_buffer_memory}) and the RAM
 * namespaces already there; and never more than the machine's (or container's) physical memory
 * less those namespaces. A size past it is refused before anything is allocated, so a caller
 * asking for a terabyte gets an error naming the field instead of halting the target with an
 * out-of-memory error that cuts off every host.
 */
public final class RamBudget {
    private RamBudget() {
    }

    /** Bytes of RAM namespaces now. */
    static long inUse(Target target) {
        long used = 0;
        for (Subsystem s : target.subsystems()) {
            for (Namespace ns : s.namespaces().values()) {
                if (ns.backend() instanceof RamBackend) {
                    used += ns.backend().size();
                }
            }
        }
        return used;
    }

    /** Bytes a new RAM namespace, or the growth of one, may take now. */
    public static long available(Target target) {
        long used = inUse(target);
        long direct = PlatformDependent.maxDirectMemory() - target.bufferBudget().limit() - used;
        long physical = physicalMemory() - used;
        return Math.max(0, Math.min(direct, physical));
    }

    /** Refuses {@code bytes} more of RAM namespaces past {@link #available}; {@code field} names the size. */
    public static void check(Target target, long bytes, String field) throws IOException {
        long free = available(target);
        if (bytes > free) {
            throw new Exceeded(field, bytes + " bytes of RAM namespace is more than the " + free + " bytes the RAM budget"
                    + " has left (the JVM's direct-memory limit " + PlatformDependent.maxDirectMemory() + " less the"
                    + " command buffer budget " + target.bufferBudget().limit() + " and the RAM namespaces there, "
                    + inUse(target) + " bytes, and never more than physical memory); raise -XX:MaxDirectMemorySize in"
                    + " NVMEOF_JAVA_OPTS, or use a file namespace");
        }
    }

    /** A RAM size past the budget: {@link #field} names the parameter or field. */
    public static final class Exceeded extends IOException {
        private final String field;

        Exceeded(String field, String message) {
            super(message);
            this.field = field;
        }

        public String field() {
            return field;
        }
    }

    private static long physicalMemory() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
            return os.getTotalMemorySize();
        }
        return Long.MAX_VALUE;
    }
}
