package io.nvmeof.protocol.auth;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import javax.crypto.Mac;

/**
 * The computations of DH-HMAC-CHAP (NVMe Base 2.0, 8.13.5.2 to 8.13.5.5), shared by host and
 * controller: the response R = HMAC(Kx, C || SEQ || TID || SC_C || role || NQN1 || 00 || NQN2)
 * where Kx is the transformed key, role is "HostHost" (R1, host to controller) or
 * "Controller" (R2), and C is the challenge, augmented with the session key when a DH group is
 * used: Ca = HMAC(H(session key), C).
 */
public final class Dhchap {
    private static final byte[] HOST = "HostHost".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONTROLLER = "Controller".getBytes(StandardCharsets.US_ASCII);

    private Dhchap() {
    }

    /** R1: the host's response to the controller's challenge C1 (sequence number S1). */
    public static byte[] hostResponse(DhchapHash h, byte[] hostKey, byte[] c1, int s1, int tid, int scc,
                                      String hostNqn, String subNqn, byte[] sessionKey) {
        return response(h, hostKey, c1, s1, tid, scc, HOST, hostNqn, subNqn, sessionKey);
    }

    /** R2: the controller's response to the host's challenge C2 (sequence number S2). */
    public static byte[] controllerResponse(DhchapHash h, byte[] controllerKey, byte[] c2, int s2, int tid, int scc,
                                            String subNqn, String hostNqn, byte[] sessionKey) {
        return response(h, controllerKey, c2, s2, tid, scc, CONTROLLER, subNqn, hostNqn, sessionKey);
    }

    private static byte[] response(DhchapHash h, byte[] key, byte[] challenge, int seq, int tid, int scc, byte[] role,
                                   String nqn1, String nqn2, byte[] sessionKey) {
        byte[] c = sessionKey == null ? challenge : augment(h, sessionKey, challenge);
        Mac m = h.hmac(key);
        m.update(c);
        m.update(new byte[] {(byte) seq, (byte) (seq >>> 8), (byte) (seq >>> 16), (byte) (seq >>> 24)});
        m.update(new byte[] {(byte) tid, (byte) (tid >>> 8)});
        m.update((byte) scc);
        m.update(role);
        m.update(nqn1.getBytes(StandardCharsets.UTF_8));
        m.update((byte) 0);
        m.update(nqn2.getBytes(StandardCharsets.UTF_8));
        return m.doFinal();
    }

    /** The augmented challenge HMAC(H(session key), C). */
    static byte[] augment(DhchapHash h, byte[] sessionKey, byte[] challenge) {
        byte[] hashed = h.digest(sessionKey);
        try {
            return h.hmac(hashed).doFinal(challenge);
        } finally {
            DhGroup.wipe(hashed);
        }
    }

    /** A sequence number: random, never 0 (0 means "no bidirectional authentication"). */
    public static int sequenceNumber(SecureRandom random) {
        int s;
        do {
            s = random.nextInt();
        } while (s == 0);
        return s;
    }

    /** Overwrites a secret that is no longer needed (null is fine). */
    public static void wipe(byte[] secret) {
        DhGroup.wipe(secret);
    }

    /** A fresh challenge of {@code length} random bytes. */
    public static byte[] challenge(int length, SecureRandom random) {
        byte[] c = new byte[length];
        random.nextBytes(c);
        return c;
    }
}
