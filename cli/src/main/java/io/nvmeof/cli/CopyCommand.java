package io.nvmeof.cli;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Multipath;
import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code nvmeof copy URI --sdlba D --slbs S1,S2 --blocks B1,B2}: nvme-cli's {@code nvme copy}
 * options (blocks 0's based, as nvme-cli passes them): the ranges, in order, to consecutive blocks
 * from SDLBA, with the NVMe Copy command (the data stays in the target).
 */
@Command(name = "copy", mixinStandardHelpOptions = true,
        description = "Copy block ranges within a remote namespace (NVMe Copy: no data crosses the network).")
final class CopyCommand extends ConnectedCommand.WithUri {
    @Option(names = {"-n", "--namespace-id"}, description = "NSID (default: the URI's, or the first active one).")
    Integer nsid;

    @Option(names = {"-d", "--sdlba"}, required = true, description = "First destination block.")
    long sdlba;

    @Option(names = {"-s", "--slbs"}, required = true, split = ",", description = "First block of each source range.")
    List<Long> slbs;

    @Option(names = {"-b", "--blocks"}, required = true, split = ",",
            description = "Blocks of each source range, 0's based (as nvme-cli: 63 copies 64 blocks).")
    List<Integer> blocks;

    @Option(names = {"-F", "--format"}, defaultValue = "0", description = "Source range descriptor format: 0.")
    int format;

    @Override
    void checkOptions() {
        if (slbs.size() != blocks.size()) {
            throw new IllegalArgumentException("--slbs and --blocks must name as many ranges: " + slbs.size()
                    + " and " + blocks.size());
        }
        if (format != 0) {
            throw new IllegalArgumentException("--format must be 0 (the only source range format offered)");
        }
        for (int b : blocks) {
            if (b < 0 || b > 0xffff) {
                throw new IllegalArgumentException("--blocks are 0's based, 0..65535: " + b);
            }
        }
    }

    @Override
    void run(Controller c, PrintWriter out) throws Exception {
        copy(nsid != null ? c.namespace(nsid) : Devices.open(c), out);
    }

    @Override
    void run(Multipath m, PrintWriter out) throws Exception {
        copy(nsid != null ? m.namespace(nsid) : Devices.open(m), out);
    }

    private void copy(BlockDevice dev, PrintWriter out) throws Exception {
        long bs = dev.blockSize();
        long to = sdlba;
        for (int i = 0; i < slbs.size(); i++) {
            long n = blocks.get(i) + 1L;
            dev.copyAsync(slbs.get(i) * bs, to * bs, n * bs).get();
            to += n;
        }
        out.println("NVMe Copy: success");
        out.flush();
    }
}
