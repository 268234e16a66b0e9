package io.nvmeof.protocol;

import java.nio.ByteBuffer;
import java.util.HexFormat;

/** Golden-byte helpers: hex with any whitespace, and a buffer's bytes as hex. */
public final class Hex {
    private Hex() {
    }

    public static ByteBuffer buffer(String hex) {
        byte[] b = HexFormat.of().parseHex(hex.replaceAll("\\s+", ""));
        ByteBuffer buf = Flyweight.allocate(b.length);
        buf.put(0, b);
        return buf;
    }

    /** A buffer of {@code size} zero bytes with {@code hex} written at {@code at}. */
    public static ByteBuffer sparse(int size, int at, String hex) {
        ByteBuffer buf = Flyweight.allocate(size);
        buf.put(at, HexFormat.of().parseHex(hex.replaceAll("\\s+", "")));
        return buf;
    }

    public static String of(ByteBuffer buf, int from, int len) {
        byte[] b = new byte[len];
        buf.get(from, b);
        return HexFormat.of().formatHex(b);
    }

    public static String of(ByteBuffer buf) {
        return of(buf, 0, buf.capacity());
    }

    public static String clean(String hex) {
        return hex.replaceAll("\\s+", "").toLowerCase();
    }
}
