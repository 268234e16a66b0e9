package io.nvmeof.fabric.tcp;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;

/**
 * Moves fixed headers between Netty buffers and a connection's little-endian scratch
 * buffer, where the nvme-protocol views read and write them. Headers are at most 128
 * bytes, so the copy is cheap, and nothing is allocated.
 */
public final class Wire {
    private Wire() {
    }

    /** Copies {@code len} bytes of {@code in} at absolute {@code index} to the start of {@code scratch}. */
    public static ByteBuffer load(ByteBuf in, int index, int len, ByteBuffer scratch) {
        scratch.clear().limit(len);
        in.getBytes(index, scratch);
        scratch.clear();
        return scratch;
    }

    /** Appends the first {@code len} bytes of {@code scratch} to {@code out}. */
    public static void store(ByteBuffer scratch, int len, ByteBuf out) {
        scratch.clear().limit(len);
        out.writeBytes(scratch);
        scratch.clear();
    }
}
