package io.nvmeof.protocol.auth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.security.KeyFactory;
import java.security.SecureRandom;
import java.util.HexFormat;
import javax.crypto.KeyAgreement;
import javax.crypto.spec.DHParameterSpec;
import javax.crypto.spec.DHPrivateKeySpec;
import javax.crypto.spec.DHPublicKeySpec;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

class DhGroupTest {
    static final SecureRandom RANDOM = new SecureRandom();

    @Test
    void theDefinitionGivesRfc7919sPrimes() {
        // RFC 7919, Appendix A.1: ffdhe2048's p as printed there, its first and last 128 bits
        String p = DhGroup.FFDHE2048.prime().toString(16).toUpperCase();
        assertEquals(512, p.length());
        assertTrue(p.startsWith("FFFFFFFFFFFFFFFFADF85458A2BB4A9A"), p.substring(0, 32));
        assertTrue(p.endsWith("886B423861285C97FFFFFFFFFFFFFFFF"), p.substring(480));
        for (DhGroup g : DhGroup.values()) {
            if (g == DhGroup.NULL) {
                continue;
            }
            BigInteger q = g.prime();
            assertEquals(g.bits, q.bitLength(), g.kernelName);
            assertTrue(q.toString(16).startsWith("ffffffffffffffffadf85458a2bb4a9a"), g.kernelName);
            assertTrue(q.toString(16).endsWith("ffffffffffffffff"), g.kernelName);
        }
    }

    @Test
    void theSmallerPrimesAreSafePrimes() {
        // X in the definition is the least that makes p and (p-1)/2 prime: a wrong X or a wrong e fails here
        for (DhGroup g : new DhGroup[] {DhGroup.FFDHE2048, DhGroup.FFDHE3072}) {
            BigInteger p = g.prime();
            assertTrue(p.isProbablePrime(40), g.kernelName + " p");
            assertTrue(p.shiftRight(1).isProbablePrime(40), g.kernelName + " (p-1)/2");
        }
    }

    @ParameterizedTest
    @EnumSource(value = DhGroup.class, names = "NULL", mode = EnumSource.Mode.EXCLUDE)
    void bothSidesAgreeAndTheJdkAgreesWithThem(DhGroup g) throws Exception {
        DhGroup.KeyPair a = g.generate(RANDOM);
        DhGroup.KeyPair b = g.generate(RANDOM);
        assertEquals(g.valueLength(), a.publicValue().length);
        byte[] s1 = a.sharedSecret(b.publicValue());
        byte[] s2 = b.sharedSecret(a.publicValue());
        assertArrayEquals(s1, s2);
        assertEquals(g.valueLength(), s1.length, "padded to the prime's length");
        // the JDK's own Diffie-Hellman, given the same numbers, computes the same secret
        BigInteger x = new BigInteger(1, HexFormat.of().parseHex("0123456789abcdef0123456789abcdef0123456789abcdef"));
        DHParameterSpec spec = new DHParameterSpec(g.prime(), BigInteger.TWO);
        KeyFactory kf = KeyFactory.getInstance("DH");
        KeyAgreement ka = KeyAgreement.getInstance("DH");
        ka.init(kf.generatePrivate(new DHPrivateKeySpec(x, spec.getP(), spec.getG())));
        ka.doPhase(kf.generatePublic(new DHPublicKeySpec(new BigInteger(1, b.publicValue()), spec.getP(), spec.getG())), true);
        byte[] jdk = ka.generateSecret();
        DhGroup.KeyPair mine = new DhGroup.KeyPair(g, x, new byte[0]);
        assertArrayEquals(jdk, mine.sharedSecret(b.publicValue()));
    }

    @Test
    void publicValuesOutsideTheGroupAreRefused() {
        DhGroup.KeyPair a = DhGroup.FFDHE2048.generate(RANDOM);
        BigInteger p = DhGroup.FFDHE2048.prime();
        for (BigInteger bad : new BigInteger[] {BigInteger.ZERO, BigInteger.ONE, p.subtract(BigInteger.ONE), p}) {
            byte[] v = toBytes(bad, 256);
            assertThrows(IllegalArgumentException.class, () -> a.sharedSecret(v), bad.toString(16));
        }
        assertThrows(IllegalArgumentException.class, () -> a.sharedSecret(new byte[128]), "wrong length");
    }

    private static byte[] toBytes(BigInteger v, int len) {
        byte[] b = v.toByteArray();
        byte[] out = new byte[len];
        int n = Math.min(b.length, len);
        System.arraycopy(b, b.length - n, out, len - n, n);
        return out;
    }

    @Test
    void eToManyBits() {
        // e = 2.718281828459045235360287471352662497757... : 2^64 e, floored
        assertEquals(new BigInteger("50143449209799256682"), DhGroup.eTimesPowerOfTwo(64));
    }
}
