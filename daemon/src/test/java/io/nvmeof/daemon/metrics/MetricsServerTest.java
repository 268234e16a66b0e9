package io.nvmeof.daemon.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.Target;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The metrics endpoint's access: basic authentication (401 without the password, the metrics
 * with it), HTTPS from a PKCS#12 keystore, and a client that connects and sends nothing is cut
 * off after the read timeout instead of holding the server.
 */
class MetricsServerTest {
    @TempDir
    Path dir;

    private static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void basicAuthenticationRefusesAScrapeWithoutThePassword() throws Exception {
        try (Target target = new Target();
             MetricsServer m = MetricsServer.start(target, new MetricsServer.Endpoint(
                     new InetSocketAddress("127.0.0.1", 0), "prometheus", "s3cret", null, null))) {
            HttpClient http = HttpClient.newHttpClient();
            URI uri = URI.create("http://127.0.0.1:" + m.address().getPort() + "/metrics");
            HttpResponse<String> none = http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(401, none.statusCode());
            assertTrue(!none.body().contains("nvmeof_"), "nothing of the metrics without the password");
            HttpResponse<String> wrong = http.send(HttpRequest.newBuilder(uri).header("Authorization",
                    basic("prometheus", "guess")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(401, wrong.statusCode());
            HttpResponse<String> ok = http.send(HttpRequest.newBuilder(uri).header("Authorization",
                    basic("prometheus", "s3cret")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, ok.statusCode());
            assertTrue(ok.body().contains("nvmeof_connections"), ok.body());
        }
    }

    @Test
    void httpsFromAPkcs12Keystore() throws Exception {
        Path ks = dir.resolve("metrics.p12");
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-keyalg", "EC", "-alias", "metrics", "-dname", "CN=127.0.0.1", "-ext", "SAN=ip:127.0.0.1",
                "-validity", "2",
                "-storetype", "PKCS12", "-keystore", ks.toString(), "-storepass", "kspass", "-keypass", "kspass")
                .redirectErrorStream(true).start();
        String out = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(keytool.waitFor(60, TimeUnit.SECONDS) && keytool.exitValue() == 0, out);
        try (Target target = new Target();
             MetricsServer m = MetricsServer.start(target, new MetricsServer.Endpoint(
                     new InetSocketAddress("127.0.0.1", 0), null, null, ks, "kspass"))) {
            SSLContext trustAll = SSLContext.getInstance("TLS");
            trustAll.init(null, new TrustManager[] {new X509TrustManager() {
                @Override
                public void checkClientTrusted(X509Certificate[] chain, String authType) {
                }

                @Override
                public void checkServerTrusted(X509Certificate[] chain, String authType) {
                }

                @Override
                public X509Certificate[] getAcceptedIssuers() {
                    return new X509Certificate[0];
                }
            }}, new SecureRandom());
            HttpClient https = HttpClient.newBuilder().sslContext(trustAll).connectTimeout(Duration.ofSeconds(10)).build();
            HttpResponse<String> r = https.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:"
                    + m.address().getPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode());
            assertTrue(r.body().contains("nvmeof_connections"), r.body());
        }
    }

    @Test
    void aClientThatSendsNothingIsCutOff() throws Exception {
        try (Target target = new Target();
             MetricsServer m = MetricsServer.start(target, new InetSocketAddress("127.0.0.1", 0));
             Socket s = new Socket("127.0.0.1", m.address().getPort())) {
            s.setSoTimeout(30_000);
            long t0 = System.nanoTime();
            InputStream in = s.getInputStream();
            int b;
            try {
                b = in.read();
            } catch (IOException e) {
                b = -1;
            }
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(-1, b, "closed by the server");
            assertTrue(ms < 25_000, "cut off after " + ms + " ms (10 s read timeout, checked on the server's 10 s tick)");
        }
    }
}
