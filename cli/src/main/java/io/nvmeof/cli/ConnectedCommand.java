package io.nvmeof.cli;

import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import java.io.PrintWriter;
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

    @Parameters(index = "0", paramLabel = "URI", description = ConnectionOptions.URI_HELP)
    String uri;

    @Mixin
    ConnectionOptions connection;

    @Override
    public final Integer call() throws Exception {
        checkOptions();
        Integer done = runWithoutConnection(spec.commandLine().getOut());
        if (done != null) {
            return done;
        }
        try (Controller c = Controller.connect(Devices.parse(uri), options(connection.toOptions()))) {
            run(c, spec.commandLine().getOut());
        }
        return 0;
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
