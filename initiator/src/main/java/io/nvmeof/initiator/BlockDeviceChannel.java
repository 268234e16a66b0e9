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
        try {
            return doRead(dst);
        } catch (IOException | RuntimeException e) {
            fresh();
            throw e;
        }
    }

    private int doRead(ByteBuffer dst) throws IOException {
        long size = device.size();
        if (position >= size) {
            return -1;
        }
        int want = (int) Math.min(dst.remaining(), size - position);
        int bs = device.blockSize();
        int done = 0;
        while (done < want) {
            int inBlock = (int) (position % bs);
            int whole = (want - done) / bs * bs;
            if (inBlock == 0 && whole > 0) {
                ByteBuffer slice = dst.duplicate().limit(dst.position() + whole);
                device.read(position, slice);
                dst.position(dst.position() + whole);
                position += whole;
                done += whole;
                continue;
            }
            block.clear();
            device.read(position - inBlock, block);
            int n = Math.min(bs - inBlock, want - done);
            dst.put(block.clear().position(inBlock).limit(inBlock + n));
            position += n;
            done += n;
        }
        return want;
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        ensureOpen();
        try {
            return doWrite(src);
        } catch (IOException | RuntimeException e) {
            fresh();
            throw e;
        }
    }

    /**
     * After a failure the old block buffer may still belong to a command the controller is
     * retrying: use a new one from then on.
     */
    private void fresh() {
        block = ByteBuffer.allocateDirect(device.blockSize());
    }

    private int doWrite(ByteBuffer src) throws IOException {
        long size = device.size();
        if (position + src.remaining() > size) {
            throw new IOException("writing " + src.remaining() + " bytes at " + position + " goes past the end of the "
                    + size + "-byte device");
        }
        int want = src.remaining();
        int bs = device.blockSize();
        int done = 0;
        while (done < want) {
            int inBlock = (int) (position % bs);
            int whole = (want - done) / bs * bs;
            if (inBlock == 0 && whole > 0) {
                ByteBuffer slice = src.duplicate().limit(src.position() + whole);
                device.write(position, slice);
                src.position(src.position() + whole);
                position += whole;
                done += whole;
                continue;
            }
            // a partial block: read, merge, write back
            block.clear();
            device.read(position - inBlock, block);
            int n = Math.min(bs - inBlock, want - done);
            block.clear().position(inBlock);
            block.put(src.duplicate().limit(src.position() + n));
            src.position(src.position() + n);
            block.clear();
            device.write(position - inBlock, block);
            position += n;
            done += n;
        }
        return want;
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
