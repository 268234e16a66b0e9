package io.nvmeof.initiator;

import io.nvmeof.protocol.AdminOpcode;
import io.nvmeof.protocol.DiscoveryInformation;
import io.nvmeof.protocol.DiscoveryLogEntry;
import io.nvmeof.protocol.Flyweight;
import io.nvmeof.protocol.LogPage;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a discovery log the way nvme-cli does (NVMe-oF 1.1, 5.3): the header for the number
 * of records, then header and records, then the header once more; if the generation counter
 * moved in between, again (up to a few times).
 */
public final class Discovery {
    private static final int ATTEMPTS = 5;

    /** A discovery log: its generation counter and entries. */
    public record Log(long generation, List<DiscoveryEntry> entries) {
    }

    private Discovery() {
    }

    static ByteBuffer read(Controller c, long offset, int length) throws IOException {
        ByteBuffer b = Flyweight.allocate(length);
        c.admin(Command.getLogPage(LogPage.DISCOVERY, offset, b, length, false));
        return b;
    }

    /** The {@code numrec} entries of a discovery log page read through {@code via}. */
    static List<DiscoveryEntry> entries(ByteBuffer page, int numrec, NvmeofUri via) {
        List<DiscoveryEntry> entries = new ArrayList<>(numrec);
        DiscoveryLogEntry view = new DiscoveryLogEntry();
        for (int i = 0; i < numrec; i++) {
            entries.add(DiscoveryEntry.of(view.wrap(page, DiscoveryLogEntry.HEADER_SIZE + i * DiscoveryLogEntry.SIZE), via));
        }
        return entries;
    }

    /**
     * Sends Discovery Information Management (TP8010) to a central discovery controller:
     * {@code tas} is {@link DiscoveryInformation#TAS_REGISTER}, {@code TAS_DEREGISTER} or
     * {@code TAS_UPDATE}, {@code info} who registers and what. Fails with the controller's status
     * ({@link NvmeStatusException}: Invalid Discovery Information, Insufficient Discovery Resources,
     * Access Denied, or Invalid Command Opcode from a controller that takes no registrations).
     */
    public static void manage(Controller c, int tas, DiscoveryInformation info) throws IOException {
        if (!c.isDiscovery()) {
            throw new IllegalArgumentException(c.uri() + " is not a discovery controller");
        }
        if (tas < DiscoveryInformation.TAS_REGISTER || tas > DiscoveryInformation.TAS_UPDATE) {
            throw new IllegalArgumentException("TAS must be 0 (register), 1 (deregister) or 2 (update), not " + tas);
        }
        ByteBuffer data = info.encode();
        ByteBuffer direct = Flyweight.allocate(data.capacity()).put(0, data, 0, data.capacity());
        c.admin(Command.admin(AdminOpcode.DISCOVERY_INFO_MGMT, "Discovery Information Management").cdw(10, tas)
                .dataOut(direct, direct.capacity()));
    }

    /** Reads the log from a connected discovery controller. */
    public static Log read(Controller c) throws IOException {
        if (!c.isDiscovery()) {
            throw new IllegalArgumentException(c.uri() + " is not a discovery controller");
        }
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            ByteBuffer header = read(c, 0, DiscoveryLogEntry.HEADER_SIZE);
            long generation = header.getLong(DiscoveryLogEntry.GENCTR_OFFSET);
            long numrec = header.getLong(DiscoveryLogEntry.NUMREC_OFFSET);
            if (numrec < 0 || numrec > 4096) {
                throw new IOException("discovery log claims " + numrec + " records");
            }
            List<DiscoveryEntry> entries = List.of();
            if (numrec > 0) {
                ByteBuffer all = read(c, 0, (int) (DiscoveryLogEntry.HEADER_SIZE + numrec * DiscoveryLogEntry.SIZE));
                entries = entries(all, (int) numrec, c.uri());
                if (all.getLong(DiscoveryLogEntry.GENCTR_OFFSET) != generation) {
                    continue;
                }
            }
            if (read(c, 0, DiscoveryLogEntry.HEADER_SIZE).getLong(DiscoveryLogEntry.GENCTR_OFFSET) == generation) {
                return new Log(generation, entries);
            }
        }
        throw new IOException("the discovery log of " + c.uri() + " kept changing while being read");
    }
}
