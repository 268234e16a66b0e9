package io.nvmeof.daemon.rpc;

import io.nvmeof.daemon.Daemon;
import io.nvmeof.daemon.StateStore;
import java.io.PrintWriter;
import java.nio.file.Path;

/** The management API as a {@link Daemon.Service}: its JSON-RPC server on a Unix socket, over the daemon it serves. */
public final class ManagementApi {
    private ManagementApi() {
    }

    /**
     * Serves the management API on {@code socket} once the daemon is up, saying so on {@code out}
     * with where its changes are kept ({@code store}, null: in memory only).
     */
    public static Daemon.Service on(Path socket, PrintWriter out, StateStore store) {
        return daemon -> {
            RpcServer server = RpcServer.start(socket, new Management(daemon));
            out.println("  management API on " + socket + (store != null ? ", its changes kept in " + store.file()
                    : ", its changes kept in memory only"));
            return server;
        };
    }
}
