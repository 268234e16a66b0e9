package io.nvmeof.fabric.tcp;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * CRC32C header and data digests over Netty buffers (NVMe/TCP 1.0, 3.6.1.2). One instance
 * per connection, confined to its event loop; it reuses one {@link CRC32C} and the
 * buffers' internal NIO views, so a digest allocates nothing.
 */
public final class Crc32c {
    private final CRC32C crc = new CRC32C();

    /** CRC32C of {@code len} bytes of {@code buf} at absolute {@code index}. */
    public int compute(ByteBuf buf, int index, int len) {
        crc.reset();
        update(buf, index, len);
        return (int) crc.getValue();
    }

    /** Starts a digest that {@link #update} extends and {@link #value} ends. */
    public void reset() {
        crc.reset();
    }

    public void update(ByteBuf buf, int index, int len) {
        if (len == 0) {
            return;
        }
        if (buf.nioBufferCount() == 1) {
            ByteBuffer nio = buf.internalNioBuffer(index, len);
            crc.update(nio);
        } else {
            for (ByteBuffer nio : buf.nioBuffers(index, len)) {
                crc.update(nio);
            }
        }
    }

    public void update(ByteBuffer nio) {
        crc.update(nio);
    }

    public int value() {
        return (int) crc.getValue();
    }
}
