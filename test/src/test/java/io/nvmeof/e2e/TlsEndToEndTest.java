package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.fabric.tls.TlsSession;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Discovery;
import io.nvmeof.initiator.DiscoveryEntry;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.protocol.auth.DhchapKey;
import io.nvmeof.protocol.tls.TlsPsk;
import io.nvmeof.target.HostSecurity;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Port;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.RamBackend;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * NVMe/TCP over TLS 1.3 between our initiator and our target, in one JVM under the leak
 * detector: every transfer shape with and without digests, both PSK hashes and derivations,
 * TLS with DH-HMAC-CHAP, and what a wrong key, a host in the clear and discovery see.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TlsEndToEndTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:tls-e2e";
    static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:7d3a1c55-9e2b-4f60-8a1d-2c3b4d5e6f70";
    static final String KEYLESS = "nqn.2026-11.io.nvmeof:tls-e2e-keyless";
    static final String HOST384 = "nqn.2014-08.org.nvmexpress:uuid:7d3a1c55-9e2b-4f60-8a1d-2c3b4d5e6f71";
    static final SecureRandom RANDOM = new SecureRandom();
    final TlsPsk key = TlsPsk.create(DhchapKey.randomSecret(32, RANDOM), 1);
    final TlsPsk key384 = TlsPsk.create(DhchapKey.randomSecret(48, RANDOM), 2);
    final DhchapKey dhchap = DhchapKey.create(DhchapKey.randomSecret(32, RANDOM), DhchapHash.SHA256, HOST384);
    Target target;
    int required;
    int optional;

    @BeforeAll
    void start() throws IOException {
        target = new Target();
        Subsystem s = new Subsystem(NQN, "TLSE1", "tls", "1.0");
        s.addNamespace(new Namespace(NQN, 1, new RamBackend(16 << 20, 4096), false, null));
        target.addSubsystem(s);
        target.hostSecurity(List.of(HostSecurity.tls(HOST, key),
                new HostSecurity(HOST384, dhchap, null, List.of(), List.of(), key384)));
        required = port("required");
        optional = port("optional");
    }

    private int port(String tls) throws IOException {
        return target.addPort(new Port(target.nextPortId(), "tcp", Map.of("tls", tls),
                new InetSocketAddress("127.0.0.1", 0), true, List.of(NQN))).bound().getPort();
    }

    @AfterAll
    void stop() throws IOException {
        target.close();
    }

    ConnectOptions options(String host) {
        return ConnectOptions.defaults().identity(HostIdentity.of(host, null)).ioQueues(2)
                .controllerLossTimeout(Duration.ZERO);
    }

    static String uri(int port) {
        return "nvme+tcp://127.0.0.1:" + port + "/" + NQN;
    }

    private static void roundTrips(Controller c, long seed) throws IOException {
        BlockDevice dev = c.namespace(1);
        Random rnd = new Random(seed);
        // in-capsule, R2T, several H2CData, split at MDTS; reads from a few bytes of TLS record to many records
        for (int size : new int[] {4096, 8192, 12288, 300 * 1024, 3 << 20}) {
            byte[] data = new byte[size];
            rnd.nextBytes(data);
            long at = 4096L * rnd.nextInt((int) ((dev.size() - size) / 4096));
            dev.write(at, ByteBuffer.wrap(data));
            ByteBuffer back = ByteBuffer.allocateDirect(size);
            dev.read(at, back);
            assertEquals(ByteBuffer.wrap(data), back.flip(), "size " + size);
        }
    }

    @ParameterizedTest(name = "header digest {0}, data digest {1}")
    @CsvSource({"false,false", "true,true", "true,false"})
    void everyTransferOverTlsWithAndWithoutDigests(boolean hd, boolean dd) throws Exception {
        try (Controller c = Nvmeof.connect(uri(required), options(HOST).tls(key).headerDigest(hd).dataDigest(dd))) {
            TlsSession s = c.secureChannel();
            assertEquals("TLS_AES_128_GCM_SHA256", s.cipherSuite());
            assertEquals("NVMe0R01 " + HOST + " " + NQN, s.identity());
            roundTrips(c, hd ? 1 : 2);
        }
    }

    @Test
    void aSha384PskWithDhHmacChapInsideAndTheOlderDerivation() throws Exception {
        try (Controller c = Nvmeof.connect(uri(required), options(HOST384).tls(key384).dhchapSecret(dhchap)
                .tlsDerivation(TlsPsk.Derivation.COMPAT).tlsIdentityVersion(1))) {
            assertEquals("TLS_AES_256_GCM_SHA384", c.secureChannel().cipherSuite());
            assertTrue(c.secureChannel().identity().startsWith("NVMe1R02 " + HOST384 + " " + NQN + " "));
            assertEquals("hmac(sha512)", c.authentication().hash());
            roundTrips(c, 3);
        }
    }

    @Test
    void wrongKeysAndTheClearAreRefusedAndAnOptionalPortTakesTheClearOnlyFromAHostWithoutATlsKey() throws Exception {
        IOException wrong = assertThrows(IOException.class, () -> Nvmeof.connect(uri(required),
                options(HOST).tls(TlsPsk.create(DhchapKey.randomSecret(32, RANDOM), 1))).close());
        assertTrue(wrong.getMessage().contains("TLS handshake"), wrong.getMessage());
        assertThrows(IOException.class, () -> Nvmeof.connect(uri(required), options(HOST)).close(), "in the clear");
        // a cleartext Connect that only claims a TLS host's NQN gets nothing, even where TLS is optional
        IOException impostor = assertThrows(IOException.class, () -> Nvmeof.connect(uri(optional), options(HOST)).close());
        assertTrue(impostor.getMessage().contains("Connect Invalid Host"), impostor.getMessage());
        try (Controller clear = Nvmeof.connect(uri(optional), options(KEYLESS));
             Controller tls = Nvmeof.connect(uri(optional), options(HOST).tls(key))) {
            assertEquals(null, clear.secureChannel());
            roundTrips(clear, 5);
            assertEquals("TLS_AES_128_GCM_SHA256", tls.secureChannel().cipherSuite());
            roundTrips(tls, 4);
        }
    }

    @Test
    void discoveryTellsWhichPortsWantTls() throws Exception {
        // each port that serves the subsystem tells of itself (as nvmet's do), and says what it wants
        for (int p : new int[] {required, optional}) {
            Discovery.Log log = Nvmeof.discover("nvme+tcp://127.0.0.1:" + p, options(HOST).tls(key));
            int seen = 0;
            for (DiscoveryEntry e : log.entries()) {
                if (e.subsystemNqn().equals(NQN)) {
                    seen++;
                    assertEquals(p, Integer.parseInt(e.trsvcid()), "only the port asked");
                    assertEquals(2, e.sectype(), "TLS 1.3");
                    assertEquals(p == required ? "required" : "not required", e.treqName().split(",")[0]);
                }
            }
            assertEquals(1, seen);
        }
    }
}
