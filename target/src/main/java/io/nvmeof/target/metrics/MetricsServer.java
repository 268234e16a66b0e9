package io.nvmeof.target.metrics;

import io.nvmeof.target.Target;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;

/**
 * The Prometheus endpoint ({@code GET /metrics}, text format): the target's metrics and the
 * JVM's and process's, served by the Prometheus Java client's HTTP server on its own threads,
 * never on an event loop.
 */
public final class MetricsServer implements AutoCloseable {
    /** The port Prometheus' registry of exporter ports gives nothing else, used when none is named. */
    public static final int DEFAULT_PORT = 9748;

    private final HTTPServer server;
    private final InetSocketAddress address;

    private MetricsServer(HTTPServer server, InetSocketAddress address) {
        this.server = server;
        this.address = address;
    }

    /** Serves {@code target}'s metrics on {@code address} (port 0: any free port). */
    public static MetricsServer start(Target target, InetSocketAddress address) throws IOException {
        PrometheusRegistry registry = new PrometheusRegistry();
        registry.register(new TargetMetrics(target));
        JvmMetrics.builder().register(registry);
        HTTPServer s = HTTPServer.builder().inetAddress(address.getAddress()).port(address.getPort()).registry(registry)
                .buildAndStart();
        return new MetricsServer(s, new InetSocketAddress(address.getAddress(), s.getPort()));
    }

    /** Where it listens. */
    public InetSocketAddress address() {
        return address;
    }

    /**
     * Parses {@code tcp://ADDR[:PORT]} (or {@code ADDR:PORT}) as the address to serve on; the
     * port defaults to {@link #DEFAULT_PORT}. {@code what} names the flag or field in errors.
     */
    public static InetSocketAddress parse(String s, String what) {
        String spec = s.contains("://") ? s : "tcp://" + s;
        try {
            URI u = new URI(spec);
            if (!"tcp".equals(u.getScheme()) || u.getHost() == null || (u.getPath() != null && !u.getPath().isEmpty())) {
                throw new IllegalArgumentException(what + " '" + s + "' is not tcp://ADDR:PORT");
            }
            int port = u.getPort() < 0 ? DEFAULT_PORT : u.getPort();
            return new InetSocketAddress(InetAddress.getByName(u.getHost()), port);
        } catch (URISyntaxException | IOException e) {
            throw new IllegalArgumentException(what + " '" + s + "' is not tcp://ADDR:PORT: " + e.getMessage());
        }
    }

    @Override
    public void close() {
        server.close();
    }
}
