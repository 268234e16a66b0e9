package io.nvmeof.fabric.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.nvmeof.protocol.tcp.Pdu;
import java.nio.ByteBuffer;

/**
 * Writes PDUs for both sides: a header encoded in the connection's scratch buffer, its header
 * digest, and the data digest after data (NVMe/TCP 1.0, 3.6.1). One per connection, confined to
 * its event loop; it allocates nothing but the buffers it is asked for, and PDUs without data
 * (or with a few bytes) take recycled buffers of the connection's own ({@link SmallBuffers}).
 */
public final class PduWriter {
    private final Crc32c crc = new Crc32c();
    private final SmallBuffers small = new SmallBuffers();
    private final ByteBuffer scratch;

    /** @param scratch where the nvme-protocol views encode headers (little-endian) */
    public PduWriter(ByteBuffer scratch) {
        this.scratch = scratch;
    }

    /** The scratch buffer headers are encoded in. */
    public ByteBuffer scratch() {
        return scratch;
    }

    /** Appends the first {@code hlen} bytes of the scratch buffer to {@code out}, and their digest if {@code hd}. */
    public void header(ByteBuf out, int hlen, boolean hd) {
        int at = out.writerIndex();
        Wire.store(scratch, hlen, out);
        if (hd) {
            out.writeIntLE(crc.compute(out, at, hlen));
        }
    }

    /**
     * A new direct buffer holding the header (and its digest if {@code hd}), with room for
     * {@code room} more bytes: data and its digest.
     */
    public ByteBuf header(ByteBufAllocator alloc, int hlen, boolean hd, int room) {
        int size = hlen + (hd ? Pdu.DIGEST_SIZE : 0) + room;
        ByteBuf out = size <= SmallBuffers.SIZE && SmallBuffers.AVAILABLE ? small.take() : alloc.directBuffer(size);
        header(out, hlen, hd);
        return out;
    }

    /** Appends the data digest of the {@code len} bytes at {@code index} of {@code out}. */
    public void dataDigest(ByteBuf out, int index, int len) {
        out.writeIntLE(crc.compute(out, index, len));
    }
}
