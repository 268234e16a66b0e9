package io.nvmeof.cli;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Multipath;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code nvmeof read URI --offset N --length N --output FILE}. */
@Command(name = "read", mixinStandardHelpOptions = true,
        description = "Copy a byte range of a remote namespace into a local file.")
final class ReadCommand extends ConnectedCommand.WithUri {
    @Option(names = {"-o", "--offset"}, required = true, converter = FioValues.Size.class,
            description = "Byte offset (any; reads whole blocks around it); suffixes as --size takes them (4k, 1M).")
    long offset;

    @Option(names = {"-l", "--length"}, required = true, converter = FioValues.Size.class,
            description = "Bytes to read; suffixes too (4k, 255M).")
    long length;

    @Option(names = {"-d", "--output"}, required = true, description = "File to write (created or truncated).")
    Path output;

    @Override
    void checkOptions() {
        if (offset < 0 || length < 0) {
            throw new IllegalArgumentException("--offset and --length must not be negative");
        }
    }

    @Override
    void run(Controller c, PrintWriter out) throws Exception {
        copy(Devices.open(c), c.uri().subsystemNqn(), out);
    }

    @Override
    void run(Multipath m, PrintWriter out) throws Exception {
        copy(Devices.open(m), m.subsystemNqn(), out);
    }

    private void copy(BlockDevice dev, String nqn, PrintWriter out) throws Exception {
        try (FileChannel file = FileChannel.open(output, StandardOpenOption.WRITE, StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            int bs = dev.blockSize();
            if (offset + length > dev.size()) {
                throw new IllegalArgumentException("range " + offset + "+" + length + " goes past the end of the "
                        + dev.size() + "-byte namespace");
            }
            int chunk = 1 << 20;
            ByteBuffer buf = ByteBuffer.allocateDirect(chunk + bs);
            long done = 0;
            while (done < length) {
                long from = offset + done;
                long aligned = from - from % bs;
                int skip = (int) (from - aligned);
                int want = (int) Math.min(chunk, length - done);
                int span = (skip + want + bs - 1) / bs * bs;
                buf.clear().limit(span);
                dev.read(aligned, buf);
                buf.clear().position(skip).limit(skip + want);
                while (buf.hasRemaining()) {
                    file.write(buf, done + buf.position() - skip);
                }
                done += want;
            }
            out.println("read " + length + " bytes at offset " + offset + " of " + nqn
                    + " nsid " + dev.nsid() + " into " + output);
        }
    }
}
