package io.nvmeof.initiator;

import io.nvmeof.protocol.Status;
import io.nvmeof.protocol.auth.AuthMessage;
import io.nvmeof.protocol.auth.AuthMessage.AuthException;
import io.nvmeof.protocol.auth.DhGroup;
import io.nvmeof.protocol.auth.Dhchap;
import io.nvmeof.protocol.auth.DhchapHash;
import io.nvmeof.protocol.auth.DhchapKey;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * DH-HMAC-CHAP, the host's side (NVMe Base 2.0, 8.13.5), on one queue: AUTH_Negotiate offering
 * every hash and DH group, the controller's challenge answered, and, with a controller key,
 * the controller's own response checked before DH-HMAC-CHAP_Success2. A failure of ours goes
 * to the controller as AUTH_Failure2; one of the controller's (AUTH_Failure1) or a controller
 * that fails to prove itself ends the connect with an {@link AuthenticationException}. Runs
 * synchronously on the caller's thread, as the rest of an association's bring-up.
 */
final class HostAuthentication {
    private static final SecureRandom RANDOM = new SecureRandom();
    /** The buffer an Authentication Receive offers: the kernel's 4 KiB fits every message. */
    static final int RECEIVE_LENGTH = 4096;
    private static final int[] HASHES = {DhchapHash.SHA256.id, DhchapHash.SHA384.id, DhchapHash.SHA512.id};
    /** Transaction identifiers, one per authentication, as the kernel counts them per controller. */
    private static final AtomicInteger TRANSACTIONS = new AtomicInteger(RANDOM.nextInt());

    /** Authentication was refused, or the controller failed to authenticate itself. */
    static final class AuthenticationException extends IOException {
        private static final long serialVersionUID = 1L;

        AuthenticationException(String message) {
            super(message);
        }
    }

    private HostAuthentication() {
    }

    /** Authenticates queue {@code q} of controller {@code c} as host {@code hostNqn} to subsystem {@code subNqn}. */
    static Authenticated authenticate(Controller c, Queue q, String hostNqn, String subNqn, ConnectOptions options)
            throws IOException {
        DhchapKey hostKey = options.dhchapKey;
        DhchapKey controllerKey = options.dhchapControllerKey;
        List<DhGroup> offered = options.dhchapDhGroups();
        int[] groups = new int[offered.size()];
        for (int i = 0; i < groups.length; i++) {
            groups[i] = offered.get(i).id;
        }
        if (hostKey == null) {
            throw new AuthenticationException("the controller of " + subNqn + " requires DH-HMAC-CHAP authentication,"
                    + " and no host key was given (--dhchap-secret-file)");
        }
        int tid = TRANSACTIONS.incrementAndGet() & 0xffff;
        String where = "queue " + q.qid() + " of " + subNqn;
        send(c, q, new AuthMessage.Negotiate(tid, 0, HASHES, groups), "AUTH_Negotiate");
        ByteBuffer in = receive(c, q, "DH-HMAC-CHAP_Challenge");
        failedByController(in, where);
        AuthMessage.Challenge ch;
        DhchapHash hash;
        DhGroup group;
        byte[] session = null;
        byte[] publicValue = new byte[0];
        try {
            expectKind(in, AuthMessage.TYPE_DHCHAP, AuthMessage.ID_CHALLENGE, "DH-HMAC-CHAP_Challenge");
            ch = AuthMessage.Challenge.decode(in, in.remaining());
            if (ch.tid() != tid) {
                throw new AuthException(AuthMessage.INCORRECT_MESSAGE, "challenge for transaction " + ch.tid() + ", not " + tid);
            }
            hash = DhchapHash.of(ch.hashId());
            if (hash == null || ch.c1().length != hash.length) {
                throw new AuthException(AuthMessage.HASH_UNUSABLE, "challenge with hash " + ch.hashId() + " and HL "
                        + ch.c1().length);
            }
            group = DhGroup.of(ch.dhGroupId());
            if (group != null && !offered.contains(group)) {
                throw new AuthException(AuthMessage.DHGROUP_UNUSABLE, "challenge with DH group " + group.kernelName
                        + ", which this host did not offer");
            }
            if (group == null || ch.dhValue().length != group.valueLength()) {
                throw new AuthException(group == null ? AuthMessage.DHGROUP_UNUSABLE : AuthMessage.INCORRECT_PAYLOAD,
                        "challenge with DH group " + ch.dhGroupId() + " and DHVLEN " + ch.dhValue().length);
            }
            if (group != DhGroup.NULL) {
                DhGroup.KeyPair kp = group.generate(RANDOM);
                session = kp.sharedSecret(ch.dhValue());
                publicValue = kp.publicValue();
            }
        } catch (AuthException e) {
            failure2(c, q, tid, e.reason);
            throw new AuthenticationException("authentication on " + where + " failed: " + e.getMessage());
        } catch (IllegalArgumentException e) {
            failure2(c, q, tid, AuthMessage.INCORRECT_PAYLOAD);
            throw new AuthenticationException("authentication on " + where + " failed: " + e.getMessage());
        }
        byte[] key = hostKey.transformed(hostNqn);
        byte[] r1 = Dhchap.hostResponse(hash, key, ch.c1(), ch.seqnum(), tid, 0, hostNqn, subNqn, session);
        Dhchap.wipe(key);
        byte[] c2 = null;
        int s2 = 0;
        byte[] expected = null;
        if (controllerKey != null) {
            c2 = Dhchap.challenge(hash.length, RANDOM);
            s2 = Dhchap.sequenceNumber(RANDOM);
            byte[] ck = controllerKey.transformed(subNqn);
            expected = Dhchap.controllerResponse(hash, ck, c2, s2, tid, 0, subNqn, hostNqn, session);
            Dhchap.wipe(ck);
        }
        Dhchap.wipe(session);
        send(c, q, new AuthMessage.Reply(tid, s2, r1, c2, c2 != null, publicValue), "DH-HMAC-CHAP_Reply");
        in = receive(c, q, "DH-HMAC-CHAP_Success1");
        failedByController(in, where);
        try {
            expectKind(in, AuthMessage.TYPE_DHCHAP, AuthMessage.ID_SUCCESS1, "DH-HMAC-CHAP_Success1");
            AuthMessage.Success1 s = AuthMessage.Success1.decode(in, in.remaining());
            if (s.tid() != tid || s.hl() != hash.length) {
                throw new AuthException(AuthMessage.INCORRECT_PAYLOAD, "success for transaction " + s.tid() + " with HL "
                        + s.hl());
            }
            if (expected != null) {
                if (s.response() == null || !MessageDigest.isEqual(expected, s.response())) {
                    throw new AuthException(AuthMessage.FAILED, "the controller did not prove it holds the controller key"
                            + (s.response() == null ? " (it sent no response)" : " (its response does not match)"));
                }
                send(c, q, new AuthMessage.Success2(tid), "DH-HMAC-CHAP_Success2");
            }
        } catch (AuthException e) {
            failure2(c, q, tid, e.reason);
            throw new AuthenticationException("authentication on " + where + " failed: " + e.getMessage());
        }
        return new Authenticated(hash.kernelName(), group.kernelName, expected != null);
    }

    private static void expectKind(ByteBuffer in, int type, int id, String what) throws AuthException {
        if (AuthMessage.kind(in) != AuthMessage.kind(type, id)) {
            throw new AuthException(AuthMessage.INCORRECT_MESSAGE, "expected " + what + ", got message "
                    + String.format("%04x", AuthMessage.kind(in) & 0xffff));
        }
    }

    /** AUTH_Failure1 from the controller ends it here. */
    private static void failedByController(ByteBuffer in, String where) throws AuthenticationException {
        if (AuthMessage.kind(in) == AuthMessage.kind(AuthMessage.TYPE_COMMON, AuthMessage.ID_FAILURE1)) {
            int why;
            try {
                why = AuthMessage.Failure.decode(in, in.remaining()).explanation();
            } catch (AuthException e) {
                why = AuthMessage.INCORRECT_PAYLOAD;
            }
            throw new AuthenticationException("the controller refused authentication on " + where + ": "
                    + AuthMessage.explain(why) + (why == AuthMessage.FAILED ? " (wrong or missing key?)" : ""));
        }
    }

    private static void failure2(Controller c, Queue q, int tid, int reason) {
        try {
            send(c, q, new AuthMessage.Failure(tid, false, reason), "AUTH_Failure2");
        } catch (IOException ignored) {
            // the connection ends anyway
        }
    }

    private static void send(Controller c, Queue q, AuthMessage m, String what) throws IOException {
        ByteBuffer b = m.toBuffer();
        int len = b.remaining();
        c.run(q, Command.of("Authentication Send (" + what + ")",
                s -> s.authentication(true, AuthMessage.SECP, AuthMessage.SPSP0, AuthMessage.SPSP1, len)).dataOut(b, len));
    }

    private static ByteBuffer receive(Controller c, Queue q, String what) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(RECEIVE_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        try {
            c.run(q, Command.of("Authentication Receive (" + what + ")",
                    s -> s.authentication(false, AuthMessage.SECP, AuthMessage.SPSP0, AuthMessage.SPSP1, RECEIVE_LENGTH))
                    .dataIn(b, RECEIVE_LENGTH));
        } catch (NvmeStatusException e) {
            if (e.status().equals(Status.AUTHENTICATION_REQUIRED)) {
                throw new AuthenticationException("the controller refused Authentication Receive: " + e.getMessage());
            }
            throw e;
        }
        b.clear();
        return b;
    }
}
