package io.nvmeof.protocol.auth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The messages' layouts, byte for byte as the kernel's {@code nvmf_auth_dhchap_*_data} and SPDK lay them out. */
class AuthMessageTest {
    static String hex(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return HexFormat.of().formatHex(a);
    }

    @Test
    void negotiateAsTheKernelHostSendsIt() throws Exception {
        AuthMessage.Negotiate n = new AuthMessage.Negotiate(0x0102, 0, new int[] {1, 2, 3}, new int[] {0, 1, 2, 3, 4, 5});
        ByteBuffer b = n.toBuffer();
        assertEquals(72, b.remaining());
        // type 00, id 00, rsvd, t_id 0x0102 LE, sc_c 0, napd 1 | authid 1, rsvd, halen 3, dhlen 6, idlist[0..2], idlist[30..35]
        String h = hex(b);
        assertEquals("0000000002010001" + "01000306" + "010203", h.substring(0, 30));
        assertEquals("000102030405", h.substring(16 + 8 + 60, 16 + 8 + 72));
        AuthMessage.Negotiate d = AuthMessage.Negotiate.decode(b, 72);
        assertEquals(0x0102, d.tid());
        assertArrayEquals(new int[] {1, 2, 3}, d.hashes());
        assertArrayEquals(new int[] {0, 1, 2, 3, 4, 5}, d.dhGroups());
        assertEquals(AuthMessage.INCORRECT_PAYLOAD, assertThrows(AuthMessage.AuthException.class,
                () -> AuthMessage.Negotiate.decode(b, 71)).reason);
    }

    @Test
    void challengeReplySuccessAndFailureRoundTrip() throws Exception {
        byte[] c1 = new byte[32];
        c1[0] = 7;
        byte[] dh = new byte[256];
        dh[255] = 9;
        ByteBuffer b = new AuthMessage.Challenge(5, 1, 1, 0xdeadbeef, c1, dh).toBuffer();
        assertEquals(16 + 32 + 256, b.remaining());
        assertEquals("0101000005002000010100" + "01efbeadde", hex(b).substring(0, 32));
        AuthMessage.Challenge c = AuthMessage.Challenge.decode(b, b.remaining());
        assertEquals(0xdeadbeef, c.seqnum());
        assertArrayEquals(c1, c.c1());
        assertArrayEquals(dh, c.dhValue());

        byte[] r = new byte[48];
        byte[] c2 = new byte[48];
        c2[47] = 1;
        ByteBuffer rb = new AuthMessage.Reply(5, 42, r, c2, true, new byte[0]).toBuffer();
        assertEquals(16 + 96, rb.remaining());
        AuthMessage.Reply reply = AuthMessage.Reply.decode(rb, rb.remaining(), 48);
        assertTrue(reply.cvalid());
        assertArrayEquals(c2, reply.c2());
        assertEquals(AuthMessage.INCORRECT_PAYLOAD, assertThrows(AuthMessage.AuthException.class,
                () -> AuthMessage.Reply.decode(rb, rb.remaining(), 32)).reason, "HL other than the negotiated hash's");
        ByteBuffer zeroSeq = new AuthMessage.Reply(5, 0, r, c2, true, new byte[0]).toBuffer();
        assertThrows(AuthMessage.AuthException.class, () -> AuthMessage.Reply.decode(zeroSeq, zeroSeq.remaining(), 48),
                "CVALID with sequence number 0");

        ByteBuffer s1 = new AuthMessage.Success1(5, 48, null).toBuffer();
        assertEquals(16, s1.remaining());
        assertNull(AuthMessage.Success1.decode(s1, 16).response());
        ByteBuffer s2 = new AuthMessage.Success2(5).toBuffer();
        assertEquals("0104000005000000000000000000000000".substring(0, 32), hex(s2));
        ByteBuffer f = new AuthMessage.Failure(5, true, AuthMessage.INCORRECT_MESSAGE).toBuffer();
        assertEquals("00f1000005000107", hex(f), "8 bytes, as the kernel and SPDK have it");
        AuthMessage.Failure fd = AuthMessage.Failure.decode(f, 8);
        assertTrue(fd.fromController());
        assertEquals(AuthMessage.INCORRECT_MESSAGE, fd.explanation());
    }

    @Test
    void kindIsTypeAndId() {
        ByteBuffer b = ByteBuffer.allocate(2).order(ByteOrder.LITTLE_ENDIAN).put((byte) 1).put((byte) 2).flip();
        assertEquals(AuthMessage.kind(AuthMessage.TYPE_DHCHAP, AuthMessage.ID_REPLY), AuthMessage.kind(b));
        assertEquals(-1, AuthMessage.kind(ByteBuffer.allocate(1)));
    }
}
