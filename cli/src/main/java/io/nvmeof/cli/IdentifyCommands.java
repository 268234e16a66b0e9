package io.nvmeof.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.protocol.IdentifyController;
import io.nvmeof.protocol.IdentifyNamespace;
import java.io.PrintWriter;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code id-ctrl}, {@code id-ns} and {@code list}: identify data with nvme-cli's field names. */
final class IdentifyCommands {
    /** The fields nvme-cli prints in hex; the rest are decimal or text. */
    static final Set<String> HEX = Set.of("vid", "ssvid", "cmic", "cntlid", "ver", "oaes", "ctratt",
            "oacs", "frmw", "lpa", "sqes", "cqes", "oncs", "fuses", "vwc", "sgls", "fcatt", "nsze", "ncap", "nuse",
            "nsfeat", "nmic", "rescap", "dlfeat", "nsattr");

    private IdentifyCommands() {
    }

    /** Prints fields as nvme-cli does: "name      : value", or as a JSON object with numbers where nvme-cli has numbers. */
    static void print(PrintWriter out, String title, Map<String, Object> fields, boolean json) {
        if (json) {
            ObjectNode o = new ObjectMapper().createObjectNode();
            fields.forEach((k, v) -> {
                if (v instanceof Long l) {
                    o.put(k, l);
                } else if (v instanceof Integer i) {
                    o.put(k, i);
                } else {
                    o.put(k, String.valueOf(v));
                }
            });
            out.println(o.toPrettyString());
        } else {
            out.println(title);
            fields.forEach((k, v) -> {
                String value = HEX.contains(k) && v instanceof Number n ? "0x" + Long.toHexString(n.longValue())
                        : String.valueOf(v);
                out.printf("%-10s: %s%n", k, value);
            });
        }
        out.flush();
    }

    static Map<String, Object> controllerFields(IdentifyController id) {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("vid", id.vid());
        f.put("ssvid", id.ssvid());
        f.put("sn", id.serialNumber());
        f.put("mn", id.modelNumber());
        f.put("fr", id.firmwareRevision());
        f.put("rab", id.rab());
        f.put("ieee", String.format("%06x", id.ieeeOui()));
        f.put("cmic", id.cmic());
        f.put("mdts", id.mdts());
        f.put("cntlid", id.cntlid());
        f.put("ver", id.version());
        f.put("oaes", id.oaes());
        f.put("ctratt", id.ctratt());
        f.put("cntrltype", id.controllerType());
        f.put("oacs", id.oacs());
        f.put("acl", id.acl());
        f.put("aerl", id.aerl());
        f.put("frmw", id.frmw());
        f.put("lpa", id.lpa());
        f.put("elpe", id.elpe());
        f.put("kas", id.kas());
        f.put("sqes", id.sqes());
        f.put("cqes", id.cqes());
        f.put("maxcmd", id.maxcmd());
        f.put("nn", id.nn());
        f.put("oncs", id.oncs());
        f.put("fuses", id.fuses());
        f.put("vwc", id.vwc());
        f.put("acwu", id.acwu());
        f.put("sgls", id.sgls());
        f.put("subnqn", id.subsystemNqn());
        f.put("ioccsz", id.ioccsz());
        f.put("iorcsz", id.iorcsz());
        f.put("icdoff", id.icdoff());
        f.put("fcatt", id.fcatt());
        f.put("msdbd", id.msdbd());
        return f;
    }

    static Map<String, Object> namespaceFields(IdentifyNamespace id) {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("nsze", id.nsze());
        f.put("ncap", id.ncap());
        f.put("nuse", id.nuse());
        f.put("nsfeat", id.nsfeat());
        f.put("nlbaf", id.nlbaf());
        f.put("flbas", id.flbas());
        f.put("nmic", id.nmic());
        f.put("rescap", id.rescap());
        f.put("dlfeat", id.dlfeat());
        f.put("nsattr", id.nsattr());
        f.put("nguid", HexFormat.of().formatHex(id.nguid()));
        f.put("eui64", HexFormat.of().formatHex(id.eui64()));
        f.put("lbaf  0", "ms:0   lbads:" + Integer.numberOfTrailingZeros(id.blockSize()) + " rp:0 (in use)");
        return f;
    }

    /** What the identify commands share: a URI, an output format, the host options, one connection. */
    abstract static class Connected extends ConnectedCommand.WithUri {
        @Mixin
        OutputFormat output;

        @Override
        void checkOptions() {
            output.json();
        }

        @Override
        ConnectOptions options(ConnectOptions fromUser) {
            return fromUser.ioQueues(1);
        }

        @Override
        final void run(Controller c, PrintWriter out) throws Exception {
            run(c, out, output.json());
        }

        abstract void run(Controller c, PrintWriter out, boolean json) throws Exception;
    }

    @Command(name = "id-ctrl", mixinStandardHelpOptions = true, description = "Identify Controller, with nvme-cli's field names.")
    static final class IdCtrl extends Connected {
        @Override
        void run(Controller c, PrintWriter out, boolean json) {
            print(out, "NVME Identify Controller:", controllerFields(c.identify()), json);
        }
    }

    @Command(name = "id-ns", mixinStandardHelpOptions = true, description = "Identify Namespace, with nvme-cli's field names.")
    static final class IdNs extends Connected {
        @Option(names = {"-n", "--namespace-id"}, description = "NSID (default: the URI's, or the first active one).")
        Integer nsid;

        @Override
        void run(Controller c, PrintWriter out, boolean json) throws Exception {
            int n = nsid != null ? nsid : Devices.open(c).nsid();
            print(out, "NVME Identify Namespace " + Integer.toUnsignedString(n) + ":", namespaceFields(c.identifyNamespace(n)),
                    json);
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List the active namespaces of a subsystem with their sizes.")
    static final class ListNamespaces extends Connected {
        @Override
        void run(Controller c, PrintWriter out, boolean json) throws Exception {
            List<BlockDevice> all = c.namespaces();
            if (json) {
                ObjectMapper m = new ObjectMapper();
                ObjectNode root = m.createObjectNode();
                root.put("subsystem", c.uri().subsystemNqn());
                root.put("model", c.identify().modelNumber());
                root.put("serial", c.identify().serialNumber());
                var arr = root.putArray("namespaces");
                for (BlockDevice d : all) {
                    ObjectNode n = arr.addObject();
                    n.put("nsid", Integer.toUnsignedLong(d.nsid()));
                    n.put("size", d.size());
                    n.put("sector_size", d.blockSize());
                    n.put("uri", uri.replaceAll("\\?.*$", "") + "?nsid=" + Integer.toUnsignedString(d.nsid()));
                }
                out.println(root.toPrettyString());
            } else {
                out.printf("%-10s %-20s %-40s %s%n", "NSID", "Size", "Model", "Format");
                out.printf("%-10s %-20s %-40s %s%n", "-".repeat(10), "-".repeat(20), "-".repeat(40), "-".repeat(16));
                for (BlockDevice d : all) {
                    out.printf("%-10s %-20s %-40s %d B + 0 B%n", Integer.toUnsignedString(d.nsid()), human(d.size()),
                            c.identify().modelNumber(), d.blockSize());
                }
            }
            out.flush();
        }

        static String human(long bytes) {
            String[] units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
            double v = bytes;
            int u = 0;
            while (v >= 1024 && u < units.length - 1) {
                v /= 1024;
                u++;
            }
            return String.format(Locale.ROOT, "%.2f %s", v, units[u]);
        }
    }
}
