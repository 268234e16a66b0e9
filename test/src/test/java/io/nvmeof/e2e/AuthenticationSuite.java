package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.initiator.Authenticated;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.Nvmeof;
import io.nvmeof.protocol.auth.DhGroup;
import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.protocol.auth.DhchapKey;
import io.nvmeof.target.HostSecurity;
import io.nvmeof.target.Namespace;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.RamBackend;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * DH-HMAC-CHAP between our initiator and our target, in one JVM under the leak detector: every
 * hash and DH group, one-way and bidirectional, every I/O queue authenticated (I/O runs), wrong
 * and missing keys refused with a message that says so, and re-authentication while I/O runs.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AuthenticationSuite {
    abstract Fabric fabric();

    static final String NQN = "nqn.2026-11.io.nvmeof:auth-e2e";
    static final String OPEN = "nqn.2026-11.io.nvmeof:auth-open";
    static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:0b4d2b34-3c55-4d7e-a1a7-6f9c1b1d0a11";
    static final SecureRandom RANDOM = new SecureRandom();
    Target target;
    Subsystem subsystem;
    int port;
    DhchapKey hostKey = DhchapKey.create(DhchapKey.randomSecret(32, RANDOM), DhchapHash.SHA256, HOST);
    DhchapKey controllerKey = DhchapKey.create(DhchapKey.randomSecret(64, RANDOM), DhchapHash.SHA512, NQN);

    @BeforeAll
    void start() throws IOException {
        target = new Target();
        subsystem = new Subsystem(NQN, "AU0001", "auth", "1.0");
        subsystem.allowHost(HOST);
        subsystem.addNamespace(new Namespace(NQN, 1, new RamBackend(8 << 20, 4096), false, null));
        target.addSubsystem(subsystem);
        Subsystem open = new Subsystem(OPEN, "AU0002", "open", "1.0");
        open.addNamespace(new Namespace(OPEN, 1, new RamBackend(1 << 20, 4096), false, null));
        target.addSubsystem(open);
        port = fabric().listen(target, new InetSocketAddress("127.0.0.1", 0)).getPort();
    }

    @AfterEach
    void keysBack() {
        target.hostSecurity(List.of(new HostSecurity(HOST, hostKey, controllerKey)));
    }

    @AfterAll
    void stop() throws IOException {
        target.close();
    }

    ConnectOptions options() {
        return ConnectOptions.defaults().identity(HostIdentity.of(HOST, null))
                .ioQueues(2).controllerLossTimeout(Duration.ZERO).dhchapSecret(hostKey);
    }

    private static void roundTrip(Controller c, int seed) throws IOException {
        BlockDevice dev = c.namespace(1);
        Random rnd = new Random(seed);
        for (int i = 0; i < 8; i++) {
            byte[] data = new byte[4096 * (1 + rnd.nextInt(16))];
            rnd.nextBytes(data);
            long at = 4096L * rnd.nextInt(1024);
            dev.write(at, ByteBuffer.wrap(data));
            ByteBuffer back = ByteBuffer.allocate(data.length);
            dev.read(at, back);
            assertEquals(ByteBuffer.wrap(data), back.flip());
        }
    }

    @Test
    void oneWayThenBidirectional() throws Exception {
        keysBack();
        try (Controller c = Nvmeof.connect(fabric().uri(port, NQN), options())) {
            Authenticated a = c.authentication();
            assertEquals(new Authenticated("hmac(sha512)", "ffdhe2048", false), a, "the target's defaults");
            roundTrip(c, 1); // the I/O queues authenticated too, or the target would refuse their I/O
        }
        try (Controller c = Nvmeof.connect(fabric().uri(port, NQN), options().dhchapControllerSecret(controllerKey))) {
            assertTrue(c.authentication().controllerAuthenticated());
            roundTrip(c, 2);
        }
    }

    @ParameterizedTest
    @EnumSource(DhGroup.class)
    void everyDhGroupWithEachHash(DhGroup g) throws Exception {
        DhchapHash h = DhchapHash.values()[g.ordinal() % 3];
        target.hostSecurity(List.of(new HostSecurity(HOST, hostKey, controllerKey, List.of(h), List.of(g))));
        try (Controller c = Nvmeof.connect(fabric().uri(port, NQN), options().dhchapControllerSecret(controllerKey)
                .dhchapDhGroups(List.of(g)))) {
            assertEquals(new Authenticated(h.kernelName(), g.kernelName, true), c.authentication());
            roundTrip(c, g.ordinal());
        }
    }

    @Test
    void theHostOffersTheNullGroupOnlyWhenToldTo() throws Exception {
        target.hostSecurity(List.of(new HostSecurity(HOST, hostKey, controllerKey, List.of(), List.of(DhGroup.NULL))));
        IOException e = assertThrows(IOException.class, () -> Nvmeof.connect(fabric().uri(port, NQN), options()).close(),
                "a target that takes only NULL, a host that does not offer it");
        assertTrue(e.getMessage().contains("refused authentication"), e.getMessage());
        try (Controller c = Nvmeof.connect(fabric().uri(port, NQN), options().dhchapDhGroups(List.of(DhGroup.FFDHE2048,
                DhGroup.NULL)))) {
            assertEquals("null", c.authentication().dhGroup());
        }
        // the target's default list still takes a host that offers NULL alone
        keysBack();
        try (Controller c = Nvmeof.connect(fabric().uri(port, NQN), options().dhchapDhGroups(List.of(DhGroup.NULL)))) {
            assertEquals("null", c.authentication().dhGroup());
        }
    }

    @Test
    void wrongAndMissingKeysAreRefused() {
        keysBack();
        DhchapKey other = DhchapKey.create(DhchapKey.randomSecret(32, RANDOM), null, HOST);
        IOException wrong = assertThrows(IOException.class,
                () -> Nvmeof.connect(fabric().uri(port, NQN), options().dhchapSecret(other)).close());
        assertTrue(wrong.getMessage().contains("refused authentication"), wrong.getMessage());
        IOException none = assertThrows(IOException.class,
                () -> Nvmeof.connect(fabric().uri(port, NQN), options().dhchapSecret(null)).close());
        assertTrue(none.getMessage().contains("requires DH-HMAC-CHAP"), none.getMessage());
        IOException impostor = assertThrows(IOException.class, () -> Nvmeof.connect(fabric().uri(port, NQN),
                options().dhchapControllerSecret(other)).close());
        assertTrue(impostor.getMessage().contains("did not prove"), impostor.getMessage());
        IOException unasked = assertThrows(IOException.class, () -> Nvmeof.connect(fabric().uri(port, OPEN),
                options().identity(HostIdentity.of("nqn.2026-11.io.nvmeof:keyless", null))
                        .dhchapControllerSecret(controllerKey)).close());
        assertTrue(unasked.getMessage().contains("did not authenticate itself"), unasked.getMessage());
        // nothing of the refused hosts is left behind
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!subsystem.controllers().isEmpty() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertTrue(subsystem.controllers().isEmpty(), "controllers left: " + subsystem.controllers());
    }

    @Test
    void reauthenticationWhileIoRuns() throws Exception {
        keysBack();
        try (Controller c = Nvmeof.connect(fabric().uri(port, NQN), options().dhchapControllerSecret(controllerKey))) {
            BlockDevice dev = c.namespace(1);
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong ios = new AtomicLong();
            CompletableFuture<Void> io = CompletableFuture.runAsync(() -> {
                ByteBuffer b = ByteBuffer.allocate(4096);
                try {
                    while (!stop.get()) {
                        b.clear();
                        dev.write(0, b);
                        b.clear();
                        dev.read(0, b);
                        ios.incrementAndGet();
                    }
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            for (int i = 0; i < 3; i++) {
                assertTrue(c.reauthenticate().controllerAuthenticated());
            }
            long before = ios.get();
            // I/O goes on after re-authentication (waited for, not slept on: a busy machine may be slow to run it)
            Awaitility.await().atMost(TargetProcess.PATIENCE).until(() -> ios.get() > before || io.isDone());
            stop.set(true);
            io.get(30, TimeUnit.SECONDS);
            assertTrue(ios.get() > before, "I/O went on during and after re-authentication");
            // the target changes the host's key: the controller ends, and re-authentication with the old one fails
            target.hostSecurity(List.of(new HostSecurity(HOST,
                    DhchapKey.create(DhchapKey.randomSecret(32, RANDOM), null, HOST), controllerKey)));
            assertThrows(IOException.class, c::reauthenticate);
            Awaitility.await().atMost(TargetProcess.PATIENCE).until(() -> subsystem.controllers().isEmpty());
        }
    }
}
