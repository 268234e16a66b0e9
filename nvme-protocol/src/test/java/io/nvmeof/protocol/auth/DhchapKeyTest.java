package io.nvmeof.protocol.auth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.zip.CRC32;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

class DhchapKeyTest {
    static final String NQN = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";

    /** DHHC-1:XX:base64(key || CRC-32 little-endian): built here by hand, the way nvme-cli writes it. */
    static String interchange(int hash, byte[] key) {
        CRC32 c = new CRC32();
        c.update(key);
        long crc = c.getValue();
        byte[] raw = new byte[key.length + 4];
        System.arraycopy(key, 0, raw, 0, key.length);
        for (int i = 0; i < 4; i++) {
            raw[key.length + i] = (byte) (crc >>> (8 * i));
        }
        return String.format("DHHC-1:%02x:%s:", hash, Base64.getEncoder().encodeToString(raw));
    }

    static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed + i * 7);
        }
        return b;
    }

    @Test
    void parsesWhatNvmeCliWritesAndWritesItBack() {
        for (int len : new int[] {32, 48, 64}) {
            for (int hash = 0; hash <= 3; hash++) {
                String text = interchange(hash, bytes(len, hash));
                DhchapKey k = DhchapKey.parse(text);
                assertEquals(len, k.length());
                assertEquals(hash == 0 ? null : DhchapHash.of(hash), k.transformHash());
                assertEquals(text, k.format());
                assertFalse(k.toString().contains(text.substring(10, 20)), "toString hides the key");
            }
        }
        // a 32-byte key is 59 characters, a 48-byte one 83, a 64-byte one 103 (nvme-cli's own checks)
        assertEquals(59, interchange(1, bytes(32, 0)).length());
        assertEquals(83, interchange(2, bytes(48, 0)).length());
        assertEquals(103, interchange(3, bytes(64, 0)).length());
    }

    @Test
    void badKeysSayWhatIsWrong() {
        String good = interchange(1, bytes(32, 1));
        String flipped = good.substring(0, 12) + (good.charAt(12) == 'A' ? 'B' : 'A') + good.substring(13);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DhchapKey.parse(flipped)).getMessage().contains("CRC"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DhchapKey.parse(interchange(1, bytes(40, 1))))
                .getMessage().contains("32, 48 or 64"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DhchapKey.parse(interchange(4, bytes(32, 1))))
                .getMessage().contains("unknown hash"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DhchapKey.parse("NVMeTLSkey-1:01:abc:"))
                .getMessage().contains("DHHC-1"));
        assertThrows(IllegalArgumentException.class, () -> DhchapKey.parse("DHHC-1:01:not base64!:"));
        assertThrows(IllegalArgumentException.class, () -> DhchapKey.parse(good.substring(0, good.length() - 1)));
    }

    @Test
    void theTransformationIsHmacOfTheNqnAndTheSeed() throws Exception {
        byte[] secret = bytes(48, 5);
        DhchapKey k = DhchapKey.parse(interchange(2, secret));
        Mac m = Mac.getInstance("HmacSHA384");
        m.init(new SecretKeySpec(secret, "HmacSHA384"));
        m.update((NQN + "NVMe-over-Fabrics").getBytes(StandardCharsets.US_ASCII));
        assertArrayEquals(m.doFinal(), k.transformed(NQN));
        // 00: the key as it is
        assertArrayEquals(secret, DhchapKey.parse(interchange(0, secret)).transformed(NQN));
    }

    @Test
    void createBindsATransformedKeyToTheNqnAsNvmeGenDhchapKeyDoes() throws Exception {
        byte[] secret = bytes(32, 9);
        DhchapKey k = DhchapKey.create(secret, DhchapHash.SHA256, NQN);
        Mac m = Mac.getInstance("HmacSHA256");
        m.init(new SecretKeySpec(secret, "HmacSHA256"));
        m.update((NQN + "NVMe-over-Fabrics").getBytes(StandardCharsets.US_ASCII));
        assertEquals(interchange(1, m.doFinal()), k.format());
        assertEquals(interchange(0, secret), DhchapKey.create(secret, null, NQN).format());
        assertThrows(IllegalArgumentException.class, () -> DhchapKey.create(bytes(48, 0), DhchapHash.SHA256, NQN),
                "a SHA-256 transformation makes 32 bytes");
        assertNull(DhchapKey.create(secret, null, NQN).transformHash());
    }
}
