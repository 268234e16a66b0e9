package io.nvmeof.initiator;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NonWritableChannelException;
import java.nio.channels.SeekableByteChannel;

/**
 * A {@link BlockDevice} as a {@link SeekableByteChannel}, so Java I/O code can use a remote
 * volume: any position and length; partial blocks are read, merged and written back. Its
 * size is the device's; it cannot grow or shrink. Not for concurrent use by several threads.
 */
public final class BlockDeviceChannel implements SeekableByteChannel {
    private final BlockDevice device;
    private ByteBuffer block;
    private long position;
    private boolean open = true;

    BlockDeviceChannel(BlockDevice device) {
        this.device = device;
        this.block = ByteBuffer.allocateDirect(device.blockSize());
    }

    private void ensureOpen() throws ClosedChannelException {
        if (!open) {
            throw new ClosedChannelException();
        }
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        ensureOpen();
        long size = device.size();
        if (position >= size) {
            return -1;
        }
        return transfer(dst, (int) Math.min(dst.remaining(), size - position), false);
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        ensureOpen();
        long size = device.size();
        if (position + src.remaining() > size) {
            throw new IOException("writing " + src.remaining() + " bytes at " + position + " goes past the end of the "
                    + size + "-byte device");
        }
        return transfer(src, src.remaining(), true);
    }

    /**
     * Moves {@code want} bytes between {@code buf} and the device at the current position:
     * whole blocks straight through, partial ones by way of a block buffer (read, and for a
     * write merge and write back). After a failure the old block buffer may still belong to
     * a command the controller is retrying, so a new one is used from then on.
     */
    private int transfer(ByteBuffer buf, int want, boolean write) throws IOException {
        try {
            int bs = device.blockSize();
            int done = 0;
            while (done < want) {
                int inBlock = (int) (position % bs);
                int whole = (want - done) / bs * bs;
                int n;
                if (inBlock == 0 && whole > 0) {
                    n = whole;
                    ByteBuffer slice = buf.duplicate().limit(buf.position() + n);
                    if (write) {
                        device.write(position, slice);
                    } else {
                        device.read(position, slice);
                    }
                    buf.position(buf.position() + n);
                } else {
                    n = Math.min(bs - inBlock, want - done);
                    block.clear();
                    device.read(position - inBlock, block);
                    block.clear().position(inBlock).limit(inBlock + n);
                    if (write) {
                        block.put(buf.duplicate().limit(buf.position() + n));
                        buf.position(buf.position() + n);
                        device.write(position - inBlock, block.clear());
                    } else {
                        buf.put(block);
                    }
                }
                position += n;
                done += n;
            }
            return want;
        } catch (IOException | RuntimeException e) {
            block = ByteBuffer.allocateDirect(device.blockSize());
            throw e;
        }
    }

    @Override
    public long position() throws IOException {
        ensureOpen();
        return position;
    }

    @Override
    public SeekableByteChannel position(long newPosition) throws IOException {
        ensureOpen();
        if (newPosition < 0) {
            throw new IllegalArgumentException("negative position " + newPosition);
        }
        position = newPosition;
        return this;
    }

    @Override
    public long size() throws IOException {
        ensureOpen();
        return device.size();
    }

    /** A block device cannot shrink: truncating to its size or more does nothing, less is refused. */
    @Override
    public SeekableByteChannel truncate(long size) throws IOException {
        ensureOpen();
        if (size < device.size()) {
            throw new NonWritableChannelException();
        }
        return this;
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    /** Flushes the device (durable writes) and closes the channel; the device stays usable. */
    @Override
    public void close() throws IOException {
        if (open) {
            open = false;
            device.flush();
        }
    }
}
