package io.nvmeof.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Multipath;
import io.nvmeof.initiator.NvmeofUri;
import java.io.PrintWriter;
import picocli.CommandLine.Command;

/**
 * {@code nvmeof list-subsys URI}: the paths to a subsystem with their states and ANA states, as
 * nvme-cli's {@code list-subsys} prints them (one address is a set of one path).
 */
@Command(name = "list-subsys", mixinStandardHelpOptions = true,
        description = "Connect every path of a URI (HOST:PORT,HOST:PORT/<NQN>) and show each with its controller"
                + " state and ANA state, as nvme-cli's list-subsys.")
final class ListSubsysCommand extends IdentifyCommands.Connected {
    @Override
    boolean multipathAlways() {
        return true; // one address is a set of one path, so the output has one shape
    }

    @Override
    void run(Controller c, PrintWriter out, boolean json) {
        throw new IllegalStateException("list-subsys works on a multipath set");
    }

    @Override
    void run(Multipath m, PrintWriter out) throws Exception {
        BlockDevice d = Devices.open(m);
        if (output.json()) {
            out.println(json(m, d.nsid()).toPrettyString());
        } else {
            out.print(text(m, d.nsid()));
        }
        out.flush();
    }

    /** nvme-cli's shape: the subsystem, then a line per path (name, transport, address, state, ANA state). */
    static String text(Multipath m, int nsid) {
        StringBuilder s = new StringBuilder();
        String host = m.paths().get(0).controller() != null ? m.hostNqn() : "";
        s.append("nvmeof-subsys - NQN=").append(m.subsystemNqn()).append('\n');
        s.append("                hostnqn=").append(host).append('\n');
        s.append("                iopolicy=").append(m.policy().label()).append('\n');
        s.append("\\\n");
        for (Multipath.Path p : m.paths()) {
            s.append(" +- path").append(m.paths().indexOf(p)).append(' ').append(p.uri().transport()).append(' ')
                    .append(address(p.uri())).append(' ').append(p.state()).append(' ').append(p.anaState(nsid))
                    .append(" ios=").append(p.ios()).append(" failovers=").append(p.failovers()).append('\n');
        }
        return s.toString();
    }

    static String address(NvmeofUri u) {
        return "traddr=" + u.host() + ",trsvcid=" + u.port();
    }

    static ObjectNode json(Multipath m, int nsid) {
        ObjectNode root = new ObjectMapper().createObjectNode();
        ObjectNode sub = root.putArray("Subsystems").addObject();
        sub.put("NQN", m.subsystemNqn());
        sub.put("HostNQN", m.hostNqn());
        sub.put("IOPolicy", m.policy().label());
        sub.put("NSID", Integer.toUnsignedLong(nsid));
        ArrayNode paths = sub.putArray("Paths");
        for (Multipath.Path p : m.paths()) {
            ObjectNode o = paths.addObject();
            o.put("Name", "path" + m.paths().indexOf(p));
            o.put("Transport", p.uri().transport());
            o.put("Address", address(p.uri()));
            o.put("State", p.state());
            o.put("ANAState", p.anaState(nsid));
            o.put("IOs", p.ios());
            o.put("Failovers", p.failovers());
            if (p.problem() != null) {
                o.put("Problem", p.problem());
            }
        }
        return root;
    }
}
