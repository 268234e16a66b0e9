package io.nvmeof.cli;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Multipath;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code nvmeof write URI --offset N --input FILE}. */
@Command(name = "write", mixinStandardHelpOptions = true,
        description = "Copy a local file onto a remote namespace at a byte offset.")
final class WriteCommand extends ConnectedCommand.WithUri {
    @Option(names = {"-o", "--offset"}, required = true, converter = FioValues.Size.class,
            description = "Byte offset; a multiple of the block size; suffixes too (4k, 1M).")
    long offset;

    @Option(names = {"-d", "--input"}, required = true, description = "File to read from.")
    Path input;

    @Override
    void run(Controller c, PrintWriter out) throws Exception {
        copy(Devices.open(c), c.uri().subsystemNqn(), out);
    }

    @Override
    void run(Multipath m, PrintWriter out) throws Exception {
        copy(Devices.open(m), m.subsystemNqn(), out);
    }

    private void copy(BlockDevice dev, String nqn, PrintWriter out) throws Exception {
        try (FileChannel in = FileChannel.open(input, StandardOpenOption.READ)) {
            int bs = dev.blockSize();
            long length = in.size();
            if (offset < 0 || offset % bs != 0) {
                throw new IllegalArgumentException("--offset " + offset + " is not a multiple of the block size " + bs);
            }
            if (offset + length > dev.size()) {
                throw new IllegalArgumentException(input + " (" + length + " bytes) does not fit at offset " + offset
                        + " of the " + dev.size() + "-byte namespace");
            }
            int chunk = 1 << 20;
            ByteBuffer buf = ByteBuffer.allocateDirect(chunk);
            long done = 0;
            while (done < length) {
                buf.clear();
                int n = (int) Math.min(chunk, length - done);
                buf.limit(n);
                while (buf.hasRemaining()) {
                    if (in.read(buf, done + buf.position()) < 0) {
                        throw new IOException(input + " shrank while being copied");
                    }
                }
                int whole = n - n % bs;
                if (whole > 0) {
                    buf.flip().limit(whole);
                    dev.write(offset + done, buf);
                }
                if (whole < n) {
                    // The tail is a partial block: merge it with what the block holds now.
                    ByteBuffer block = ByteBuffer.allocateDirect(bs);
                    dev.read(offset + done + whole, block);
                    block.clear();
                    block.put(buf.clear().position(whole).limit(n));
                    block.clear();
                    dev.write(offset + done + whole, block);
                }
                done += n;
            }
            dev.flush();
            out.println("wrote " + length + " bytes at offset " + offset + " of " + nqn
                    + " nsid " + dev.nsid());
        }
    }
}
