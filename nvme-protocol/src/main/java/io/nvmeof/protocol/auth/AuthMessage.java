package io.nvmeof.protocol.auth;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The messages of in-band authentication carried by Authentication Send and Receive (NVMe
 * Base 2.0, 8.13.5 and Figures 173-181): AUTH_Negotiate, DH-HMAC-CHAP_Challenge, _Reply,
 * _Success1, _Success2, AUTH_Failure1 and AUTH_Failure2. All little-endian. Each message
 * type is a record that encodes itself and is decoded with checks that name what is wrong
 * by a {@link AuthException} carrying the spec's reason code explanation.
 */
public sealed interface AuthMessage {
    /** SECP of Authentication Send/Receive: NVMe-oF in-band authentication. */
    int SECP = 0xE9;
    /** SPSP0 and SPSP1 for DH-HMAC-CHAP messages. */
    int SPSP0 = 0x01;
    int SPSP1 = 0x01;

    int TYPE_COMMON = 0x00;
    int TYPE_DHCHAP = 0x01;
    int ID_NEGOTIATE = 0x00;
    int ID_CHALLENGE = 0x01;
    int ID_REPLY = 0x02;
    int ID_SUCCESS1 = 0x03;
    int ID_SUCCESS2 = 0x04;
    int ID_FAILURE2 = 0xF0;
    int ID_FAILURE1 = 0xF1;
    /** AUTH protocol identifier of DH-HMAC-CHAP in a negotiate descriptor. */
    int AUTHID_DHCHAP = 0x01;

    /** Reason code of a failure message: authentication failure. */
    int REASON_FAILED = 0x01;
    /** Reason code explanations (Figure 181). */
    int FAILED = 0x01;
    int PROTOCOL_UNUSABLE = 0x02;
    int CONCAT_MISMATCH = 0x03;
    int HASH_UNUSABLE = 0x04;
    int DHGROUP_UNUSABLE = 0x05;
    int INCORRECT_PAYLOAD = 0x06;
    int INCORRECT_MESSAGE = 0x07;

    /** Writes the message at the buffer's position; returns its length. */
    int encode(ByteBuffer b);

    /** Bytes the message takes. */
    int size();

    /** The transaction identifier. */
    int tid();

    /** A fresh little-endian buffer holding the message. */
    default ByteBuffer toBuffer() {
        ByteBuffer b = ByteBuffer.allocate(size()).order(ByteOrder.LITTLE_ENDIAN);
        encode(b);
        return b.flip();
    }

    /** Name of a reason code explanation, for logs. */
    static String explain(int code) {
        return switch (code) {
            case FAILED -> "authentication failed";
            case PROTOCOL_UNUSABLE -> "authentication protocol not usable";
            case CONCAT_MISMATCH -> "secure channel concatenation mismatch";
            case HASH_UNUSABLE -> "hash function not usable";
            case DHGROUP_UNUSABLE -> "DH group not usable";
            case INCORRECT_PAYLOAD -> "incorrect payload";
            case INCORRECT_MESSAGE -> "incorrect protocol message";
            default -> "reason " + code;
        };
    }

    /** A message that cannot be accepted, with the reason code explanation to answer it with. */
    final class AuthException extends Exception {
        private static final long serialVersionUID = 1L;
        public final int reason;

        public AuthException(int reason, String message) {
            super(message);
            this.reason = reason;
        }
    }

    /** The auth type and id of a message (its first two bytes), or -1 if too short. */
    static int kind(ByteBuffer b) {
        if (b.remaining() < 2) {
            return -1;
        }
        return (b.get(b.position()) & 0xff) << 8 | b.get(b.position() + 1) & 0xff;
    }

    static int kind(int type, int id) {
        return type << 8 | id;
    }

    /** Checks that a message of {@code length} bytes holds at least its {@code header}; returns its transaction ID. */
    private static int header(ByteBuffer b, int length, int header, String what) throws AuthException {
        if (length < header) {
            throw new AuthException(INCORRECT_PAYLOAD, what + " of " + length + " bytes");
        }
        return b.getShort(b.position() + 4) & 0xffff;
    }

    /** AUTH_Negotiate with one DH-HMAC-CHAP descriptor. */
    record Negotiate(int tid, int scc, int[] hashes, int[] dhGroups) implements AuthMessage {
        public static final int HEADER = 8;
        public static final int DESCRIPTOR = 64;

        @Override
        public int size() {
            return HEADER + DESCRIPTOR;
        }

        @Override
        public int encode(ByteBuffer b) {
            int at = b.position();
            b.put((byte) TYPE_COMMON).put((byte) ID_NEGOTIATE).putShort((short) 0).putShort((short) tid)
                    .put((byte) scc).put((byte) 1);
            b.put((byte) AUTHID_DHCHAP).put((byte) 0).put((byte) hashes.length).put((byte) dhGroups.length);
            byte[] ids = new byte[60];
            for (int i = 0; i < hashes.length; i++) {
                ids[i] = (byte) hashes[i];
            }
            for (int i = 0; i < dhGroups.length; i++) {
                ids[30 + i] = (byte) dhGroups[i];
            }
            b.put(ids);
            return b.position() - at;
        }

        /** Decodes the DH-HMAC-CHAP descriptor of an AUTH_Negotiate of {@code length} bytes. */
        public static Negotiate decode(ByteBuffer b, int length) throws AuthException {
            int at = b.position();
            int tid = header(b, length, HEADER, "AUTH_Negotiate");
            int scc = b.get(at + 6) & 0xff;
            int napd = b.get(at + 7) & 0xff;
            if (napd == 0 || length != HEADER + napd * DESCRIPTOR) {
                throw new AuthException(INCORRECT_PAYLOAD, "AUTH_Negotiate of " + length + " bytes with "
                        + napd + " protocol descriptors");
            }
            for (int d = 0; d < napd; d++) {
                int o = at + HEADER + d * DESCRIPTOR;
                if ((b.get(o) & 0xff) != AUTHID_DHCHAP) {
                    continue;
                }
                int halen = b.get(o + 2) & 0xff;
                int dhlen = b.get(o + 3) & 0xff;
                if (halen > 30 || dhlen > 30) {
                    throw new AuthException(INCORRECT_PAYLOAD, "AUTH_Negotiate lists " + halen + " hashes and "
                            + dhlen + " DH groups (at most 30 each)");
                }
                int[] hashes = new int[halen];
                int[] groups = new int[dhlen];
                for (int i = 0; i < halen; i++) {
                    hashes[i] = b.get(o + 4 + i) & 0xff;
                }
                for (int i = 0; i < dhlen; i++) {
                    groups[i] = b.get(o + 34 + i) & 0xff;
                }
                return new Negotiate(tid, scc, hashes, groups);
            }
            throw new AuthException(PROTOCOL_UNUSABLE, "AUTH_Negotiate offers no DH-HMAC-CHAP");
        }
    }

    /** DH-HMAC-CHAP_Challenge: C1 and, with a DH group, the controller's public value. */
    record Challenge(int tid, int hashId, int dhGroupId, int seqnum, byte[] c1, byte[] dhValue) implements AuthMessage {
        public static final int HEADER = 16;

        @Override
        public int size() {
            return HEADER + c1.length + dhValue.length;
        }

        @Override
        public int encode(ByteBuffer b) {
            int at = b.position();
            b.put((byte) TYPE_DHCHAP).put((byte) ID_CHALLENGE).putShort((short) 0).putShort((short) tid)
                    .put((byte) c1.length).put((byte) 0).put((byte) hashId).put((byte) dhGroupId)
                    .putShort((short) dhValue.length).putInt(seqnum).put(c1).put(dhValue);
            return b.position() - at;
        }

        public static Challenge decode(ByteBuffer b, int length) throws AuthException {
            int at = b.position();
            int tid = header(b, length, HEADER, "DH-HMAC-CHAP_Challenge");
            int hl = b.get(at + 6) & 0xff;
            int hashId = b.get(at + 8) & 0xff;
            int group = b.get(at + 9) & 0xff;
            int dhvlen = b.getShort(at + 10) & 0xffff;
            int seq = b.getInt(at + 12);
            if (HEADER + hl + dhvlen > length) {
                throw new AuthException(INCORRECT_PAYLOAD, "DH-HMAC-CHAP_Challenge with HL " + hl + " and DHVLEN "
                        + dhvlen + " in " + length + " bytes");
            }
            byte[] c1 = new byte[hl];
            byte[] dh = new byte[dhvlen];
            b.get(at + HEADER, c1);
            b.get(at + HEADER + hl, dh);
            return new Challenge(tid, hashId, group, seq, c1, dh);
        }
    }

    /** DH-HMAC-CHAP_Reply: the host's response, its challenge C2 (if CVALID) and its public value. */
    record Reply(int tid, int seqnum, byte[] response, byte[] c2, boolean cvalid, byte[] dhValue) implements AuthMessage {
        public static final int HEADER = 16;

        @Override
        public int size() {
            return HEADER + 2 * response.length + dhValue.length;
        }

        @Override
        public int encode(ByteBuffer b) {
            int at = b.position();
            b.put((byte) TYPE_DHCHAP).put((byte) ID_REPLY).putShort((short) 0).putShort((short) tid)
                    .put((byte) response.length).put((byte) 0).put((byte) (cvalid ? 1 : 0)).put((byte) 0)
                    .putShort((short) dhValue.length).putInt(seqnum).put(response);
            b.put(cvalid ? c2 : new byte[response.length]).put(dhValue);
            return b.position() - at;
        }

        /** Decodes a reply whose HL must be {@code hl}. */
        public static Reply decode(ByteBuffer b, int length, int hl) throws AuthException {
            int at = b.position();
            int tid = header(b, length, HEADER, "DH-HMAC-CHAP_Reply");
            int got = b.get(at + 6) & 0xff;
            int cvalid = b.get(at + 8) & 0xff;
            int dhvlen = b.getShort(at + 10) & 0xffff;
            int seq = b.getInt(at + 12);
            if (got != hl) {
                throw new AuthException(INCORRECT_PAYLOAD, "DH-HMAC-CHAP_Reply with HL " + got + ", not " + hl);
            }
            if (length != HEADER + 2 * hl + dhvlen) {
                throw new AuthException(INCORRECT_PAYLOAD, "DH-HMAC-CHAP_Reply of " + length + " bytes with HL "
                        + hl + " and DHVLEN " + dhvlen);
            }
            if (cvalid > 1 || cvalid == 1 && seq == 0) {
                throw new AuthException(INCORRECT_PAYLOAD, "DH-HMAC-CHAP_Reply with CVALID " + cvalid
                        + " and SEQNUM " + Integer.toUnsignedString(seq));
            }
            byte[] r = new byte[hl];
            byte[] c2 = new byte[hl];
            byte[] dh = new byte[dhvlen];
            b.get(at + HEADER, r);
            b.get(at + HEADER + hl, c2);
            b.get(at + HEADER + 2 * hl, dh);
            return new Reply(tid, seq, r, c2, cvalid == 1, dh);
        }
    }

    /** DH-HMAC-CHAP_Success1: with RVALID, the controller's response to C2. */
    record Success1(int tid, int hl, byte[] response) implements AuthMessage {
        public static final int HEADER = 16;

        @Override
        public int size() {
            return HEADER + (response == null ? 0 : response.length);
        }

        @Override
        public int encode(ByteBuffer b) {
            int at = b.position();
            b.put((byte) TYPE_DHCHAP).put((byte) ID_SUCCESS1).putShort((short) 0).putShort((short) tid)
                    .put((byte) hl).put((byte) 0).put((byte) (response != null ? 1 : 0)).put(new byte[7]);
            if (response != null) {
                b.put(response);
            }
            return b.position() - at;
        }

        public static Success1 decode(ByteBuffer b, int length) throws AuthException {
            int at = b.position();
            int tid = header(b, length, HEADER, "DH-HMAC-CHAP_Success1");
            int hl = b.get(at + 6) & 0xff;
            boolean rvalid = (b.get(at + 8) & 0xff) == 1;
            byte[] r = null;
            if (rvalid) {
                if (HEADER + hl > length) {
                    throw new AuthException(INCORRECT_PAYLOAD, "DH-HMAC-CHAP_Success1 with HL " + hl + " in "
                            + length + " bytes");
                }
                r = new byte[hl];
                b.get(at + HEADER, r);
            }
            return new Success1(tid, hl, r);
        }
    }

    /** DH-HMAC-CHAP_Success2: the host accepted the controller's response. */
    record Success2(int tid) implements AuthMessage {
        public static final int SIZE = 16;

        @Override
        public int size() {
            return SIZE;
        }

        @Override
        public int encode(ByteBuffer b) {
            int at = b.position();
            b.put((byte) TYPE_DHCHAP).put((byte) ID_SUCCESS2).putShort((short) 0).putShort((short) tid).put(new byte[10]);
            return b.position() - at;
        }

        public static Success2 decode(ByteBuffer b, int length) throws AuthException {
            if (length != SIZE) {
                throw new AuthException(INCORRECT_PAYLOAD, "DH-HMAC-CHAP_Success2 of " + length + " bytes");
            }
            return new Success2(header(b, length, SIZE, "DH-HMAC-CHAP_Success2"));
        }
    }

    /** AUTH_Failure1 (controller to host) or AUTH_Failure2 (host to controller). */
    record Failure(int tid, boolean fromController, int explanation) implements AuthMessage {
        /** 8 bytes, as the kernel and SPDK send and expect it. */
        public static final int SIZE = 8;

        @Override
        public int size() {
            return SIZE;
        }

        @Override
        public int encode(ByteBuffer b) {
            int at = b.position();
            b.put((byte) TYPE_COMMON).put((byte) (fromController ? ID_FAILURE1 : ID_FAILURE2)).putShort((short) 0)
                    .putShort((short) tid).put((byte) REASON_FAILED).put((byte) explanation);
            return b.position() - at;
        }

        public static Failure decode(ByteBuffer b, int length) throws AuthException {
            int at = b.position();
            int tid = header(b, length, SIZE, "AUTH_Failure");
            return new Failure(tid, (b.get(at + 1) & 0xff) == ID_FAILURE1, b.get(at + 7) & 0xff);
        }
    }
}
