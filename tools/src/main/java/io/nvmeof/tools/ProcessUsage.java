package io.nvmeof.tools;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * This process's CPU time, context switches and page faults from /proc (fio's usr_cpu, sys_cpu,
 * ctx, majf, minf): read at two moments, the difference is what a run cost. Zeros where /proc is
 * not there.
 */
record ProcessUsage(long userTicks, long systemTicks, long contextSwitches, long majorFaults, long minorFaults) {
    /** USER_HZ: the unit of /proc's CPU times, 100 on every Linux architecture that matters here. */
    private static final double TICKS_PER_SECOND = 100;
    static final ProcessUsage NONE = new ProcessUsage(0, 0, 0, 0, 0);

    static ProcessUsage now() {
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"));
            // the fields after the command name, which is in parentheses and may hold spaces
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
            // from field 3 (state) on: minflt is field 10, majflt 12, utime 14, stime 15
            long minflt = Long.parseLong(f[10 - 3]);
            long majflt = Long.parseLong(f[12 - 3]);
            long utime = Long.parseLong(f[14 - 3]);
            long stime = Long.parseLong(f[15 - 3]);
            // a process's status counts its main thread's switches only: add up every thread's
            long ctx = 0;
            try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
                for (Path t : tasks) {
                    try {
                        for (String line : Files.readAllLines(t.resolve("status"))) {
                            if (line.startsWith("voluntary_ctxt_switches:") || line.startsWith("nonvoluntary_ctxt_switches:")) {
                                ctx += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                            }
                        }
                    } catch (IOException e) {
                        // the thread ended meanwhile
                    }
                }
            }
            return new ProcessUsage(utime, stime, ctx, majflt, minflt);
        } catch (IOException | RuntimeException e) {
            return NONE;
        }
    }

    /** What happened between {@code earlier} and this. */
    ProcessUsage since(ProcessUsage earlier) {
        return new ProcessUsage(userTicks - earlier.userTicks, systemTicks - earlier.systemTicks,
                contextSwitches - earlier.contextSwitches, majorFaults - earlier.majorFaults, minorFaults - earlier.minorFaults);
    }

    /** User CPU as a percentage of {@code elapsedNanos} (of one core, as fio gives it). */
    double userPercent(long elapsedNanos) {
        return percent(userTicks, elapsedNanos);
    }

    double systemPercent(long elapsedNanos) {
        return percent(systemTicks, elapsedNanos);
    }

    private static double percent(long ticks, long elapsedNanos) {
        return elapsedNanos <= 0 ? 0 : 100.0 * ticks / TICKS_PER_SECOND / (elapsedNanos / 1e9);
    }
}
