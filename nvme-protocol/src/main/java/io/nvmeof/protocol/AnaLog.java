package io.nvmeof.protocol;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The Asymmetric Namespace Access log page (Base 2.0, 5.16.1.12, Figures 225-227): a 16-byte
 * header (change count, number of group descriptors) and per ANA group a 32-byte descriptor
 * (group ID, number of NSIDs, change count, state) followed by its NSIDs, none with RGO.
 * Offsets are absolute in a little-endian buffer.
 */
public final class AnaLog {
    public static final int HEADER_SIZE = 16;
    public static final int DESCRIPTOR_SIZE = 32;
    /** Get Log Page LSP bit 0: return groups only, no NSID lists. */
    public static final int LSP_RGO = 1;

    /** ANA states as the descriptor encodes them (Figure 227: bits 3:0). */
    public static final int OPTIMIZED = 0x1;
    public static final int NON_OPTIMIZED = 0x2;
    public static final int INACCESSIBLE = 0x3;
    public static final int PERSISTENT_LOSS = 0x4;
    public static final int CHANGE = 0xF;

    private AnaLog() {
    }

    /** Bytes of a log with {@code groups} descriptors and {@code nsids} NSIDs in all. */
    public static int size(int groups, int nsids) {
        return HEADER_SIZE + groups * DESCRIPTOR_SIZE + nsids * 4;
    }

    public static void header(ByteBuffer b, long changeCount, int groups) {
        ByteBuffer le = b.order() == ByteOrder.LITTLE_ENDIAN ? b : b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        le.putLong(0, changeCount).putShort(8, (short) groups);
    }

    /** Writes a descriptor at {@code at} with its NSIDs; returns the offset after it. */
    public static int descriptor(ByteBuffer b, int at, int group, long changeCount, int state, int[] nsids, int count) {
        ByteBuffer le = b.order() == ByteOrder.LITTLE_ENDIAN ? b : b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        le.putInt(at, group).putInt(at + 4, count).putLong(at + 8, changeCount).put(at + 16, (byte) (state & 0xf));
        for (int i = 0; i < count; i++) {
            le.putInt(at + DESCRIPTOR_SIZE + 4 * i, nsids[i]);
        }
        return at + DESCRIPTOR_SIZE + 4 * count;
    }

    public static long changeCount(ByteBuffer b) {
        return b.duplicate().order(ByteOrder.LITTLE_ENDIAN).getLong(0);
    }

    public static int groupCount(ByteBuffer b) {
        return b.duplicate().order(ByteOrder.LITTLE_ENDIAN).getShort(8) & 0xffff;
    }

    public static int group(ByteBuffer b, int at) {
        return b.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(at);
    }

    public static int nsidCount(ByteBuffer b, int at) {
        return b.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(at + 4);
    }

    public static int state(ByteBuffer b, int at) {
        return b.get(at + 16) & 0xf;
    }

    public static int nsid(ByteBuffer b, int at, int index) {
        return b.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(at + DESCRIPTOR_SIZE + 4 * index);
    }
}
