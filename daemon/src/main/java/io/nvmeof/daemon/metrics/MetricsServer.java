package io.nvmeof.daemon.metrics;

import io.nvmeof.target.Target;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import com.sun.net.httpserver.BasicAuthenticator;
import com.sun.net.httpserver.HttpsConfigurator;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.MessageDigest;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
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

    /**
     * Where and how the endpoint is served: {@code address}; with {@code user} and {@code
     * password}, HTTP basic authentication (Prometheus' {@code basic_auth}); with {@code keystore}
     * (PKCS#12, its password {@code keystorePassword}), HTTPS (Prometheus' {@code tls_config}).
     */
    public record Endpoint(InetSocketAddress address, String user, String password, Path keystore,
                           String keystorePassword) {
        public Endpoint {
            if ((user == null) != (password == null)) {
                throw new IllegalArgumentException("basic authentication needs a user and a password");
            }
        }

        /** Plain HTTP, no authentication. */
        public static Endpoint plain(InetSocketAddress address) {
            return new Endpoint(address, null, null, null, null);
        }

        public String scheme() {
            return keystore != null ? "https" : "http";
        }

        @Override
        public String toString() {
            return scheme() + "://" + address.getAddress().getHostAddress() + ":" + address.getPort() + "/metrics"
                    + (user != null ? " (basic authentication as " + user + ")" : "");
        }
    }

    /**
     * A request (line, headers and body) must be read within this many seconds, or the
     * connection is closed: a client that opens connections and sends nothing holds no thread.
     */
    static final long READ_TIMEOUT_SECONDS = 10;

    /** Serves {@code target}'s metrics on {@code address} (port 0: any free port), plain HTTP. */
    public static MetricsServer start(Target target, InetSocketAddress address) throws IOException {
        return start(target, Endpoint.plain(address));
    }

    /** Serves {@code target}'s metrics as {@code endpoint} says. */
    public static MetricsServer start(Target target, Endpoint endpoint) throws IOException {
        // the JDK's server reads these once, when its first instance is made
        System.setProperty("sun.net.httpserver.maxReqTime", System.getProperty("sun.net.httpserver.maxReqTime",
                Long.toString(READ_TIMEOUT_SECONDS)));
        System.setProperty("sun.net.httpserver.maxRspTime", System.getProperty("sun.net.httpserver.maxRspTime", "30"));
        PrometheusRegistry registry = new PrometheusRegistry();
        registry.register(new TargetMetrics(target));
        JvmMetrics.builder().register(registry);
        InetSocketAddress address = endpoint.address();
        HTTPServer.Builder b = HTTPServer.builder().inetAddress(address.getAddress()).port(address.getPort())
                .registry(registry);
        if (endpoint.user() != null) {
            b.authenticator(new Basic(endpoint.user(), endpoint.password()));
        }
        if (endpoint.keystore() != null) {
            b.httpsConfigurator(new HttpsConfigurator(sslContext(endpoint.keystore(), endpoint.keystorePassword())));
        }
        HTTPServer s = b.buildAndStart();
        return new MetricsServer(s, new InetSocketAddress(address.getAddress(), s.getPort()));
    }

    /** A server context from a PKCS#12 keystore (key and certificate chain). */
    private static SSLContext sslContext(Path keystore, String password) throws IOException {
        char[] pw = password == null ? new char[0] : password.toCharArray();
        try (InputStream in = Files.newInputStream(keystore)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, pw);
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, pw);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf.getKeyManagers(), null, null);
            return ctx;
        } catch (GeneralSecurityException e) {
            throw new IOException("keystore " + keystore + ": " + e.getMessage(), e);
        }
    }

    /** HTTP basic authentication against one user, the password compared in constant time. */
    private static final class Basic extends BasicAuthenticator {
        private final byte[] user;
        private final byte[] password;

        Basic(String user, String password) {
            super("nvmeof");
            this.user = user.getBytes(StandardCharsets.UTF_8);
            this.password = password.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public boolean checkCredentials(String u, String p) {
            boolean userOk = MessageDigest.isEqual(user, u.getBytes(StandardCharsets.UTF_8));
            boolean passwordOk = MessageDigest.isEqual(password, p.getBytes(StandardCharsets.UTF_8));
            return userOk & passwordOk;
        }
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
