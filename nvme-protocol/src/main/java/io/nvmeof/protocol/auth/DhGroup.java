package io.nvmeof.protocol.auth;

import java.math.BigInteger;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Locale;

/**
 * The Diffie-Hellman groups of DH-HMAC-CHAP (NVMe Base 2.0, Figure 172): none, or one of the
 * finite-field groups of RFC 7919. Each group's prime is computed once from RFC 7919's own
 * definition, p = 2^b - 2^(b-64) + (floor(2^(b-130) e) + X) 2^64 - 1, with generator 2.
 * Public values and shared secrets are big-endian, left-padded to the prime's length, as the
 * Linux kernel and SPDK exchange them.
 */
public enum DhGroup {
    NULL(0, "null", 0, 0, 0),
    FFDHE2048(1, "ffdhe2048", 2048, 560316, 112),
    FFDHE3072(2, "ffdhe3072", 3072, 2625351, 128),
    FFDHE4096(3, "ffdhe4096", 4096, 5736041, 152),
    FFDHE6144(4, "ffdhe6144", 6144, 15705020, 176),
    FFDHE8192(5, "ffdhe8192", 8192, 10965728, 200);

    private static final BigInteger TWO = BigInteger.valueOf(2);

    /** Group identifier on the wire. */
    public final int id;
    /** {@code ffdhe2048}, as the kernel and nvme-cli name it. */
    public final String kernelName;
    /** Bits of the prime (0 for the NULL group). */
    public final int bits;
    private final int x;
    /** Security strength in bits (RFC 7919, Appendix A): private exponents get twice as many. */
    private final int strength;
    private volatile BigInteger prime;

    DhGroup(int id, String kernelName, int bits, int x, int strength) {
        this.id = id;
        this.kernelName = kernelName;
        this.bits = bits;
        this.x = x;
        this.strength = strength;
    }

    /** The group with wire identifier {@code id}, or null. */
    public static DhGroup of(int id) {
        for (DhGroup g : values()) {
            if (g.id == id) {
                return g;
            }
        }
        return null;
    }

    /** By name ({@code ffdhe2048}, {@code null}); null if none. */
    public static DhGroup named(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (DhGroup g : values()) {
            if (g.kernelName.equals(n)) {
                return g;
            }
        }
        return null;
    }

    /** Bytes of a public value or shared secret: DHVLEN (0 for the NULL group). */
    public int valueLength() {
        return bits / 8;
    }

    public BigInteger prime() {
        BigInteger p = prime;
        if (p == null && bits > 0) {
            p = ffdhePrime(bits, x);
            prime = p;
        }
        return p;
    }

    /** A key pair of this group: a fresh private exponent and its public value g^x mod p. */
    public KeyPair generate(SecureRandom random) {
        if (this == NULL) {
            throw new IllegalStateException("the NULL DH group has no key pairs");
        }
        BigInteger x;
        do {
            x = new BigInteger(2 * strength, random);
        } while (x.bitLength() < 2 * strength - 8);
        return new KeyPair(this, x, pad(TWO.modPow(x, prime()), valueLength()));
    }

    /** A private exponent and the public value to send. */
    public static final class KeyPair {
        private final DhGroup group;
        private final BigInteger secret;
        private final byte[] publicValue;

        KeyPair(DhGroup group, BigInteger secret, byte[] publicValue) {
            this.group = group;
            this.secret = secret;
            this.publicValue = publicValue;
        }

        public byte[] publicValue() {
            return publicValue.clone();
        }

        /**
         * The shared secret with a peer's public value (the session key of DH-HMAC-CHAP), or
         * an exception if the value is not one of the group's (wrong length, 0, 1, p-1 or
         * not below p: SP 800-56A's partial public key validation).
         */
        public byte[] sharedSecret(byte[] peer) {
            if (peer.length != group.valueLength()) {
                throw new IllegalArgumentException("a " + group.kernelName + " public value has " + group.valueLength()
                        + " bytes, not " + peer.length);
            }
            BigInteger p = group.prime();
            BigInteger y = new BigInteger(1, peer);
            if (y.compareTo(TWO) < 0 || y.compareTo(p.subtract(TWO)) > 0) {
                throw new IllegalArgumentException("public value out of range for " + group.kernelName);
            }
            return pad(y.modPow(secret, p), group.valueLength());
        }
    }

    private static byte[] pad(BigInteger v, int length) {
        byte[] b = v.toByteArray();
        if (b.length == length) {
            return b;
        }
        byte[] out = new byte[length];
        if (b.length > length) { // a sign byte in front
            System.arraycopy(b, b.length - length, out, 0, length);
        } else {
            System.arraycopy(b, 0, out, length - b.length, b.length);
        }
        return out;
    }

    /** RFC 7919's definition of its primes, with Euler's number to the bits it needs. */
    static BigInteger ffdhePrime(int b, int x) {
        BigInteger eScaled = eTimesPowerOfTwo(b - 130);
        return BigInteger.ONE.shiftLeft(b).subtract(BigInteger.ONE.shiftLeft(b - 64))
                .add(eScaled.add(BigInteger.valueOf(x)).shiftLeft(64)).subtract(BigInteger.ONE);
    }

    /** floor(2^n e), from e = sum 1/k!, in fixed point with 64 guard bits. */
    static BigInteger eTimesPowerOfTwo(int n) {
        int guard = 64;
        BigInteger one = BigInteger.ONE.shiftLeft(n + guard);
        BigInteger term = one;
        BigInteger sum = BigInteger.ZERO;
        for (int k = 1; term.signum() > 0; k++) {
            sum = sum.add(term);
            term = term.divide(BigInteger.valueOf(k));
        }
        return sum.shiftRight(guard);
    }

    /** Overwrites a secret byte array. */
    static void wipe(byte[] b) {
        if (b != null) {
            Arrays.fill(b, (byte) 0);
        }
    }
}
