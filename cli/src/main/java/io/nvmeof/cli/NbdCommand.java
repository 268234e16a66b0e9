package io.nvmeof.cli;

import io.netty.channel.EventLoopGroup;
import io.nvmeof.daemon.Signals;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Multipath;
import io.nvmeof.nbd.NbdServer;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code nvmeof nbd URI --socket PATH}: a remote namespace as an NBD export, until SIGINT or SIGTERM. */
@Command(name = "nbd", mixinStandardHelpOptions = true,
        description = {"Serve the namespace the URI names as an NBD export, for NBD clients (qemu, nbdcopy, nbdfuse,"
                + " fio's nbd engine, the kernel's nbd-client), until SIGINT or SIGTERM. The connection options are"
                + " those of every command: several paths, TLS, DH-HMAC-CHAP, timeouts; a lost path is the initiator's"
                + " to recover, unseen by the NBD client.",
                "NBD has no authentication here: the Unix socket is made for its owner alone (--group widens it"
                        + " to the group), and --listen takes a loopback address unless --allow-remote."})
final class NbdCommand extends ConnectedCommand.WithUri {
    @Option(names = "--socket", paramLabel = "PATH", description = "A Unix socket to create (it must not exist).")
    Path socket;

    @Option(names = "--group", description = "Make the Unix socket readable and writable by its group too (mode 0660).")
    boolean group;

    @Option(names = "--listen", paramLabel = "HOST:PORT", description = "A TCP address to listen on (port 0: any).")
    String listen;

    @Option(names = "--allow-remote", description = "Take a --listen address other than loopback (with a warning: any"
            + " client that reaches it uses the volume).")
    boolean allowRemote;

    @Option(names = "--export-name", paramLabel = "NAME", defaultValue = "", description = "The export's name (default:"
            + " empty, the export a client gets without naming one).")
    String exportName;

    @Option(names = "--read-only", description = "Refuse writes.")
    boolean readOnly;

    private InetSocketAddress tcp;
    private EventLoopGroup loops;

    /**
     * The NBD connections and the host's queues on the same loops: a request reaches the fabric,
     * and its completion the NBD client, without waking another thread (fio's nbd engine, 4 KiB
     * randwrite QD32 on two cores: 57,466 IOPS on loops of their own, 78,907 shared;
     * bench/nbd-vs-nbdkit.sh). The loops wait as --busy-poll says, adaptive by default (QD1:
     * 22,150 IOPS adaptive, 18,436 sleeping).
     */
    @Override
    ConnectOptions options(ConnectOptions fromUser) {
        loops = fromUser.newEventLoops("nvmeof-nbd");
        return fromUser.eventLoops(loops);
    }

    @Override
    void disconnected() {
        if (loops != null) {
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }

    @Override
    void checkOptions() {
        if ((socket == null) == (listen == null)) {
            throw new IllegalArgumentException("give one of --socket PATH or --listen HOST:PORT");
        }
        if (listen != null) {
            int colon = listen.lastIndexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException("--listen " + listen + ": HOST:PORT");
            }
            String host = listen.substring(0, colon).replace("[", "").replace("]", "");
            int port;
            try {
                port = Integer.parseInt(listen.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--listen " + listen + ": the port is not a number");
            }
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("--listen " + listen + ": port 0..65535");
            }
            tcp = new InetSocketAddress(host, port);
        }
        if (group && socket == null) {
            throw new IllegalArgumentException("--group is for --socket");
        }
        if (allowRemote && listen == null) {
            throw new IllegalArgumentException("--allow-remote is for --listen");
        }
    }

    @Override
    void run(Controller c, PrintWriter out) throws Exception {
        // one controller: an NVMe Flush covers the namespace, whichever connection wrote
        serve(Devices.open(c), c.uri().subsystemNqn(), true, out);
    }

    @Override
    void run(Multipath m, PrintWriter out) throws Exception {
        // paths may end in gateways with caches of their own: a Flush through one does not cover the others
        serve(Devices.open(m), m.subsystemNqn(), m.paths().size() == 1, out);
    }

    private void serve(BlockDevice dev, String nqn, boolean multiConn, PrintWriter out) throws Exception {
        NbdServer.Builder b = NbdServer.builder(dev).exportName(exportName).readOnly(readOnly).multiConn(multiConn)
                .description(nqn + " namespace " + dev.nsid())
                .eventLoops(loops);
        if (socket != null) {
            b.unixSocket(socket, group);
        } else {
            b.tcp(tcp, allowRemote);
        }
        try (NbdServer server = b.start()) {
            Signals.onTermination(server::close);
            out.println("nbd: serving " + nqn + " namespace " + dev.nsid() + " (" + dev.size() + " bytes, "
                    + dev.blockSize() + "-byte blocks" + (readOnly || dev.readOnly() ? ", read-only" : "") + ") at "
                    + server.uri());
            out.flush();
            server.awaitClose();
            out.println("nbd: stopped after " + server.connections() + " connections");
            out.flush();
        }
    }
}
