package io.nvmeof.protocol.tls;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.protocol.auth.DhchapHash;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * PSK derivation against what Linux's own tools put in the kernel keyring: the expected values
 * below were exported with {@code nvme tls-key --export} after {@code nvme gen-tls-key --insert}
 * in the Debian 13 guest (nvme-cli 2.13, libnvme 1.13, the older label encoding), and computed
 * with RFC 8446's HkdfLabel for the newer encoding.
 */
class TlsPskTest {
    static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";
    static final String SUB = "nqn.2026-11.io.nvmeof:tls";
    static final byte[] SECRET32 = seq(32);
    static final byte[] SECRET48 = seq(48);

    static byte[] seq(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) i;
        }
        return b;
    }

    /** The key of an exported interchange string (its CRC stripped). */
    static byte[] exported(String base64) {
        byte[] raw = Base64.getDecoder().decode(base64);
        return Arrays.copyOf(raw, raw.length - 4);
    }

    @Test
    void interchangeFormatAsNvmeGenTlsKeyPrintsIt() {
        // nvme gen-tls-key --secret=000102...1f --hostnqn=HOST --subsysnqn=SUB
        String printed = "NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
        TlsPsk k = TlsPsk.parse(printed);
        assertEquals(printed, TlsPsk.create(SECRET32, 1).format());
        assertEquals(1, k.hashField());
        assertEquals(DhchapHash.SHA256, k.cipherHash());
        assertEquals("NVMeTLSkey-1:02:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vcSEgBQ==:",
                TlsPsk.create(SECRET48, 2).format());
        assertThrows(IllegalArgumentException.class, () -> TlsPsk.create(SECRET48, 1));
        assertThrows(IllegalArgumentException.class, () -> TlsPsk.parse(printed.replace('A', 'B')));
        assertThrows(IllegalArgumentException.class, () -> TlsPsk.parse("DHHC-1:01:AAEC:"));
    }

    @Test
    void derivedAsNvmeCli213DoesIt() {
        TlsPsk k = TlsPsk.create(SECRET32, 1);
        String id0 = k.identity(0, HOST, SUB, TlsPsk.Derivation.COMPAT);
        assertEquals("NVMe0R01 " + HOST + " " + SUB, id0);
        assertArrayEquals(exported("Q+inkyjRbtqEXcZi4XkwUyv6pSBFmjf50rXbJfKhGB+0BAIp"),
                k.tlsPsk(PskIdentity.parse(id0), TlsPsk.Derivation.COMPAT));
        String id1 = k.identity(1, HOST, SUB, TlsPsk.Derivation.COMPAT);
        assertEquals("NVMe1R01 " + HOST + " " + SUB + " 7IByo4yrM/DHZHOa13eJfYTHSKBqhpw4k4wNZ6qqW04=", id1);
        assertArrayEquals(exported("9NUmP+K/TrV3wmzNEPwmDujqO0V6fRc8LC8sJ9ZXskyxGpLx"),
                k.tlsPsk(PskIdentity.parse(id1), TlsPsk.Derivation.COMPAT));
        TlsPsk k48 = TlsPsk.create(SECRET48, 2);
        String id48 = k48.identity(0, HOST, SUB, TlsPsk.Derivation.COMPAT);
        assertEquals("NVMe0R02 " + HOST + " " + SUB, id48);
        assertArrayEquals(exported("6BKMqXMoXN0WYhZZ9r9oqnS6Ae01pTSqfeACUajlaDzpNo0fia/Q/uhl8IrqkPDlsEAVOg=="),
                k48.tlsPsk(PskIdentity.parse(id48), TlsPsk.Derivation.COMPAT));
    }

    @Test
    void derivedWithRfc8446Labels() {
        TlsPsk k = TlsPsk.create(SECRET32, 1);
        PskIdentity id = PskIdentity.parse(k.identity(0, HOST, SUB, TlsPsk.Derivation.RFC8446));
        assertEquals("89d88623d7921b0c97ff22519d717dd9c77fc5a00391819c37efd84771623588",
                HexFormat.of().formatHex(k.tlsPsk(id, TlsPsk.Derivation.RFC8446)));
        assertEquals("+8iK8zczs6SQgcqSm1Vupblhw0pCJlP0sKvD3BRK36k=",
                PskIdentity.parse(k.identity(1, HOST, SUB, TlsPsk.Derivation.RFC8446)).digest());
        // RFC 8446's label is length (big-endian), "tls13 " + label and context with their lengths
        assertEquals("0020" + "0d" + HexFormat.of().formatHex("tls13 HostNQN".getBytes()) + "01" + "41",
                HexFormat.of().formatHex(Hkdf.label(32, "HostNQN", new byte[] {0x41})));
    }

    @Test
    void identities() {
        PskIdentity v0 = PskIdentity.parse("NVMe0R02 " + HOST + " " + SUB);
        assertEquals(0, v0.version());
        assertEquals(2, v0.cipher());
        assertEquals(HOST, v0.hostNqn());
        assertEquals(SUB, v0.subNqn());
        assertNull(v0.digest());
        assertEquals("abc=", PskIdentity.parse("NVMe1R01 " + HOST + " " + SUB + " abc=").digest());
        for (String bad : new String[] {"", "NVMe0R01", "NVMe0R03 a b", "NVMe0R01 a", "NVMe0R01 a b c", "TLS0R01 a b",
            "NVMe1R01 a b"}) {
            assertNull(PskIdentity.parse(bad), bad);
        }
        assertTrue(TlsPsk.create(SECRET32, 0).cipherHash() == DhchapHash.SHA256);
        assertTrue(TlsPsk.create(SECRET48, 0).cipherHash() == DhchapHash.SHA384);
    }
}
