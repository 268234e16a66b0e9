package io.nvmeof.cli;

import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Multipath;
import io.nvmeof.initiator.NvmeofUri;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/**
 * What the commands that work on one remote controller share: the URI, the host's connection
 * options, and one connection for the command's run. Options are checked before connecting.
 */
abstract class ConnectedCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** The target (a URI; bench also takes a local path): given by the subclass's positional parameter. */
    String uri;

    /** A command whose one positional parameter, required, is the target's URI. */
    abstract static class WithUri extends ConnectedCommand {
        @Parameters(index = "0", paramLabel = "URI", description = ConnectionOptions.URI_HELP)
        void uri(String given) {
            uri = given;
        }
    }

    @Mixin
    ConnectionOptions connection;

    @Override
    public final Integer call() throws Exception {
        checkOptions();
        Integer done = runWithoutConnection(spec.commandLine().getOut());
        if (done != null) {
            return done;
        }
        List<NvmeofUri> paths = Devices.parseAll(uri);
        ConnectOptions options = options(connection.toOptions());
        try {
            if (paths.size() > 1 || multipathAlways()) {
                try (Multipath m = Multipath.connect(paths, options)) {
                    run(m, spec.commandLine().getOut());
                }
                return 0;
            }
            try (Controller c = Controller.connect(paths.get(0), options)) {
                run(c, spec.commandLine().getOut());
            }
            return 0;
        } finally {
            disconnected();
        }
    }

    /** After the connection is closed (or failed to open): what {@link #options} set up for it ends. */
    void disconnected() {
    }

    /** Whether the command works on a multipath set even for one address (list-subsys). */
    boolean multipathAlways() {
        return false;
    }

    /**
     * Runs the command through several paths to one subsystem. By default on the first live
     * path's controller; the commands that move data ({@code read}, {@code write}, {@code bench})
     * use the multipath device.
     */
    void run(Multipath m, PrintWriter out) throws Exception {
        for (Multipath.Path p : m.paths()) {
            if (p.state().equals("live")) {
                run(p.controller(), out);
                return;
            }
        }
        throw new IOException("no live path to " + m.subsystemNqn());
    }

    /** Rejects bad options (IllegalArgumentException naming the option) before any connection is made. */
    void checkOptions() {
    }

    /** Runs a command that needs no connection for this target (a local path), or returns null. */
    Integer runWithoutConnection(PrintWriter out) throws Exception {
        return null;
    }

    /** The connection options this command needs, from the user's. */
    ConnectOptions options(ConnectOptions fromUser) {
        return fromUser;
    }

    abstract void run(Controller c, PrintWriter out) throws Exception;
}
