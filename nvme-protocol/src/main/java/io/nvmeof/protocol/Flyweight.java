package io.nvmeof.protocol;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Base of every fixed-layout view: a re-wrappable window of {@link #length()} bytes at an
 * offset of a little-endian {@link ByteBuffer}. Reads and writes go straight to the buffer
 * with absolute accessors; nothing is copied and nothing is allocated per access.
 */
public abstract class Flyweight {
    protected ByteBuffer buffer;
    protected int offset;

    /** Size of the layout in bytes. */
    public abstract int length();

    /**
     * Points this view at {@code length()} bytes of {@code buf} starting at {@code off}.
     * A big-endian buffer is viewed through a little-endian duplicate.
     */
    @SuppressWarnings("unchecked")
    public <T extends Flyweight> T wrap(ByteBuffer buf, int off) {
        if (off < 0 || off + length() > buf.capacity()) {
            throw new IndexOutOfBoundsException(
                    getClass().getSimpleName() + " of " + length() + " bytes at " + off
                            + " does not fit a buffer of " + buf.capacity());
        }
        this.buffer = buf.order() == ByteOrder.LITTLE_ENDIAN ? buf : buf.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        this.offset = off;
        return (T) this;
    }

    public ByteBuffer buffer() {
        return buffer;
    }

    public int offset() {
        return offset;
    }

    /** Zeroes the whole layout. */
    public void clear() {
        int end = offset + length();
        int i = offset;
        for (; i + 8 <= end; i += 8) {
            buffer.putLong(i, 0L);
        }
        for (; i < end; i++) {
            buffer.put(i, (byte) 0);
        }
    }

    protected final int u8(int at) {
        return buffer.get(offset + at) & 0xff;
    }

    protected final int u16(int at) {
        return buffer.getShort(offset + at) & 0xffff;
    }

    protected final long u32(int at) {
        return buffer.getInt(offset + at) & 0xffffffffL;
    }

    protected final int i32(int at) {
        return buffer.getInt(offset + at);
    }

    protected final long u64(int at) {
        return buffer.getLong(offset + at);
    }

    protected final void put8(int at, int v) {
        buffer.put(offset + at, (byte) v);
    }

    protected final void put16(int at, int v) {
        buffer.putShort(offset + at, (short) v);
    }

    protected final void put32(int at, long v) {
        buffer.putInt(offset + at, (int) v);
    }

    protected final void put64(int at, long v) {
        buffer.putLong(offset + at, v);
    }

    /** Reads a space- or NUL-padded ASCII field, trimmed. */
    protected final String ascii(int at, int len) {
        byte[] b = new byte[len];
        buffer.get(offset + at, b);
        int end = len;
        while (end > 0 && (b[end - 1] == 0 || b[end - 1] == ' ')) {
            end--;
        }
        return new String(b, 0, end, StandardCharsets.US_ASCII);
    }

    /** Writes an ASCII field padded with {@code pad}; rejects text that does not fit. */
    protected final void putAscii(int at, int len, String s, byte pad, String field) {
        byte[] b = s.getBytes(StandardCharsets.US_ASCII);
        if (b.length > len) {
            throw new IllegalArgumentException(field + " is longer than " + len + " bytes: " + s);
        }
        buffer.put(offset + at, b);
        for (int i = b.length; i < len; i++) {
            buffer.put(offset + at + i, pad);
        }
    }

    protected final byte[] bytes(int at, int len) {
        byte[] b = new byte[len];
        buffer.get(offset + at, b);
        return b;
    }

    protected final void putBytes(int at, byte[] b, int len) {
        if (b.length != len) {
            throw new IllegalArgumentException("expected " + len + " bytes, got " + b.length);
        }
        buffer.put(offset + at, b);
    }

    /** Little-endian direct buffer of the given size, for tests and one-off encodes. */
    public static ByteBuffer allocate(int size) {
        return ByteBuffer.allocateDirect(size).order(ByteOrder.LITTLE_ENDIAN);
    }
}
