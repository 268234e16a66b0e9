package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.fabric.tls.NvmeTls;
import io.nvmeof.protocol.CompletionQueueEntry;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.Nqn;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.tcp.ICReqPdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.protocol.tls.TlsPsk;
import io.nvmeof.target.backend.RamBackend;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The target's side of NVMe/TCP's secure channel, with a raw host over Bouncy Castle's blocking
 * TLS client: a required port refuses the clear, an optional one takes both (the clear from a
 * host without a TLS key only), an I/O queue must come in the admin queue's channel, either PSK
 * derivation is accepted, a Connect must name the host and subsystem of the TLS identity, and
 * the discovery log says what each port wants.
 */
class TlsTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:tls";
    static final String OTHER = "nqn.2026-11.io.nvmeof:other-host";
    static final String KEYLESS = "nqn.2026-11.io.nvmeof:keyless-host";
    static final TlsPsk KEY = TlsPsk.create(new byte[32], 1);
    Target target;
    InetSocketAddress required;
    InetSocketAddress optional;

    @BeforeEach
    void start() throws IOException {
        Target.Options o = Target.Options.defaults();
        o = o.with(Settings.EVENT_LOOP_THREADS, 2);
        target = new Target(o);
        Subsystem s = new Subsystem(NQN, "TLS1", "tls", "1.0");
        s.addNamespace(new Namespace(NQN, 1, new RamBackend(1 << 20, 4096), false, null));
        target.addSubsystem(s);
        target.hostSecurity(List.of(HostSecurity.tls(RawHost.HOST_NQN, KEY), HostSecurity.tls(OTHER, KEY)));
        required = port("required");
        optional = port("optional");
    }

    private InetSocketAddress port(String tls) throws IOException {
        return target.addPort(new Port(target.nextPortId(), "tcp", Map.of("tls", tls),
                new InetSocketAddress("127.0.0.1", 0), true, List.of(NQN))).bound();
    }

    @AfterEach
    void stop() throws IOException {
        target.close();
    }

    private static org.bouncycastle.tls.TlsClient client(String host, TlsPsk.Derivation d) {
        return NvmeTls.client(KEY, host, NQN, 0, d);
    }

    @Test
    void aRequiredPortTakesTlsWithEitherDerivationAndRefusesTheClear() throws IOException {
        for (TlsPsk.Derivation d : TlsPsk.Derivation.values()) {
            try (RawHost h = new RawHost(required, client(RawHost.HOST_NQN, d))) {
                h.bringUpAdmin(NQN);
                assertTrue(h.command(RawHost::keepAlive, null).cqe().status().isSuccess(), d.toString());
            }
        }
        try (RawHost clear = new RawHost(required)) {
            clear.send(icreqPdu());
            assertTrue(clear.closedByPeer(), "an ICReq in the clear ends the connection");
        }
        try (RawHost clear = new RawHost(optional); RawHost tls = new RawHost(optional, client(RawHost.HOST_NQN,
                TlsPsk.Derivation.RFC8446))) {
            clear.icreq();
            CompletionQueueEntry c = clear.connect(0, NQN, KEYLESS, 0xffff).cqe();
            assertEquals(Status.SUCCESS, c.status(), "a host without a TLS key comes in the clear");
            tls.bringUpAdmin(NQN);
        }
    }

    @Test
    void aHostOfferingThePskWithoutAnEcdheExchangeIsRefused() {
        for (InetSocketAddress a : List.of(required, optional)) {
            assertThrows(IOException.class, () -> new RawHost(a, NvmeTls.client(KEY, RawHost.HOST_NQN, NQN, 0,
                    TlsPsk.Derivation.RFC8446, true)).close(), "a ClientHello offering psk_ke only");
        }
    }

    @Test
    void aHostWithATlsKeyIsRefusedInTheClearOnEveryPortAndQueue() throws IOException {
        // attack 1: a cleartext Connect that merely names a TLS host, on an optional port and on one without TLS
        InetSocketAddress none = port("none");
        for (InetSocketAddress a : List.of(optional, none)) {
            try (RawHost impostor = new RawHost(a)) {
                impostor.icreq();
                CompletionQueueEntry c = impostor.connect(0, NQN, RawHost.HOST_NQN, 0xffff).cqe();
                assertEquals(Status.CONNECT_INVALID_HOST, c.status(), "cleartext Connect as a TLS host through " + a);
            }
        }
        // an admin queue over TLS, then I/O queues: in the clear, through another port, as another TLS identity
        try (RawHost admin = new RawHost(optional, client(RawHost.HOST_NQN, TlsPsk.Derivation.RFC8446))) {
            int cntlid = admin.bringUpAdmin(NQN);
            try (RawHost io = new RawHost(optional)) {
                io.icreq();
                assertEquals(Status.CONNECT_INVALID_HOST, io.connect(1, NQN, RawHost.HOST_NQN, cntlid).cqe().status(),
                        "an I/O queue in the clear for a controller whose admin queue is over TLS");
            }
            try (RawHost io = new RawHost(required, client(RawHost.HOST_NQN, TlsPsk.Derivation.RFC8446))) {
                io.icreq();
                assertEquals(Status.CONNECT_INVALID_PARAMETERS, io.connect(1, NQN, RawHost.HOST_NQN, cntlid).cqe()
                        .status(), "an I/O queue through another port than its admin queue's");
            }
            try (RawHost io = new RawHost(optional, NvmeTls.client(KEY, RawHost.HOST_NQN, NQN, 1,
                    TlsPsk.Derivation.RFC8446))) {
                io.icreq();
                assertEquals(Status.CONNECT_INVALID_HOST, io.connect(1, NQN, RawHost.HOST_NQN, cntlid).cqe().status(),
                        "an I/O queue with another TLS identity (NVMe1R01 with a digest) than its admin queue's");
            }
            try (RawHost io = new RawHost(optional, client(RawHost.HOST_NQN, TlsPsk.Derivation.RFC8446))) {
                io.bringUpIo(NQN, 1, cntlid);
                assertTrue(io.command(s -> s.opcode(2).psdt(1).nsid(1).sgl(0, 4096, Sgl.TCP_TRANSPORT), null)
                        .type() == PduType.C2H_DATA, "the right channel reads");
            }
        }
    }

    private static ByteBuffer icreqPdu() {
        ByteBuffer b = Flyweight.allocate(128);
        new ICReqPdu().<ICReqPdu>wrap(b, 0).encode(0, false, false, 0);
        return b;
    }

    @Test
    void aConnectMustNameTheHostAndSubsystemOfTheTlsIdentity() throws IOException {
        try (RawHost h = new RawHost(required, client(OTHER, TlsPsk.Derivation.RFC8446))) {
            h.icreq();
            CompletionQueueEntry c = h.connect(0, NQN, RawHost.HOST_NQN, 0xffff).cqe();
            assertEquals(Status.CONNECT_INVALID_HOST, c.status(), "TLS as one host, Connect as another");
        }
        try (RawHost h = new RawHost(required, NvmeTls.client(KEY, RawHost.HOST_NQN, Nqn.DISCOVERY, 0,
                TlsPsk.Derivation.RFC8446))) {
            h.icreq();
            assertEquals(Status.CONNECT_INVALID_PARAMETERS, h.connect(0, NQN, RawHost.HOST_NQN, 0xffff).cqe().status(),
                    "TLS for the discovery subsystem, Connect to another: refused");
        }
    }

    @Test
    void aWrongKeyOrAnUnknownHostFailsTheHandshake() {
        TlsPsk wrong = TlsPsk.create(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
            22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32}, 1);
        assertThrows(IOException.class, () -> new RawHost(required, NvmeTls.client(wrong, RawHost.HOST_NQN, NQN, 0,
                TlsPsk.Derivation.RFC8446)).close());
        assertThrows(IOException.class, () -> new RawHost(required, client("nqn.2026-11.io.nvmeof:stranger",
                TlsPsk.Derivation.RFC8446)).close());
        assertThrows(IOException.class, () -> new RawHost(required, NvmeTls.client(TlsPsk.create(new byte[48], 2),
                RawHost.HOST_NQN, NQN, 0, TlsPsk.Derivation.RFC8446)).close(), "a SHA-384 PSK where a SHA-256 one is set");
    }

    @Test
    void identityVersionOneWithTheOlderDerivation() throws IOException {
        try (RawHost h = new RawHost(required, NvmeTls.client(KEY, RawHost.HOST_NQN, Nqn.DISCOVERY, 1,
                TlsPsk.Derivation.COMPAT))) {
            h.icreq();
            assertEquals(Status.SUCCESS, h.connect(0, Nqn.DISCOVERY, RawHost.HOST_NQN, 0xffff).cqe().status());
        }
    }
}
