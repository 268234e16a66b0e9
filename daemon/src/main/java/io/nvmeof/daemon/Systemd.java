package io.nvmeof.daemon;

import io.netty.util.concurrent.EventExecutor;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import jnr.ffi.LibraryLoader;
import jnr.ffi.annotations.In;

/**
 * The service manager's notification protocol (sd_notify(3)), spoken without libsystemd: a
 * datagram to the AF_UNIX socket named by {@code $NOTIFY_SOCKET} (Java has no AF_UNIX
 * datagrams, so libc through jnr-ffi). Outside systemd, or when the socket is not set, every
 * call does nothing.
 *
 * <p>The watchdog ({@code WatchdogSec=}, {@code $WATCHDOG_USEC}) is fed from the event loops:
 * every half period each loop runs a probe, and WATCHDOG=1 goes out only when every probe of the
 * round before has run. A loop that is stuck (or a process that is stopped) stops the pings, and
 * systemd restarts the service.
 */
public final class Systemd implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Systemd.class.getName());
    private static final int AF_UNIX = 1;
    private static final int SOCK_DGRAM = 2;
    private static final int SOCK_CLOEXEC = 0x80000;
    private static final int MSG_NOSIGNAL = 0x4000;
    /** sockaddr_un: a 2-byte family and 108 bytes of path. */
    private static final int SUN_PATH = 108;

    /** The libc calls used. */
    public interface LibC {
        int socket(int domain, int type, int protocol);

        long sendto(int fd, @In byte[] buf, long len, int flags, @In byte[] addr, int addrLen);

        int close(int fd);
    }

    private final byte[] address;
    private final int addressLength;
    private final long watchdogMicros;
    private LibC libc;
    private ScheduledExecutorService watchdog;

    private Systemd(String socket, long watchdogMicros) {
        this.watchdogMicros = watchdogMicros;
        if (socket == null || socket.isEmpty() || (socket.charAt(0) != '/' && socket.charAt(0) != '@')) {
            address = null;
            addressLength = 0;
            return;
        }
        byte[] path = socket.getBytes(StandardCharsets.UTF_8);
        if (path[0] == '@') {
            path[0] = 0; // the abstract namespace
        }
        if (path.length >= SUN_PATH) {
            LOG.log(System.Logger.Level.WARNING, "NOTIFY_SOCKET is too long for a socket address: {0}", socket);
            address = null;
            addressLength = 0;
            return;
        }
        address = new byte[2 + SUN_PATH];
        address[0] = AF_UNIX; // sa_family_t, little-endian
        System.arraycopy(path, 0, address, 2, path.length);
        addressLength = 2 + path.length + (path[0] == 0 ? 0 : 1);
    }

    /** What this process's environment says: the socket, and the watchdog if it is meant for this process. */
    public static Systemd fromEnvironment() {
        long usec = 0;
        String pid = System.getenv("WATCHDOG_PID");
        String us = System.getenv("WATCHDOG_USEC");
        if (us != null && (pid == null || pid.equals(Long.toString(ProcessHandle.current().pid())))) {
            try {
                usec = Long.parseLong(us.trim());
            } catch (NumberFormatException e) {
                LOG.log(System.Logger.Level.WARNING, "WATCHDOG_USEC is not a number: {0}", us);
            }
        }
        return new Systemd(System.getenv("NOTIFY_SOCKET"), usec);
    }

    /** Whether a service manager listens. */
    public boolean active() {
        return address != null;
    }

    /** The watchdog period systemd asked for, in microseconds (0: none). */
    public long watchdogMicros() {
        return active() ? watchdogMicros : 0;
    }

    /** Sends {@code state} (newline-separated {@code KEY=VALUE} lines); false if none listens or it failed. */
    public synchronized boolean notify(String state) {
        if (address == null) {
            return false;
        }
        try {
            if (libc == null) {
                libc = LibraryLoader.create(LibC.class).load("c");
            }
            int fd = libc.socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
            if (fd < 0) {
                return false;
            }
            try {
                byte[] msg = state.getBytes(StandardCharsets.UTF_8);
                return libc.sendto(fd, msg, msg.length, MSG_NOSIGNAL, address, addressLength) == msg.length;
            } finally {
                libc.close(fd);
            }
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot notify the service manager: {0}", e.toString());
            return false;
        }
    }

    /** READY=1 with a status line. */
    public void ready(String status) {
        notify("READY=1\nSTATUS=" + status + "\nMAINPID=" + ProcessHandle.current().pid());
    }

    /** RELOADING=1 (with the monotonic time systemd 253+ wants), then {@link #ready} once done. */
    public void reloading() {
        notify("RELOADING=1\nMONOTONIC_USEC=" + monotonicMicros());
    }

    /** STOPPING=1: the service is shutting down on purpose. */
    public void stopping() {
        notify("STOPPING=1\nSTATUS=stopping");
    }

    private static long monotonicMicros() {
        // CLOCK_MONOTONIC is what System.nanoTime reads on Linux
        return System.nanoTime() / 1000;
    }

    /**
     * Feeds the watchdog while every event loop {@code loops} gives still runs its probes; does
     * nothing when systemd asked for no watchdog.
     */
    public synchronized void startWatchdog(Supplier<List<EventExecutor>> loops) {
        long usec = watchdogMicros();
        if (usec <= 0 || watchdog != null) {
            return;
        }
        long period = Math.max(1000, usec / 2);
        watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "nvmeof-watchdog");
            t.setDaemon(true);
            return t;
        });
        AtomicReference<AtomicInteger> round = new AtomicReference<>(new AtomicInteger());
        watchdog.scheduleWithFixedDelay(() -> {
            int late = round.get().get();
            if (late == 0) {
                notify("WATCHDOG=1");
            } else {
                LOG.log(System.Logger.Level.WARNING, "{0} event loop(s) did not run their watchdog probe within {1} ms",
                        late, period / 1000);
            }
            List<EventExecutor> l = loops.get();
            AtomicInteger pending = new AtomicInteger(l.size()); // each round its own count: a late probe counts for its own
            round.set(pending);
            for (EventExecutor e : l) {
                try {
                    e.execute(pending::decrementAndGet);
                } catch (RuntimeException shuttingDown) {
                    pending.decrementAndGet();
                }
            }
        }, 0, period, TimeUnit.MICROSECONDS);
        LOG.log(System.Logger.Level.INFO, "systemd watchdog every {0} ms, fed by the event loops", period / 1000);
    }

    @Override
    public synchronized void close() {
        if (watchdog != null) {
            watchdog.shutdownNow();
            watchdog = null;
        }
    }
}
