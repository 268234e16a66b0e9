package io.nvmeof.fabric.tls;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * OpenSSL's record cipher against the JDK's, which is the oracle, and both against the GCM
 * specification's test case 4 (McGrew and Viega): the same records sealed, each opening the
 * other's, a flipped bit refused.
 */
class RecordCipherTest {
    private static final HexFormat HEX = HexFormat.of();

    @Test
    void gcmTestCaseFourThroughTheJdkAndOpenSsl() {
        // the specification's case 4 has 20 bytes of additional data; ours is always a 5-byte header, so
        // the known answer checked here is the ciphertext (additional data does not change it)
        byte[] key = HEX.parseHex("feffe9928665731c6d6a8f9467308308");
        byte[] iv = HEX.parseHex("cafebabefacedbaddecaf888");
        byte[] plain = HEX.parseHex("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95"
                + "956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39");
        byte[] expected = HEX.parseHex("42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b2"
                + "5466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091");
        for (boolean jdk : new boolean[] {true, false}) {
            if (!jdk && !OpenSslGcm.available()) {
                continue;
            }
            ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(5 + plain.length + 16);
            try (RecordCipher c = RecordCipher.create(true, key, iv, jdk)) {
                b.writeBytes(new byte[5]).writeBytes(plain).writeZero(16);
                c.seal(b, 0, plain.length, 0);
                byte[] got = new byte[plain.length];
                b.getBytes(5, got);
                assertArrayEquals(expected, got, c.provider());
            } finally {
                b.release();
            }
        }
    }

    @Test
    void openSslAndTheJdkOpenEachOthersRecords() {
        assumeTrue(OpenSslGcm.available(), "libcrypto is not loadable here: " + OpenSslGcm.missing());
        Random r = new Random(7);
        for (int keyLength : new int[] {16, 32}) {
            byte[] key = new byte[keyLength];
            byte[] iv = new byte[12];
            r.nextBytes(key);
            r.nextBytes(iv);
            try (RecordCipher sslSeal = RecordCipher.create(true, key, iv, false);
                 RecordCipher jdkSeal = RecordCipher.create(true, key, iv, true);
                 RecordCipher sslOpen = RecordCipher.create(false, key, iv, false);
                 RecordCipher jdkOpen = RecordCipher.create(false, key, iv, true)) {
                for (int length : new int[] {1, 17, 4096 + 25, 16385}) {
                    long seq = r.nextLong() >>> 1;
                    byte[] record = new byte[5 + length];
                    r.nextBytes(record);
                    byte[] a = sealed(sslSeal, record, seq);
                    byte[] b = sealed(jdkSeal, record, seq);
                    assertArrayEquals(b, a, "OpenSSL and the JDK seal alike, " + length + " bytes, key " + keyLength);
                    assertArrayEquals(java.util.Arrays.copyOfRange(record, 5, record.length), opened(jdkOpen, a, seq));
                    assertArrayEquals(java.util.Arrays.copyOfRange(record, 5, record.length), opened(sslOpen, b, seq));
                    a[5 + length / 2] ^= 1;
                    assertFalse(open(sslOpen, a, seq, new byte[length]), "a flipped bit is refused");
                    assertFalse(open(jdkOpen, a, seq, new byte[length]), "a flipped bit is refused");
                    a[5 + length / 2] ^= 1;
                    assertFalse(open(sslOpen, a, seq + 1, new byte[length]), "another sequence number is refused");
                    a[0] ^= 1;
                    assertFalse(open(sslOpen, a, seq, new byte[length]), "another header is refused");
                }
            }
        }
    }

    private static byte[] sealed(RecordCipher c, byte[] record, long seq) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(record.length + 16);
        try {
            b.writeBytes(record).writeZero(16);
            c.seal(b, 0, record.length - 5, seq);
            byte[] out = new byte[record.length + 16];
            b.getBytes(0, out);
            return out;
        } finally {
            b.release();
        }
    }

    private static byte[] opened(RecordCipher c, byte[] sealed, long seq) {
        byte[] plain = new byte[sealed.length - 21];
        assertTrue(open(c, sealed, seq, plain), c.provider() + " opens the record");
        return plain;
    }

    private static boolean open(RecordCipher c, byte[] sealed, long seq, byte[] plain) {
        ByteBuf src = PooledByteBufAllocator.DEFAULT.directBuffer(sealed.length);
        ByteBuf dst = PooledByteBufAllocator.DEFAULT.directBuffer(plain.length);
        try {
            src.writeBytes(sealed);
            boolean ok = c.open(src, 0, sealed.length - 5, dst, seq);
            dst.getBytes(0, plain);
            return ok;
        } finally {
            src.release();
            dst.release();
        }
    }
}
