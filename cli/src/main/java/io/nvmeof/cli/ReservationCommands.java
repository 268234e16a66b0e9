package io.nvmeof.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Multipath;
import io.nvmeof.initiator.Reservations;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code resv-register}, {@code resv-acquire}, {@code resv-release} and {@code resv-report}: a
 * namespace's persistent reservation, with nvme-cli's option names and output. Keys are numbers,
 * decimal or 0x-prefixed hex, as nvme-cli reads them. nvme-cli's {@code -i} for {@code --iekey}
 * is taken here by {@code --nr-io-queues}: write {@code --iekey}.
 */
final class ReservationCommands {
    private ReservationCommands() {
    }

    /** What the four share: the namespace, through one controller or every path. */
    abstract static class ResvCommand extends ConnectedCommand.WithUri {
        @Option(names = {"-n", "--namespace-id"}, description = "NSID (default: the URI's, or the first active one).")
        Integer nsid;

        @Override
        final void run(Controller c, PrintWriter out) throws Exception {
            run(nsid != null ? c.namespace(nsid) : Devices.open(c), out);
        }

        @Override
        final void run(Multipath m, PrintWriter out) throws Exception {
            run(nsid != null ? m.namespace(nsid) : Devices.open(m), out);
        }

        abstract void run(BlockDevice dev, PrintWriter out) throws Exception;
    }

    /** The three that change the reservation: a current key, and IEKEY. */
    abstract static class KeyedCommand extends ResvCommand {
        @Option(names = {"-c", "--crkey"}, defaultValue = "0", description = "Current reservation key.")
        String crkey;

        @Option(names = "--iekey", description = "Ignore the current key (Register only: Acquire and Release refuse it).")
        boolean iekey;

        long crkey() {
            return number("--crkey", crkey);
        }

        @Override
        void checkOptions() {
            crkey();
            check();
        }

        abstract void check();
    }

    /** Parses a key or type as nvme-cli does: decimal, or hex after 0x. */
    static long number(String option, String v) {
        try {
            return v.startsWith("0x") || v.startsWith("0X") ? Long.parseUnsignedLong(v.substring(2), 16)
                    : Long.parseUnsignedLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " must be a number (decimal or 0x hex): " + v);
        }
    }

    static int field(String option, int value, int max) {
        if (value < 0 || value > max) {
            throw new IllegalArgumentException(option + " must be 0.." + max + ": " + value);
        }
        return value;
    }

    static Reservations.Type type(int rtype) {
        Reservations.Type t = Reservations.Type.of(rtype);
        if (t == null) {
            throw new IllegalArgumentException("--rtype must be 1..6 (1 Write Exclusive, 2 Exclusive Access,"
                    + " 3/4 the same for registrants only, 5/6 for all registrants): " + rtype);
        }
        return t;
    }

    @Command(name = "resv-register", mixinStandardHelpOptions = true,
            description = "Register, unregister or replace this host's reservation key (Reservation Register).")
    static final class Register extends KeyedCommand {
        @Option(names = {"-k", "--nrkey"}, defaultValue = "0", description = "New reservation key.")
        String nrkey;

        @Option(names = {"-r", "--rrega"}, defaultValue = "0", description = "Action: 0 register, 1 unregister, 2 replace.")
        int rrega;

        @Option(names = {"-p", "--cptpl"}, defaultValue = "0",
                description = "Persist through power loss: 0 no change, 2 clear, 3 set.")
        int cptpl;

        @Override
        void check() {
            field("--rrega", rrega, 2);
            field("--cptpl", cptpl, 3);
            number("--nrkey", nrkey);
        }

        @Override
        void run(BlockDevice dev, PrintWriter out) throws Exception {
            dev.reservations().registerAsync(rrega, iekey, cptpl, crkey(),
                    number("--nrkey", nrkey)).get();
            out.println("NVME Reservation  success");
            out.flush();
        }
    }

    @Command(name = "resv-acquire", mixinStandardHelpOptions = true,
            description = "Acquire a reservation, or preempt other hosts' registrations (Reservation Acquire).")
    static final class Acquire extends KeyedCommand {
        @Option(names = {"-p", "--prkey"}, defaultValue = "0", description = "Key of the registrants to preempt.")
        String prkey;

        @Option(names = {"-t", "--rtype"}, defaultValue = "0", description = "Reservation type, 1..6.")
        int rtype;

        @Option(names = {"-a", "--racqa"}, defaultValue = "0", description = "Action: 0 acquire, 1 preempt, 2 preempt and abort.")
        int racqa;

        @Override
        void check() {
            field("--racqa", racqa, 2);
            type(rtype);
            number("--prkey", prkey);
        }

        @Override
        void run(BlockDevice dev, PrintWriter out) throws Exception {
            dev.reservations().acquireAsync(racqa, iekey, type(rtype), crkey(),
                    number("--prkey", prkey)).get();
            out.println("NVME Reservation Acquire success");
            out.flush();
        }
    }

    @Command(name = "resv-release", mixinStandardHelpOptions = true,
            description = "Release the reservation, or clear it and every registration (Reservation Release).")
    static final class Release extends KeyedCommand {
        @Option(names = {"-t", "--rtype"}, defaultValue = "0", description = "Type of the reservation to release, 1..6.")
        int rtype;

        @Option(names = {"-a", "--rrela"}, defaultValue = "0", description = "Action: 0 release, 1 clear.")
        int rrela;

        @Override
        void check() {
            field("--rrela", rrela, 1);
            field("--rtype", rtype, 6);
        }

        @Override
        void run(BlockDevice dev, PrintWriter out) throws Exception {
            dev.reservations().releaseAsync(rrela, iekey, Reservations.Type.of(rtype),
                    crkey()).get();
            out.println("NVME Reservation Release success");
            out.flush();
        }
    }

    @Command(name = "resv-report", mixinStandardHelpOptions = true,
            description = "Show the reservation and its registrants (Reservation Report, extended data structure).")
    static final class Report extends ResvCommand {
        @Option(names = {"-e", "--eds"}, description = "Extended data structure (always used: fabrics host IDs have 128 bits).")
        boolean eds;

        @Option(names = {"-o", "--output-format"}, defaultValue = "normal", description = "normal or json.")
        String format;

        @Override
        void checkOptions() {
            if (!format.equals("normal") && !format.equals("json")) {
                throw new IllegalArgumentException("--output-format must be normal or json: " + format);
            }
        }

        @Override
        void run(BlockDevice dev, PrintWriter out) throws Exception {
            Reservations.Report r = dev.reservations().reportAsync().get();
            int rtype = r.type() == null ? 0 : r.type().code;
            if (format.equals("json")) {
                ObjectNode o = new ObjectMapper().createObjectNode();
                o.put("gen", Integer.toUnsignedLong(r.generation()));
                o.put("rtype", rtype);
                o.put("regctl", r.registered());
                o.put("ptpls", r.ptpl() ? 1 : 0);
                ArrayNode regs = o.putArray("regctlext");
                for (Reservations.Registrant g : r.registrants()) {
                    regs.addObject().put("cntlid", g.cntlid()).put("rcsts", g.holds() ? 1 : 0)
                            .put("rkey", g.key()).put("hostid", hostId(g));
                }
                out.println(o.toPrettyString());
            } else {
                out.println();
                out.println("NVME Reservation status:");
                out.println();
                out.printf("gen       : %d%n", Integer.toUnsignedLong(r.generation()));
                out.printf("rtype     : %d%n", rtype);
                out.printf("regctl    : %d%n", r.registered());
                out.printf("ptpls     : %d%n", r.ptpl() ? 1 : 0);
                int i = 0;
                for (Reservations.Registrant g : r.registrants()) {
                    out.printf("regctlext[%d] :%n", i++);
                    out.printf("  cntlid     : %x%n", g.cntlid());
                    out.printf("  rcsts      : %x%n", g.holds() ? 1 : 0);
                    out.printf("  rkey       : %x%n", g.key());
                    out.printf("  hostid     : %s%n", hostId(g));
                }
                out.println();
            }
            out.flush();
        }

        private static String hostId(Reservations.Registrant g) {
            return HexFormat.of().formatHex(ByteBuffer.allocate(16).putLong(g.hostId().getMostSignificantBits())
                    .putLong(g.hostId().getLeastSignificantBits()).array());
        }
    }
}
