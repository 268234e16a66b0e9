package io.nvmeof.tools;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

/**
 * fio's verify idea for {@code nvmeof bench}: every block written carries a 64-byte header that
 * names where it belongs and which write made it, so that a block read back can be told apart
 * from a corrupted one, one written to the wrong place, and a stale one. The rest of the block
 * is a pattern, or data seeded by offset and generation with a checksum (CRC-32C or MD5) over
 * the header's first 32 bytes and the data.
 *
 * <pre>
 *  0 magic "nvmeofVB"   8 offset   16 generation   24 block length   28 kind
 * 32 checksum (CRC-32C: 4 bytes, MD5: 16)   48 reserved   64 data
 * </pre>
 */
public final class BlockVerify {
    static final int HEADER = 64;
    private static final byte[] MAGIC = "nvmeofVB".getBytes(StandardCharsets.US_ASCII);

    public enum Kind {
        CRC32C("crc32c"), MD5("md5"), PATTERN("pattern");

        public final String fioName;

        Kind(String fioName) {
            this.fioName = fioName;
        }

        public static Kind parse(String s) {
            for (Kind k : values()) {
                if (k.fioName.equals(s)) {
                    return k;
                }
            }
            throw new IllegalArgumentException("--verify must be crc32c, md5 or pattern, not '" + s + "'");
        }
    }

    private final Kind kind;
    private final byte[] pattern;
    private final ThreadLocal<MessageDigest> md5 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    });

    public BlockVerify(Kind kind, byte[] pattern) {
        this.kind = kind;
        this.pattern = pattern != null && pattern.length > 0 ? pattern : new byte[] {0x5a};
    }

    public Kind kind() {
        return kind;
    }

    /** Parses fio's --verify_pattern: 0x-prefixed hex, or a quoted string. */
    public static byte[] parsePattern(String s) {
        if (s.startsWith("0x") || s.startsWith("0X")) {
            String hex = s.substring(2);
            if (hex.isEmpty() || hex.length() % 2 != 0) {
                throw new IllegalArgumentException("--verify_pattern " + s + ": an even number of hex digits after 0x");
            }
            try {
                return HexFormat.of().parseHex(hex);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--verify_pattern " + s + ": not hex");
            }
        }
        String t = s.length() >= 2 && s.startsWith("\"") && s.endsWith("\"") ? s.substring(1, s.length() - 1) : s;
        if (t.isEmpty()) {
            throw new IllegalArgumentException("--verify_pattern is empty");
        }
        return t.getBytes(StandardCharsets.UTF_8);
    }

    /** Fills {@code b} (position 0, limit the block) with the block for {@code offset} made by write {@code generation}. */
    void fill(ByteBuffer b, long offset, long generation) {
        ByteBuffer l = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int len = b.limit();
        l.put(0, MAGIC).putLong(8, offset).putLong(16, generation).putInt(24, len).putInt(28, kind.ordinal());
        for (int i = 32; i < HEADER; i++) {
            l.put(i, (byte) 0);
        }
        if (kind == Kind.PATTERN) {
            for (int i = HEADER; i < len; i++) {
                l.put(i, pattern[(i - HEADER) % pattern.length]);
            }
            return;
        }
        SplittableRandom rnd = new SplittableRandom(offset * 0x9E3779B97F4A7C15L ^ generation);
        int i = HEADER;
        for (; i + 8 <= len; i += 8) {
            l.putLong(i, rnd.nextLong());
        }
        for (; i < len; i++) {
            l.put(i, (byte) rnd.nextInt());
        }
        byte[] sum = checksum(l, len);
        l.put(32, sum);
    }

    private byte[] checksum(ByteBuffer l, int len) {
        if (kind == Kind.CRC32C) {
            CRC32C c = new CRC32C();
            c.update(l.duplicate().position(0).limit(32));
            c.update(l.duplicate().position(HEADER).limit(len));
            int v = (int) c.getValue();
            return new byte[] {(byte) v, (byte) (v >>> 8), (byte) (v >>> 16), (byte) (v >>> 24)};
        }
        MessageDigest d = md5.get();
        d.reset();
        d.update(l.duplicate().position(0).limit(32));
        d.update(l.duplicate().position(HEADER).limit(len));
        return d.digest();
    }

    /**
     * Checks a block read back from {@code offset}; null if it is the one write {@code expected}
     * made (or, with {@code expected} &lt; 0, any intact block that belongs at {@code offset}),
     * else what is wrong with it.
     */
    String check(ByteBuffer b, long offset, long expected) {
        ByteBuffer l = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int len = b.limit();
        byte[] magic = new byte[MAGIC.length];
        l.get(0, magic);
        if (!Arrays.equals(magic, MAGIC)) {
            return "no verify header (never written, or overwritten by something else)";
        }
        long at = l.getLong(8);
        long gen = l.getLong(16);
        if (l.getInt(24) != len || l.getInt(28) != kind.ordinal()) {
            return "header of another block size or verify kind";
        }
        if (kind == Kind.PATTERN) {
            for (int i = HEADER; i < len; i++) {
                if (l.get(i) != pattern[(i - HEADER) % pattern.length]) {
                    return "pattern mismatch at byte " + i;
                }
            }
        } else {
            byte[] want = checksum(l, len);
            byte[] got = new byte[want.length];
            l.get(32, got);
            if (!Arrays.equals(want, got)) {
                return kind.fioName + " mismatch: the block is corrupted";
            }
        }
        if (at != offset) {
            return String.format("misplaced: it is the block written for offset %#x", at);
        }
        if (expected >= 0 && gen != expected) {
            return "stale: written by write " + gen + ", the last write here was " + expected;
        }
        return null;
    }
}
