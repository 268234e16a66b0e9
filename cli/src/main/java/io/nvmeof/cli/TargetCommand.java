package io.nvmeof.cli;

import io.nvmeof.target.Namespace;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.Target;
import io.nvmeof.target.backend.Backend;
import io.nvmeof.target.backend.BackendSpec;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code nvmeof target}: serve namespaces until SIGINT/SIGTERM. */
@Command(name = "target", mixinStandardHelpOptions = true,
        description = "Serve one subsystem over NVMe/TCP until interrupted (SIGINT or SIGTERM).")
final class TargetCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--listen", required = true, paramLabel = "tcp://ADDR:PORT",
            description = "Address to serve on, e.g. tcp://127.0.0.1:4420 (port 0 picks a free one). Repeatable.")
    List<String> listen;

    @Option(names = "--subsystem", required = true, paramLabel = "NQN", description = "Subsystem NQN.")
    String nqn;

    @Option(names = "--namespace", required = true, paramLabel = "SPEC",
            description = "ram:SIZE or file:PATH[,size=SIZE][,bs=512|4096][,ro]; NSIDs count from 1. Repeatable.")
    List<String> namespaces;

    @Option(names = "--allow-host", paramLabel = "NQN", description = "Allow only these host NQNs (default: any). Repeatable.")
    List<String> allowHosts = new ArrayList<>();

    @Option(names = "--serial", description = "Serial number (default: derived from the NQN).")
    String serial;

    @Option(names = "--model", description = "Model number (default: ${DEFAULT-VALUE}).")
    String model = "nvmeof-java";

    static InetSocketAddress parseListen(String s) {
        URI u;
        try {
            u = new URI(s);
        } catch (Exception e) {
            throw new IllegalArgumentException("--listen '" + s + "' is not tcp://ADDR:PORT");
        }
        if (!"tcp".equals(u.getScheme()) || u.getHost() == null || u.getPort() < 0) {
            throw new IllegalArgumentException("--listen '" + s + "' is not tcp://ADDR:PORT");
        }
        return new InetSocketAddress(u.getHost(), u.getPort());
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        List<InetSocketAddress> addresses = new ArrayList<>();
        for (String l : listen) {
            addresses.add(parseListen(l));
        }
        String sn = serial != null ? serial : String.format("%016x", nqn.hashCode() & 0xffffffffL).substring(0, 16);
        Target target = new Target();
        CountDownLatch stopped = new CountDownLatch(1);
        try {
            Subsystem s = new Subsystem(io.nvmeof.protocol.Nqn.require(nqn), sn, model, "0.1");
            for (String h : allowHosts) {
                s.allowHost(h);
            }
            target.addSubsystem(s);
            int nsid = 1;
            for (String spec : namespaces) {
                Backend b = BackendSpec.open(spec);
                s.addNamespace(new Namespace(nqn, nsid++, b, BackendSpec.readOnly(spec), null));
            }
            for (InetSocketAddress a : addresses) {
                InetSocketAddress bound = target.listenTcp(a);
                out.println("nvmeof target listening on tcp://" + bound.getHostString() + ":" + bound.getPort()
                        + " subsystem " + nqn);
            }
            for (Namespace ns : s.namespaces().values()) {
                out.println("  namespace " + ns.nsid() + ": " + ns.backend().describe() + ", " + ns.backend().size()
                        + " bytes, " + ns.blockSize() + "-byte blocks" + (ns.readOnly() ? ", read-only" : ""));
            }
            out.flush();
            // SIGINT and SIGTERM end the wait; the target then closes in order and the
            // process exits 0, which is what systemd expects of a clean stop.
            Signals.onTermination(stopped::countDown);
            stopped.await();
            out.println("nvmeof target stopping");
            out.flush();
        } finally {
            target.close();
        }
        out.println("nvmeof target stopped");
        out.flush();
        return 0;
    }
}
