package io.nvmeof.target;

import com.sun.management.ThreadMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;

/** Counts what the target's event loop threads ("nvmeof-target...") have allocated so far. */
public final class LoopAllocation {
    private LoopAllocation() {
    }

    public static long targetLoopBytes() {
        ThreadMXBean mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        long total = 0;
        for (long id : mx.getAllThreadIds()) {
            ThreadInfo info = mx.getThreadInfo(id);
            if (info != null && info.getThreadName().startsWith("nvmeof-target")) {
                total += mx.getThreadAllocatedBytes(id);
            }
        }
        return total;
    }
}
