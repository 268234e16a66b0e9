package io.nvmeof.target.backend;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A regular file as a namespace, with positional reads and writes. A missing file is created
 * at the requested size; an existing one keeps its contents and its size (rounded down to
 * whole blocks) unless a larger size is asked for, when it grows. Flush forces data to the
 * device ({@code fdatasync}).
 */
public final class FileBackend implements Backend {
    private final Path path;
    private final FileChannel channel;
    private final long size;
    private final int blockSize;
    private final boolean readOnly;

    private FileBackend(Path path, FileChannel channel, long size, int blockSize, boolean readOnly) {
        this.path = path;
        this.channel = channel;
        this.size = size;
        this.blockSize = blockSize;
        this.readOnly = readOnly;
    }

    /**
     * Opens {@code path}; {@code size <= 0} means "use the file's size" and requires the
     * file to exist.
     */
    public static FileBackend open(Path path, long size, int blockSize, boolean readOnly) throws IOException {
        boolean exists = Files.exists(path);
        if (!exists && size <= 0) {
            throw new IOException(path + " does not exist; give a size to create it");
        }
        if (exists && !Files.isRegularFile(path)) {
            throw new IOException(path + " is not a regular file");
        }
        FileChannel ch = readOnly
                ? FileChannel.open(path, StandardOpenOption.READ)
                : FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.CREATE);
        try {
            long current = ch.size();
            long want = size > 0 ? size : current;
            if (want > current) {
                if (readOnly) {
                    throw new IOException(path + " is " + current + " bytes, smaller than the " + want + " asked for");
                }
                // A sparse extension: one byte at the end.
                ch.write(ByteBuffer.wrap(new byte[1]), want - 1);
                ch.force(true);
            }
            long usable = want - want % blockSize;
            if (usable <= 0) {
                throw new IOException(path + " is smaller than one " + blockSize + "-byte block");
            }
            return new FileBackend(path, ch, usable, blockSize, readOnly);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    @Override
    public boolean blocking() {
        return true;
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        long at = offset;
        while (dst.hasRemaining()) {
            int n = channel.read(dst, at);
            if (n < 0) {
                // Past the end of a sparse or shrunk file: reads as zeros.
                while (dst.hasRemaining()) {
                    dst.put((byte) 0);
                }
                return;
            }
            at += n;
        }
    }

    @Override
    public void write(long offset, ByteBuffer src) throws IOException {
        long at = offset;
        while (src.hasRemaining()) {
            at += channel.write(src, at);
        }
    }

    @Override
    public void flush() throws IOException {
        if (!readOnly) {
            channel.force(false);
        }
    }

    @Override
    public String describe() {
        return "file:" + path;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
