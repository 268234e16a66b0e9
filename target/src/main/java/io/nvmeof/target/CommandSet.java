package io.nvmeof.target;

import io.nvmeof.protocol.Status;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A command set (the Fabrics commands, the I/O controller's admin commands, the discovery
 * controller's, the NVM commands): one handler per opcode (per FCTYPE for Fabrics commands),
 * chosen once when a command is parsed, as the kernel target binds {@code req->execute} in
 * {@code nvmet_req_init}. A handler says what its command is, what it does to data (the
 * Commands Supported and Effects log is generated from that), how its fields are checked
 * against its namespace before any data moves, and how it runs: on the queue's event loop, or,
 * for a command that calls the namespace's backend, through {@link IoCommands#execute}, which
 * hands the backend call to the I/O executor when the backend blocks. An opcode without a
 * handler is Invalid Command Opcode.
 */
final class CommandSet {
    /** How a command runs, on its queue's event loop. */
    @FunctionalInterface
    interface Execute {
        void run(Request r, Controller c);
    }

    /** Checks an NVM command's fields against its namespace (null: the whole subsystem); null when it may run. */
    @FunctionalInterface
    interface Check {
        Status check(Request r, Namespace ns);
    }

    /** An NVM command's backend call; may block where the backend does. Returns the command's status. */
    @FunctionalInterface
    interface BackendCall {
        Status run(Request r) throws IOException;
    }

    /** Effects (Base 2.0, Figure 210): the command may change logical block content. */
    static final int LBCC = 1 << 1;

    /**
     * One command of a set.
     *
     * @param effects the effects bits of its Commands Supported and Effects entry, besides CSUPP
     * @param check   for a command on a namespace, its field checks; else null
     * @param backend for a command that reads, writes or flushes through the namespace's backend, that call;
     *                else null
     */
    record Handler(int opcode, String name, int effects, Execute execute, Check check, BackendCall backend) {
        /** A command that runs on the event loop and touches no namespace's data (admin, Fabrics). */
        Handler(int opcode, String name, Execute execute) {
            this(opcode, name, 0, execute, null, null);
        }

        /** Whether it calls the namespace's backend (which may block). */
        boolean callsBackend() {
            return backend != null;
        }
    }

    private final String name;
    private final Handler[] byOpcode = new Handler[256];
    private final List<Handler> handlers = new ArrayList<>();

    CommandSet(String name, Handler... hs) {
        this.name = name;
        for (Handler h : hs) {
            if (byOpcode[h.opcode()] != null) {
                throw new IllegalArgumentException(name + ": opcode " + Integer.toHexString(h.opcode()) + " twice");
            }
            byOpcode[h.opcode()] = h;
            handlers.add(h);
        }
    }

    /** The handler of {@code opcode} (0..255), or null: not in this set. */
    Handler handler(int opcode) {
        return byOpcode[opcode & 0xff];
    }

    List<Handler> handlers() {
        return Collections.unmodifiableList(handlers);
    }

    @Override
    public String toString() {
        return name + " command set";
    }
}
