package io.nvmeof.target;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.protocol.CompletionQueueEntry;
import io.nvmeof.protocol.Registers;
import io.nvmeof.protocol.Sgl;
import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.auth.AuthMessage;
import io.nvmeof.protocol.auth.DhGroup;
import io.nvmeof.protocol.auth.Dhchap;
import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.protocol.auth.DhchapKey;
import io.nvmeof.protocol.tcp.DataPdu;
import io.nvmeof.protocol.tcp.PduType;
import io.nvmeof.target.backend.RamBackend;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.SecureRandom;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The controller's side of DH-HMAC-CHAP on the wire, driven by a raw host: the order of the
 * messages, what each misstep gets (AUTH_Failure1 with the spec's reason, then the end of the
 * connection), Authentication Required for everything else until the queue is authenticated,
 * and the responses checked against a host computing them by hand.
 */
class AuthenticationTest {
    static final String NQN = "nqn.2026-11.io.nvmeof:auth";
    static final String OTHER_HOST = "nqn.2014-08.org.nvmexpress:uuid:99999999-2222-3333-4444-555555555555";
    static final SecureRandom RANDOM = new SecureRandom();
    Target target;
    InetSocketAddress address;
    DhchapKey hostKey;
    DhchapKey controllerKey;

    @BeforeEach
    void start() throws IOException {
        Target.Options o = Target.Options.defaults();
        o = o.with(Settings.EVENT_LOOP_THREADS, 2);
        o = o.with(Settings.MIN_KEEP_ALIVE_MS, 1000L);
        target = new Target(o);
        Subsystem s = new Subsystem(NQN, "AUTH1", "auth", "1.0");
        s.addNamespace(new Namespace(NQN, 1, new RamBackend(1 << 20, 4096), false, null));
        target.addSubsystem(s);
        hostKey = DhchapKey.create(DhchapKey.randomSecret(32, RANDOM), DhchapHash.SHA256, RawHost.HOST_NQN);
        controllerKey = DhchapKey.create(DhchapKey.randomSecret(48, RANDOM), null, NQN);
        target.hostSecurity(List.of(new HostSecurity(RawHost.HOST_NQN, hostKey, controllerKey,
                List.of(DhchapHash.SHA384, DhchapHash.SHA256), List.of(DhGroup.FFDHE2048, DhGroup.NULL))));
        address = target.listenTcp(new InetSocketAddress("127.0.0.1", 0));
    }

    @AfterEach
    void stop() throws IOException {
        target.close();
    }

    /** ICReq and an admin Connect; returns the Connect's DW0. */
    private static int connect(RawHost h, String hostNqn) throws IOException {
        h.icreq();
        CompletionQueueEntry cqe = h.connect(0, NQN, hostNqn, 0xffff).cqe();
        assertEquals(Status.SUCCESS, cqe.status());
        return cqe.dw0();
    }

    private static CompletionQueueEntry authSend(RawHost h, AuthMessage m) throws IOException {
        return authSend(h, m.toBuffer(), AuthMessage.SECP);
    }

    private static CompletionQueueEntry authSend(RawHost h, ByteBuffer msg, int secp) throws IOException {
        byte[] b = new byte[msg.remaining()];
        msg.get(b);
        RawHost.Received r = h.command(s -> s.authentication(true, secp, 1, 1, b.length).sgl(0, b.length, Sgl.IN_CAPSULE), b);
        assertEquals(PduType.CAPSULE_RESP, r.type());
        return r.cqe();
    }

    /** An Authentication Receive of 4 KiB: the message, or null if the command failed (status in {@code cqe[0]}). */
    private static ByteBuffer authReceive(RawHost h, CompletionQueueEntry[] cqe) throws IOException {
        RawHost.Received r = h.command(s -> s.authentication(false, AuthMessage.SECP, 1, 1, 4096)
                .sgl(0, 4096, Sgl.TCP_TRANSPORT), null);
        ByteBuffer data = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
        while (r.type() == PduType.C2H_DATA) {
            int off = (int) r.u32(DataPdu.DATAO_OFFSET);
            int len = (int) r.u32(DataPdu.DATAL_OFFSET);
            data.put(off, r.bytes(), r.u8(3), len);
            r = h.receive();
        }
        assertEquals(PduType.CAPSULE_RESP, r.type());
        cqe[0] = r.cqe();
        return r.cqe().status().isSuccess() ? data : null;
    }

    private static ByteBuffer authReceive(RawHost h) throws IOException {
        CompletionQueueEntry[] cqe = new CompletionQueueEntry[1];
        ByteBuffer b = authReceive(h, cqe);
        assertEquals(Status.SUCCESS, cqe[0].status());
        return b;
    }

    private static AuthMessage.Negotiate negotiate(int tid) {
        return new AuthMessage.Negotiate(tid, 0, new int[] {1, 2, 3}, new int[] {0, 1, 2, 3, 4, 5});
    }

    /** The explanation of the AUTH_Failure1 in {@code m}. */
    private static int failure1(ByteBuffer m) throws AuthMessage.AuthException {
        assertEquals(AuthMessage.kind(AuthMessage.TYPE_COMMON, AuthMessage.ID_FAILURE1), AuthMessage.kind(m));
        return AuthMessage.Failure.decode(m, m.remaining()).explanation();
    }

    @Test
    void connectAsksForAuthenticationAndNothingElseRunsBeforeIt() throws Exception {
        try (RawHost h = new RawHost(address)) {
            int dw0 = connect(h, RawHost.HOST_NQN);
            assertEquals(1 << 17, dw0 & (3 << 17), "AUTHREQ.ATR set, ASCR clear");
            for (CompletionQueueEntry c : new CompletionQueueEntry[] {
                h.command(s -> s.propertyGet(Registers.CAP, 8), null).cqe(),
                h.command(s -> s.propertySet(Registers.CC, 4, Registers.ccEnable()), null).cqe(),
                h.command(RawHost::keepAlive, null).cqe()}) {
                assertEquals(Status.AUTHENTICATION_REQUIRED, c.status());
            }
            // and a wrong security protocol is a bad field, not a protocol failure
            assertEquals(Status.INVALID_FIELD, authSend(h, negotiate(1).toBuffer(), 0xEA).status());
        }
        try (RawHost h = new RawHost(address)) {
            assertEquals(0, connect(h, OTHER_HOST) & (1 << 17), "a host without a key is not asked");
        }
    }

    @Test
    void aHostComputingByHandAuthenticatesBothWaysAndThenRunsCommands() throws Exception {
        try (RawHost h = new RawHost(address)) {
            connect(h, RawHost.HOST_NQN);
            int tid = 0x1234;
            assertEquals(Status.SUCCESS, authSend(h, negotiate(tid)).status());
            ByteBuffer m = authReceive(h);
            AuthMessage.Challenge ch = AuthMessage.Challenge.decode(m, m.remaining());
            assertEquals(tid, ch.tid());
            assertEquals(DhchapHash.SHA384.id, ch.hashId(), "the target's first preference the host offers");
            assertEquals(DhGroup.FFDHE2048.id, ch.dhGroupId());
            assertEquals(48, ch.c1().length);
            assertEquals(256, ch.dhValue().length);
            DhGroup.KeyPair kp = DhGroup.FFDHE2048.generate(RANDOM);
            byte[] session = kp.sharedSecret(ch.dhValue());
            byte[] r1 = Dhchap.hostResponse(DhchapHash.SHA384, hostKey.transformed(RawHost.HOST_NQN), ch.c1(),
                    ch.seqnum(), tid, 0, RawHost.HOST_NQN, NQN, session);
            byte[] c2 = Dhchap.challenge(48, RANDOM);
            int s2 = 77;
            assertEquals(Status.SUCCESS, authSend(h, new AuthMessage.Reply(tid, s2, r1, c2, true, kp.publicValue())).status());
            m = authReceive(h);
            AuthMessage.Success1 ok = AuthMessage.Success1.decode(m, m.remaining());
            assertArrayEquals(Dhchap.controllerResponse(DhchapHash.SHA384, controllerKey.transformed(NQN), c2, s2, tid, 0,
                    NQN, RawHost.HOST_NQN, session), ok.response(), "the controller proved its key");
            // not done until Success2
            assertEquals(Status.AUTHENTICATION_REQUIRED, h.command(s -> s.propertyGet(Registers.CAP, 8), null).cqe().status());
            assertEquals(Status.SUCCESS, authSend(h, new AuthMessage.Success2(tid)).status());
            assertEquals(Status.SUCCESS, h.command(s -> s.propertySet(Registers.CC, 4, Registers.ccEnable()), null)
                    .cqe().status());
            // re-authentication, one-way and without DH this time: the queue keeps working meanwhile
            assertEquals(Status.SUCCESS, authSend(h, new AuthMessage.Negotiate(tid + 1, 0, new int[] {1},
                    new int[] {0})).status());
            assertEquals(Status.SUCCESS, h.command(RawHost::keepAlive, null).cqe().status());
            m = authReceive(h);
            ch = AuthMessage.Challenge.decode(m, m.remaining());
            assertEquals(0, ch.dhValue().length);
            r1 = Dhchap.hostResponse(DhchapHash.SHA256, hostKey.transformed(RawHost.HOST_NQN), ch.c1(), ch.seqnum(),
                    tid + 1, 0, RawHost.HOST_NQN, NQN, null);
            assertEquals(Status.SUCCESS, authSend(h, new AuthMessage.Reply(tid + 1, 0, r1, null, false, new byte[0])).status());
            m = authReceive(h);
            assertNull(AuthMessage.Success1.decode(m, m.remaining()).response(), "no controller response unasked");
            assertEquals(Status.SUCCESS, h.command(RawHost::keepAlive, null).cqe().status());
        }
    }

    @Test
    void aWrongResponseGetsFailure1AndTheConnectionEnds() throws Exception {
        try (RawHost h = new RawHost(address)) {
            connect(h, RawHost.HOST_NQN);
            authSend(h, negotiate(5));
            ByteBuffer m = authReceive(h);
            AuthMessage.Challenge ch = AuthMessage.Challenge.decode(m, m.remaining());
            DhGroup.KeyPair kp = DhGroup.FFDHE2048.generate(RANDOM);
            byte[] wrong = DhchapKey.create(DhchapKey.randomSecret(32, RANDOM), null, "x").transformed(RawHost.HOST_NQN);
            byte[] r1 = Dhchap.hostResponse(DhchapHash.SHA384, wrong, ch.c1(), ch.seqnum(), 5, 0, RawHost.HOST_NQN, NQN,
                    kp.sharedSecret(ch.dhValue()));
            assertEquals(Status.SUCCESS, authSend(h, new AuthMessage.Reply(5, 0, r1, null, false, kp.publicValue())).status(),
                    "the Send itself succeeds; the verdict comes by Receive");
            assertEquals(AuthMessage.FAILED, failure1(authReceive(h)));
            assertTrue(h.closedByPeer(), "the target ends the connection after AUTH_Failure1");
        }
    }

    @Test
    void messagesOutOfOrderOrMalformedGetTheSpecsReasons() throws Exception {
        // a Reply before any Negotiate
        assertFailure(AuthMessage.INCORRECT_MESSAGE, h -> authSend(h, new AuthMessage.Reply(1, 0, new byte[48],
                null, false, new byte[0])));
        // a Receive before any Negotiate
        assertFailure(AuthMessage.INCORRECT_MESSAGE, h -> { });
        // Success2 right after Negotiate
        assertFailure(AuthMessage.INCORRECT_MESSAGE, h -> {
            authSend(h, negotiate(3));
            authSend(h, new AuthMessage.Success2(3));
        });
        // secure channel concatenation asked for
        assertFailure(AuthMessage.CONCAT_MISMATCH, h -> authSend(h, new AuthMessage.Negotiate(3, 1, new int[] {1},
                new int[] {0})));
        // no hash in common, no DH group in common
        assertFailure(AuthMessage.HASH_UNUSABLE, h -> authSend(h, new AuthMessage.Negotiate(3, 0, new int[] {3},
                new int[] {0})));
        assertFailure(AuthMessage.DHGROUP_UNUSABLE, h -> authSend(h, new AuthMessage.Negotiate(3, 0, new int[] {1},
                new int[] {5})));
        // a reply for another transaction, and one with a DH value of the wrong size
        assertFailure(AuthMessage.INCORRECT_PAYLOAD, h -> {
            authSend(h, negotiate(3));
            authReceive(h);
            authSend(h, new AuthMessage.Reply(4, 0, new byte[48], null, false, new byte[256]));
        });
        assertFailure(AuthMessage.INCORRECT_PAYLOAD, h -> {
            authSend(h, negotiate(3));
            authReceive(h);
            authSend(h, new AuthMessage.Reply(3, 0, new byte[48], null, false, new byte[128]));
        });
        // a truncated negotiate
        assertFailure(AuthMessage.INCORRECT_PAYLOAD, h -> authSend(h, ByteBuffer.wrap(new byte[] {0, 0, 0, 0, 3, 0}),
                AuthMessage.SECP));
    }

    interface Step {
        void run(RawHost h) throws Exception;
    }

    /** After {@code steps}, the next Authentication Receive is AUTH_Failure1 with {@code reason}, and the connection ends. */
    private void assertFailure(int reason, Step steps) throws Exception {
        try (RawHost h = new RawHost(address)) {
            connect(h, RawHost.HOST_NQN);
            steps.run(h);
            assertEquals(reason, failure1(authReceive(h)), "explanation");
            assertTrue(h.closedByPeer(), "connection ended");
        }
    }

    @Test
    void aHostWithoutAKeyThatTriesIsRefusedAndAnIoQueueNeedsItsOwnAuthentication() throws Exception {
        try (RawHost h = new RawHost(address)) {
            connect(h, OTHER_HOST);
            authSend(h, negotiate(9));
            assertEquals(AuthMessage.FAILED, failure1(authReceive(h)));
        }
        int cntlid;
        try (RawHost admin = new RawHost(address)) {
            cntlid = connect(admin, RawHost.HOST_NQN) & 0xffff;
            authenticate(admin, 1);
            assertEquals(Status.SUCCESS, admin.command(s -> s.propertySet(Registers.CC, 4, Registers.ccEnable()), null)
                    .cqe().status());
            try (RawHost io = new RawHost(address)) {
                io.icreq();
                CompletionQueueEntry c = io.connect(1, NQN, RawHost.HOST_NQN, cntlid).cqe();
                assertEquals(Status.SUCCESS, c.status());
                assertEquals(1 << 17, c.dw0() & (1 << 17), "the I/O queue must authenticate too");
                RawHost.Received read = io.command(s -> s.opcode(2).psdt(1).nsid(1).sgl(0, 4096, Sgl.TCP_TRANSPORT), null);
                assertEquals(Status.AUTHENTICATION_REQUIRED, read.cqe().status());
                authenticate(io, 2);
                read = io.command(s -> s.opcode(2).psdt(1).nsid(1).sgl(0, 4096, Sgl.TCP_TRANSPORT), null);
                assertEquals(PduType.C2H_DATA, read.type(), "a read runs once the queue is authenticated");
            }
        }
    }

    /** The whole exchange, one-way, NULL group. */
    private void authenticate(RawHost h, int tid) throws Exception {
        authSend(h, new AuthMessage.Negotiate(tid, 0, new int[] {1}, new int[] {0}));
        ByteBuffer m = authReceive(h);
        AuthMessage.Challenge ch = AuthMessage.Challenge.decode(m, m.remaining());
        byte[] r1 = Dhchap.hostResponse(DhchapHash.SHA256, hostKey.transformed(RawHost.HOST_NQN), ch.c1(), ch.seqnum(),
                tid, 0, RawHost.HOST_NQN, NQN, null);
        authSend(h, new AuthMessage.Reply(tid, 0, r1, null, false, new byte[0]));
        m = authReceive(h);
        assertNotNull(AuthMessage.Success1.decode(m, m.remaining()));
    }

    @Test
    void aHostThatStallsIsDisconnectedAfterTheKeepAliveTimeout() throws Exception {
        try (RawHost h = new RawHost(address)) {
            h.icreq();
            CompletionQueueEntry c = h.command(s -> s.connect(0, 32, 0, 1000).sgl(0, 1024, Sgl.IN_CAPSULE),
                    RawHost.connectData(NQN, RawHost.HOST_NQN, 0xffff)).cqe();
            assertEquals(Status.SUCCESS, c.status());
            authSend(h, negotiate(1));
            long t0 = System.nanoTime();
            assertTrue(h.closedByPeer(), "a host that never fetches its challenge");
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms >= 700 && ms < 6000, "closed after " + ms + " ms");
        }
    }
}
