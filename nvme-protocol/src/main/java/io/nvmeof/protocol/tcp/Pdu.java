package io.nvmeof.protocol.tcp;

import io.nvmeof.protocol.Flyweight;

/**
 * The 8-byte common header every NVMe/TCP PDU starts with (NVMe/TCP 1.0, 3.6.2, Figure 22),
 * and the base of each PDU-specific header view.
 *
 * <pre>
 * 00 PDU-Type   01 FLAGS   02 HLEN   03 PDO   04-07 PLEN
 * </pre>
 */
public class Pdu extends Flyweight {
    public static final int COMMON_HEADER_SIZE = 8;
    public static final int TYPE_OFFSET = 0;
    public static final int FLAGS_OFFSET = 1;
    public static final int HLEN_OFFSET = 2;
    public static final int PDO_OFFSET = 3;
    public static final int PLEN_OFFSET = 4;

    /** FLAGS bits (Figure 22 and the per-PDU definitions). */
    public static final int FLAG_HDGST = 1;
    public static final int FLAG_DDGST = 1 << 1;
    public static final int FLAG_LAST_PDU = 1 << 2;
    public static final int FLAG_SUCCESS = 1 << 3;

    /** Header and data digests are CRC32C, 4 bytes each. */
    public static final int DIGEST_SIZE = 4;

    @Override
    public int length() {
        return COMMON_HEADER_SIZE;
    }

    public int type() {
        return u8(TYPE_OFFSET);
    }

    public int flags() {
        return u8(FLAGS_OFFSET);
    }

    public Pdu flags(int v) {
        put8(FLAGS_OFFSET, v);
        return this;
    }

    public int hlen() {
        return u8(HLEN_OFFSET);
    }

    public int pdo() {
        return u8(PDO_OFFSET);
    }

    public Pdu pdo(int v) {
        put8(PDO_OFFSET, v);
        return this;
    }

    public long plen() {
        return u32(PLEN_OFFSET);
    }

    public Pdu plen(long v) {
        put32(PLEN_OFFSET, v);
        return this;
    }

    /** Clears the header and writes the common fields for {@code type}. */
    public Pdu init(PduType type, int flags, int pdo, long plen) {
        clear();
        put8(TYPE_OFFSET, type.code);
        put8(FLAGS_OFFSET, flags);
        put8(HLEN_OFFSET, type.headerLength);
        put8(PDO_OFFSET, pdo);
        put32(PLEN_OFFSET, plen);
        return this;
    }

    protected String common() {
        PduType t = PduType.of(type());
        return (t != null ? t.name() : "type=" + type()) + " flags=" + Integer.toHexString(flags()) + " hlen=" + hlen()
                + " pdo=" + pdo() + " plen=" + plen();
    }

    @Override
    public String toString() {
        return "PDU{" + common() + "}";
    }
}
