package io.nvmeof.e2e;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * TCP ports for tests that must know a port before the process that listens on it starts, or
 * that listen on it again after a restart. A port the kernel handed out for {@code bind(0)} lies
 * in the ephemeral range, where any outgoing connection on the machine may take it as its source
 * port while no one listens (seen: a gateway restarted by a failover test found its port held).
 * These come from below that range, so only another listener can hold one, and that is checked.
 */
final class Ports {
    private static final int LOWEST = 10_000;
    private static final AtomicInteger NEXT = new AtomicInteger();

    private Ports() {
    }

    /** A port below the ephemeral range that nothing listens on now, distinct from this JVM's earlier ones. */
    static int free() throws IOException {
        int highest = ephemeralLow() - 1;
        int span = highest - LOWEST + 1;
        // start where another test JVM (another pid) would not
        int start = (int) (ProcessHandle.current().pid() * 7919 % span);
        for (int i = 0; i < span; i++) {
            int port = LOWEST + Math.floorMod(start + NEXT.getAndIncrement(), span);
            if (bindable(port)) {
                return port;
            }
        }
        throw new IOException("no free TCP port in " + LOWEST + ".." + highest);
    }

    private static boolean bindable(int port) {
        try (ServerSocket any = new ServerSocket()) {
            any.bind(new InetSocketAddress(port), 1);
        } catch (IOException e) {
            return false;
        }
        try (ServerSocket loopback = new ServerSocket()) {
            loopback.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The low end of the kernel's ephemeral port range (32768 where it cannot be read). */
    private static int ephemeralLow() {
        try {
            String[] range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim().split("\\s+");
            return Math.max(LOWEST + 1_000, Integer.parseInt(range[0]));
        } catch (IOException | RuntimeException e) {
            return 32_768;
        }
    }
}
