package io.nvmeof.protocol;

/**
 * SGL descriptor identifiers, byte 15 of a descriptor: type in bits 7:4, sub type in 3:0
 * (NVMe Base 2.0, Figures 91-92; NVMe/TCP 1.0, 3.3.1; NVMe/RDMA 1.0, 2.3).
 */
public final class Sgl {
    public static final int TYPE_DATA_BLOCK = 0x0;
    public static final int TYPE_KEYED_DATA_BLOCK = 0x4;
    public static final int TYPE_TRANSPORT_DATA_BLOCK = 0x5;
    public static final int SUBTYPE_ADDRESS = 0x0;
    public static final int SUBTYPE_OFFSET = 0x1;
    public static final int SUBTYPE_INVALIDATE_KEY = 0xF;
    public static final int SUBTYPE_TRANSPORT_SPECIFIC = 0xA;

    /** Data in the capsule, addressed by an offset into the capsule's data (01h). */
    public static final int IN_CAPSULE = TYPE_DATA_BLOCK << 4 | SUBTYPE_OFFSET;
    /** NVMe/TCP: data moved by the transport, C2HData or R2T + H2CData (5Ah). */
    public static final int TCP_TRANSPORT = TYPE_TRANSPORT_DATA_BLOCK << 4 | SUBTYPE_TRANSPORT_SPECIFIC;
    /** Keyed data block, address: the host's memory, moved by RDMA READ/WRITE (NVMe/RDMA). */
    public static final int KEYED_ADDRESS = TYPE_KEYED_DATA_BLOCK << 4 | SUBTYPE_ADDRESS;
    /** Keyed data block whose key the controller invalidates with its response (SEND with Invalidate). */
    public static final int KEYED_INVALIDATE = TYPE_KEYED_DATA_BLOCK << 4 | SUBTYPE_INVALIDATE_KEY;
    /** Largest length a keyed data block descriptor holds (3 bytes). */
    public static final int KEYED_MAX_LENGTH = (1 << 24) - 1;

    private Sgl() {
    }

    public static int type(int identifier) {
        return identifier >>> 4 & 0xf;
    }

    public static int subtype(int identifier) {
        return identifier & 0xf;
    }
}
