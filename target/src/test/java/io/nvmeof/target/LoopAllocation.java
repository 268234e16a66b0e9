package io.nvmeof.target;

import java.lang.management.ManagementFactory;

/** Counts what the target's event loop threads ("nvmeof-target...") have allocated so far. */
public final class LoopAllocation {
    private LoopAllocation() {
    }

    public static long targetLoopBytes() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long total = 0;
        for (long id : mx.getAllThreadIds()) {
            java.lang.management.ThreadInfo info = mx.getThreadInfo(id);
            if (info != null && info.getThreadName().startsWith("nvmeof-target")) {
                total += mx.getThreadAllocatedBytes(id);
            }
        }
        return total;
    }
}
