package io.nvmeof.protocol;

import java.util.UUID;

/**
 * The 1024-byte data of a Fabrics Connect command (NVMe-oF 1.1, 3.3, Figure 20).
 *
 * <pre>
 * 000-015 HOSTID   016-017 CNTLID   018-255 reserved
 * 256-511 SUBNQN   512-767 HOSTNQN  768-1023 reserved
 * </pre>
 */
public final class ConnectData extends Flyweight {
    public static final int SIZE = 1024;
    public static final int HOSTID_OFFSET = 0;
    public static final int CNTLID_OFFSET = 16;
    public static final int SUBNQN_OFFSET = 256;
    public static final int HOSTNQN_OFFSET = 512;
    public static final int NQN_FIELD_LENGTH = 256;
    /** CNTLID FFFFh in an admin queue Connect asks for a dynamic controller (NVMe-oF 1.1, 3.3). */
    public static final int CNTLID_DYNAMIC = 0xffff;

    @Override
    public int length() {
        return SIZE;
    }

    /** The host identifier: 16 bytes, big-endian UUID order as the kernel writes it. */
    public UUID hostId() {
        long msb = Long.reverseBytes(u64(HOSTID_OFFSET));
        long lsb = Long.reverseBytes(u64(HOSTID_OFFSET + 8));
        return new UUID(msb, lsb);
    }

    public ConnectData hostId(UUID id) {
        put64(HOSTID_OFFSET, Long.reverseBytes(id.getMostSignificantBits()));
        put64(HOSTID_OFFSET + 8, Long.reverseBytes(id.getLeastSignificantBits()));
        return this;
    }

    public int cntlid() {
        return u16(CNTLID_OFFSET);
    }

    public ConnectData cntlid(int v) {
        put16(CNTLID_OFFSET, v);
        return this;
    }

    public String subsystemNqn() {
        return ascii(SUBNQN_OFFSET, NQN_FIELD_LENGTH);
    }

    public ConnectData subsystemNqn(String nqn) {
        putAscii(SUBNQN_OFFSET, NQN_FIELD_LENGTH, nqn, (byte) 0, "SUBNQN");
        return this;
    }

    public String hostNqn() {
        return ascii(HOSTNQN_OFFSET, NQN_FIELD_LENGTH);
    }

    public ConnectData hostNqn(String nqn) {
        putAscii(HOSTNQN_OFFSET, NQN_FIELD_LENGTH, nqn, (byte) 0, "HOSTNQN");
        return this;
    }

    @Override
    public String toString() {
        return "ConnectData{hostid=" + hostId() + " cntlid=" + cntlid() + " subnqn=" + subsystemNqn()
                + " hostnqn=" + hostNqn() + "}";
    }
}
